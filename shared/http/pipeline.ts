/**
 * The function pipeline every HTTP family shares, readable in one place, in order:
 *
 *   [the family's middlewares, e.g. metering] → requestContext → bodyLimit → routing → bodyParser
 *   → authentication → rateLimit → operation
 *   (errors from any step → errorHandler; the response → serializer)
 *
 * Each step is a middleware of its own file (shared/http/middleware/, rate limits in
 * rate-limit.ts), a factory returning `{ before, after, onError }`. They share one state per
 * request (shared/http/middleware/state.ts), which the operation step, middy's handler, finds
 * through its event.
 *
 * Every answered request is logged once and counted in CloudWatch metrics (`requestContext`); the
 * families add usage metering (shared/usage/middleware.ts), so the pipeline names no domain.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { CONTROLLER_OPERATIONS } from '../auth/principal.ts';
import { ApiError, forbidden } from '../errors.ts';
import type { Family } from '../model/collections.ts';
import { withIdempotencyKey } from './idempotency.ts';
import { withCapacityScope } from '../db/capacity.ts';
import { rateLimit } from './rate-limit.ts';
import type { ApiRequest, ApiResponse, BaseDeps, Operation } from './operation-contract.ts';
import { authentication } from './middleware/authentication.ts';
import { bodyLimit } from './middleware/body-limit.ts';
import { bodyParser } from './middleware/body-parser.ts';
import { errorHandler } from './middleware/error-handler.ts';
import { requestContext } from './middleware/request-context.ts';
import { routing } from './middleware/routing.ts';
import { corsHeaders, serialize } from './middleware/serializer.ts';
import { requiredState, stateOf, type HttpEvent, type HttpResult, type PipelineMiddleware, type PipelineOf, type PipelineRequest } from './middleware/state.ts';

type Mw = MiddlewareObj<HttpEvent, HttpResult>;

export interface HandlerSpec<D extends BaseDeps> {
  readonly family: Family;
  /** Operation name (from the route table) → implementation. */
  readonly operations: Readonly<Record<string, Operation<D>>>;
  /** Dependencies, created once per execution environment on first use. */
  readonly deps: () => D;
  /**
   * The login outcome of a request for the `LoginAttempts`/`LoginFailures` metrics (token
   * family): undefined when the request was not a login attempt.
   */
  readonly loginOutcome?: (req: ApiRequest, status: number, errorCode: string | undefined) => { failed: boolean } | undefined;
  /**
   * Middlewares the family adds before the pipeline's own steps (outermost, in this order), each
   * made once with the family and its dependencies: their `after` and `onError` run once the
   * request is answered and logged. Usage metering is one (shared/usage/middleware.ts).
   */
  readonly middlewares?: readonly ((pipeline: PipelineOf<D>) => PipelineMiddleware)[];
}

/** Builds a family's Lambda handler from its operations. */
export function makeHandler<D extends BaseDeps>(spec: HandlerSpec<D>) {
  let deps: D | undefined;
  const getDeps = (): D => (deps ??= spec.deps());
  const pipeline: PipelineOf<D> = { family: spec.family, deps: getDeps };
  const cors = (event: HttpEvent) => corsHeaders(getDeps().config.corsOrigins, event.headers?.origin);

  // The operation is the middy handler; it finds the pipeline state through its event.
  async function runOperationStep(event: HttpEvent): Promise<HttpResult> {
    const s = requiredState(event);
    if (!s.req) throw new Error('pipeline state missing');
    const op = spec.operations[s.operation!];
    if (!op) throw new ApiError(501, 'NotImplemented', `${s.operation} is not implemented yet.`);
    // A controller's user calls its credential download and access decisions, nothing else.
    if (s.req.principal?.role === 'Controller' && !CONTROLLER_OPERATIONS.has(s.operation!)) {
      await s.status;
      throw forbidden('Your role (Controller) allows credential downloads and access decisions only.');
    }
    let res: ApiResponse;
    try {
      const answer = op(s.req, getDeps());
      s.sendReads?.();
      res = await answer;
    } catch (err) {
      s.sendReads?.();
      // The caller's status decides first: a refused caller learns nothing from the operation's error.
      await s.status;
      throw err;
    }
    await s.status;
    if (res.tenant) s.tenant = res.tenant;
    return serialize(res, cors(event));
  }

  // A write with an `Idempotency-Key` runs its operation once and replays the answer to retries
  // (shared/http/idempotency.ts); a call without the header runs as above.
  const runOperation = withIdempotencyKey(runOperationStep, {
    deps: getDeps,
    request: (event) => stateOf(event)?.req,
    verdict: (event) => {
      const s = stateOf(event);
      s?.sendReads?.();
      return s?.status;
    },
    cors,
  });

  const handler = middy<HttpEvent, HttpResult>();
  for (const make of spec.middlewares ?? []) handler.use(make(pipeline) as Mw);
  handler
    .use(requestContext({ family: spec.family, deps: getDeps, loginOutcome: spec.loginOutcome }) as Mw)
    .use(errorHandler(spec.family, getDeps) as Mw)
    .use(bodyLimit(() => getDeps().config) as Mw)
    .use(routing(spec.family) as Mw)
    .use(bodyParser() as Mw)
    .use(authentication(getDeps) as Mw)
    .use(rateLimit(() => getDeps().config, (request: PipelineRequest) => requiredState(request.event).req?.principal) as Mw)
    .handler(runOperation);

  // Each invocation counts the DynamoDB capacity of its own calls (requests may run at once locally).
  const measured = (event: HttpEvent, context: Context): Promise<HttpResult> => withCapacityScope(() => handler(event, context));
  return Object.assign(measured, { deps: getDeps });
}
