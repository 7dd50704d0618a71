/**
 * Answers every error: an ApiError as itself (the spec's error body), a store that cannot keep up
 * as 503, anything else as a generic 500 whose detail only the log holds.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Config } from '../../config.ts';
import { ApiError, ConditionFailed, StoreUnavailable, internalError, serviceUnavailable } from '../../errors.ts';
import type { Family } from '../../model/collections.ts';
import { sourceMappedStack } from '../../source-mapped-stack.ts';
import { corsHeaders, errorResponse, serialize } from './serializer.ts';
import { stateOf, type PipelineMiddleware, type PipelineRequest } from './state.ts';

/** An error as logged: name, message, its stack mapped to the TypeScript (shared/source-mapped-stack.ts), and its cause. */
function describe(err: unknown): Record<string, unknown> {
  return err instanceof Error
    ? { name: err.name, message: err.message, stack: sourceMappedStack(err.stack), cause: err.cause ? describe(err.cause) : undefined }
    : { value: String(err) };
}

export function errorHandler(family: Family, deps: () => { readonly config: Pick<Config, 'corsOrigins'>; readonly logger: Logger }): PipelineMiddleware {
  return {
    onError: async function answerError(request: PipelineRequest) {
      const err = request.error;
      const s = stateOf(request.event);
      const cors = corsHeaders(deps().config.corsOrigins, request.event.headers?.origin);
      if (err instanceof ApiError) {
        if (s) s.errorCode = err.code;
        request.response = serialize(errorResponse(err), cors);
        return;
      }
      const { logger } = deps();
      if (err instanceof StoreUnavailable) {
        logger.warn('store unavailable', { requestId: s?.requestId, family, cause: describe(err.cause) });
        const e = serviceUnavailable(1);
        request.response = serialize(errorResponse(e), cors);
        return;
      }
      logger.error('unexpected error', {
        requestId: s?.requestId,
        family,
        operation: s?.operation,
        error: describe(err),
        ...(err instanceof ConditionFailed ? { reasons: err.reasons } : {}),
      });
      request.response = serialize(errorResponse(internalError()), cors);
    },
  };
}
