/**
 * The first step: starts the request's state (its id and clock) and, once it is answered, logs it
 * once (message `request`: family, operation, status, ms, instanceKey, consumedCapacity) and counts
 * it in CloudWatch metrics (shared/metrics.ts, in Lambda).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { LogLevelThreshold } from '@aws-lambda-powertools/logger';
import type { Config } from '../../config.ts';
import { consumedCapacity } from '../../db/capacity.ts';
import { createRequestMetrics, type RequestMetrics } from '../../metrics.ts';
import type { Family } from '../../model/collections.ts';
import type { ApiRequest } from '../operation-contract.ts';
import { startState, stateOf, tenantOf, type PipelineMiddleware, type PipelineRequest, type State } from './state.ts';

export interface RequestContextOptions {
  readonly family: Family;
  readonly deps: () => { readonly config: Config; readonly logger: Logger };
  /** See {@link HandlerSpec.loginOutcome}. */
  readonly loginOutcome?: (req: ApiRequest, status: number, errorCode: string | undefined) => { failed: boolean } | undefined;
}

export function requestContext({ family, deps, loginOutcome }: RequestContextOptions): PipelineMiddleware {
  let metrics: RequestMetrics | undefined;
  // Created with the first request, so that Powertools Metrics (loaded on first use) loads while
  // that request runs.
  const requestMetrics = (): RequestMetrics => (metrics ??= createRequestMetrics(deps().config, family));

  /** Logs and counts an answered request; the promise is the metrics write, when one is waiting. */
  function logRequest(request: PipelineRequest, status: number): Promise<void> | undefined {
    const s = stateOf(request.event);
    const d = deps();
    const ms = s ? Math.round((performance.now() - s.started) * 10) / 10 : 0;
    const instanceKey = tenantOf(s);
    const capacity = consumedCapacity() ?? 0;
    // Never the body, the query string or headers: they can carry passwords, codes and tokens.
    // (The line is built only when the level prints it: the logger has no buffering configured.)
    // Request id and family are the line's own: the keys appended at the start are the logger's,
    // which requests overlapping in one process (the local runtime) share and remove.
    if (d.logger.level <= LogLevelThreshold.INFO) {
      d.logger.info('request', {
        requestId: s?.requestId,
        family,
        method: request.event.requestContext?.http?.method,
        route: s?.req?.route.path ?? request.event.routeKey,
        operation: s?.operation,
        status,
        ms,
        instanceKey,
        consumedCapacity: capacity,
      });
    }
    d.logger.removeKeys(['requestId', 'family']);
    // Observing a request never changes its answer.
    try {
      const operation = s?.operation ?? 'notFound';
      const login = s?.req && loginOutcome ? loginOutcome(s.req, status, s.errorCode) : undefined;
      const recorded = requestMetrics().record({ operation, status, ms, consumedCapacity: capacity, ...(login ? { login } : {}) });
      return recorded?.catch((err: unknown) => d.logger.warn('metrics failed', { error: (err as Error).message }));
    } catch (err) {
      d.logger.warn('metrics failed', { error: (err as Error).message });
      return undefined;
    }
  }

  return {
    before: function startRequest(request: PipelineRequest) {
      const requestId = request.event.requestContext?.requestId ?? request.context?.awsRequestId ?? crypto.randomUUID();
      const st: State = { started: performance.now(), requestId };
      startState(request.event, st);
      const { logger } = deps();
      logger.appendKeys({ requestId, family });
      requestMetrics();
    },
    after: function logAnswer(request: PipelineRequest) {
      return logRequest(request, request.response?.statusCode ?? 0);
    },
    onError: function logErrorAnswer(request: PipelineRequest) {
      return request.response ? logRequest(request, request.response.statusCode ?? 0) : undefined;
    },
  };
}
