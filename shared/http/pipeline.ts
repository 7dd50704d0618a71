/**
 * The function pipeline every HTTP family shares, readable in one place, in order:
 *
 *   requestContext → bodyLimit → router → bodyParser → authentication → rateLimit → operation
 *   (errors from any step → errorHandler; the response → serializer)
 *
 * Each middleware is a factory returning `{ before, after, onError }`; state lives under
 * `request.internal.gatehouse`.
 *
 * Every answered request is logged once (message `request`: family, operation, status, ms,
 * instanceKey, consumedCapacity), counted in CloudWatch metrics (`shared/metrics.ts`, in Lambda)
 * and metered for its tenant's usage (`shared/usage/recorder.ts`). The tenant (`instanceKey`) is
 * the caller's instance, from its token, whatever folder the path names: the instance that
 * signed in is the one that pays, and it needs no read to know. A call without a token is
 * metered only when its operation names the tenant (`POST /token`: the instance logged into).
 */
import middy, { type MiddlewareObj } from '@middy/core';
import { LogLevelThreshold } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ApiError, ConditionFailed, StoreUnavailable, internalError, serviceUnavailable, badRequest, notFound } from '../errors.ts';
import type { Family } from '../model/collections.ts';
import { parseJson, stringifyJson } from '../json.ts';
import { withIdempotencyKey } from './idempotency.ts';
import { consumedCapacity, withCapacityScope } from '../db/capacity.ts';
import { gatherReads } from '../db/item-reads.ts';
import { createRequestMetrics, type RequestMetrics } from '../metrics.ts';
import { requestCounter } from '../usage/meter.ts';
import { createUsageRecorder, type UsageRecorder } from '../usage/recorder.ts';
import { rateLimit } from './rate-limit.ts';
import { Router, matchOf } from './router.ts';
import type { ApiRequest, ApiResponse, BaseDeps, Operation } from './types.ts';
import { onFirstUse } from '../first-use.ts';

type HttpEvent = APIGatewayProxyEventV2;
type HttpResult = APIGatewayProxyStructuredResultV2;
type Mw = MiddlewareObj<HttpEvent, HttpResult>;

interface State {
  started: number;
  requestId: string;
  req?: ApiRequest;
  operation?: string;
  /** The error code answered, when an ApiError was. */
  errorCode?: string;
  /** The tenant an operation named for a call without a token ({@link ApiResponse.tenant}). */
  tenant?: string;
  /** The caller's status check, still running beside a read-only operation (see `authentication`). */
  status?: Promise<void>;
  /** That check accepted the caller (its principal is then the caller's, not only its token's claims). */
  accepted?: boolean;
  /** Sends the reads gathered since the caller's token was checked (see `authentication`). */
  sendReads?: () => void;
}

interface MiddyRequest {
  event: HttpEvent;
  context: Context;
  response: HttpResult | undefined;
  error: unknown;
  internal: { gatehouse?: State } & Record<string, unknown>;
}

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
}

const router = new Router();
const states = new WeakMap<HttpEvent, State>();

/** CORS is closed unless GATEHOUSE_CORS_ORIGINS names the origin (or `*`). */
/**
 * The answer headers a browser page of an allowed origin may read beyond the CORS-safelisted ones:
 * where a created object is, when to retry, and the rate limits left.
 */
const EXPOSED_HEADERS = 'Location, Retry-After, RateLimit, RateLimit-Policy';

function corsHeaders(allowed: readonly string[], origin: string | undefined): Record<string, string> {
  if (!origin || allowed.length === 0) return {};
  if (allowed.includes('*') || allowed.includes(origin)) return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'Origin' };
  return {};
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

function state(request: MiddyRequest): State {
  const s = request.internal.gatehouse;
  if (!s) throw new Error('pipeline state missing');
  return s;
}

function parseQuery(raw: string | undefined): Record<string, string[]> {
  // Client-chosen names: no prototype, so `?toString=1` or `?__proto__=1` is just a parameter.
  const query: Record<string, string[]> = Object.create(null);
  if (!raw) return query;
  for (const [k, v] of new URLSearchParams(raw)) (query[k] ??= []).push(v);
  return query;
}

function lowerHeaders(h: HttpEvent['headers'] | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (!h) return out;
  for (const k in h) {
    const v = h[k];
    if (v !== undefined && Object.hasOwn(h, k)) out[k.toLowerCase()] = v;
  }
  return out;
}

function bodyText(event: HttpEvent): string | undefined {
  if (event.body === undefined || event.body === null) return undefined;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** Renders an operation's result or an error as an API Gateway v2 result. */
export function serialize(res: ApiResponse, corsHeaders: Record<string, string> = {}): HttpResult {
  const headers: Record<string, string> = { ...corsHeaders, ...(res.headers ?? {}) };
  if (res.raw) return { statusCode: res.status, headers, body: res.raw.text, isBase64Encoded: res.raw.base64 ?? false };
  if (res.status === 204 || res.body === undefined) return { statusCode: res.status, headers, body: '' };
  return {
    statusCode: res.status,
    headers: { ...JSON_HEADERS, ...headers },
    body: stringifyJson(res.body),
  };
}

function errorResponse(err: ApiError): ApiResponse {
  return { status: err.status, body: err.toBody(), headers: err.headers };
}

/** Builds a family's Lambda handler from its operations. */
export function makeHandler<D extends BaseDeps>(spec: HandlerSpec<D>) {
  let deps: D | undefined;
  const getDeps = (): D => (deps ??= spec.deps());
  let metrics: RequestMetrics | undefined;
  // Created with the first request, so that Powertools Metrics (loaded on first use) loads while
  // that request runs.
  const requestMetrics = (): RequestMetrics => (metrics ??= createRequestMetrics(getDeps().config, spec.family));
  let usage: UsageRecorder | undefined;
  const requestCount = { [requestCounter(spec.family)]: 1 };

  // The middlewares are plain functions where they have nothing to wait for: middy awaits each
  // anyway, and an async function costs a promise per request for nothing.
  const requestContext = () => ({
    before: (request: MiddyRequest) => {
      const requestId = request.event.requestContext?.requestId ?? request.context?.awsRequestId ?? crypto.randomUUID();
      const st: State = { started: performance.now(), requestId };
      request.internal.gatehouse = st;
      states.set(request.event, st);
      const { logger } = getDeps();
      logger.appendKeys({ requestId, family: spec.family });
      requestMetrics();
    },
    after: (request: MiddyRequest) => logRequest(request, request.response?.statusCode ?? 0),
    onError: (request: MiddyRequest) => (request.response ? logRequest(request, request.response.statusCode ?? 0) : undefined),
  });

  /** Logs, counts and meters an answered request; the promise is the usage flush, when one is due. */
  function logRequest(request: MiddyRequest, status: number): Promise<void> | undefined {
    const s = request.internal.gatehouse;
    const d = getDeps();
    const ms = s ? Math.round((performance.now() - s.started) * 10) / 10 : 0;
    // The caller's instance once its token and status were accepted: a call run on a token's
    // claims while they were checked (a new environment's read) and then refused is no tenant's.
    const principal = s?.req?.principal && (s.status === undefined || s.accepted) ? s.req.principal : undefined;
    const instanceKey = principal?.instanceKey ?? s?.tenant;
    const capacity = consumedCapacity() ?? 0;
    // Never the body, the query string or headers: they can carry passwords, codes and tokens.
    // (The line is built only when the level prints it: the logger has no buffering configured.)
    // Request id and family are the line's own: the keys appended at the start are the logger's,
    // which requests overlapping in one process (the local runtime) share and remove.
    if (d.logger.level <= LogLevelThreshold.INFO) {
      d.logger.info('request', {
        requestId: s?.requestId,
        family: spec.family,
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
      const login = s?.req && spec.loginOutcome ? spec.loginOutcome(s.req, status, s.errorCode) : undefined;
      const recorded = requestMetrics().record({ operation, status, ms, consumedCapacity: capacity, ...(login ? { login } : {}) });
      usage ??= createUsageRecorder(d);
      if (instanceKey) usage.add(instanceKey, requestCount);
      const flushed = usage.isDue() ? usage.flushIfDue() : undefined;
      if (!recorded && !flushed) return undefined;
      return Promise.all([recorded, flushed]).then(
        () => undefined,
        (err: unknown) => d.logger.warn('metrics or usage metering failed', { error: (err as Error).message }),
      );
    } catch (err) {
      d.logger.warn('metrics or usage metering failed', { error: (err as Error).message });
      return undefined;
    }
  }

  const bodyLimit = () => ({
    before: (request: MiddyRequest) => {
      const { config } = getDeps();
      const body = request.event.body;
      if (!body) return;
      const bytes = request.event.isBase64Encoded ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body);
      if (bytes > config.maxBodyBytes) {
        throw new ApiError(413, 'PayloadTooLarge', `The request body is larger than ${config.maxBodyBytes} bytes.`);
      }
    },
  });

  const routing = () => ({
    before: (request: MiddyRequest) => {
      const s = state(request);
      const event = request.event;
      const method = event.requestContext?.http?.method ?? 'GET';
      const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
      // The local runtime has matched this very event already (API Gateway's routing): reuse it.
      const match = matchOf(event, method, path) ?? router.match(method, path);
      if (!match || match.route.family !== spec.family) {
        // Only `$default` and misrouted calls land here: answer as an unknown route.
        throw notFound(`No resource at ${method} ${path}.`);
      }
      s.operation = match.route.operation;
      const headers = lowerHeaders(event.headers);
      s.req = {
        requestId: s.requestId,
        method,
        path,
        route: match.route,
        params: match.params,
        query: parseQuery(event.rawQueryString),
        headers,
        body: undefined,
        rawBody: undefined,
        principal: undefined,
        sourceIp: event.requestContext?.http?.sourceIp,
      };
    },
  });

  const bodyParser = () => ({
    before: (request: MiddyRequest) => {
      const s = state(request);
      const req = s.req!;
      const text = bodyText(request.event);
      if (text === undefined || text.length === 0) return;
      const type = (req.headers['content-type'] ?? '').toLowerCase();
      if (type.startsWith('application/x-www-form-urlencoded') || (req.route.form && !text.trimStart().startsWith('{'))) {
        s.req = { ...req, rawBody: text };
        return;
      }
      // JSON is the API's only body format; clients send it with or without a content type.
      // GET bodies are kept: two calls of the spec carry their input in a GET body.
      if (text.trim().length === 0) return;
      try {
        s.req = { ...req, body: parseJson(text), rawBody: text };
      } catch (err) {
        throw badRequest('InvalidJson', `The request body is not valid JSON: ${(err as Error).message}`);
      }
    },
  });

  // A GET without a body reads only, as do the routes marked `reads` (search and lastevent, which
  // carry their query in a body): the operation may run while the caller's status check (a
  // read of the user and its instances, cached a while per environment) is still in flight; the
  // answer waits for both, and a refused status answers 401 whatever the operation found. So do
  // the routes marked `readsFirst` (a publish), whose operation waits for the verdict before its
  // later reads and its write. Everything else may write (a GET with a body is the spec's event
  // type update), so it starts only once the status is known.
  const authentication = () => ({
    before: async (request: MiddyRequest) => {
      const s = state(request);
      if (!s.req!.route.auth) return;
      const { authenticator } = getDeps();
      const authorization = s.req!.headers.authorization;
      const readOnly = s.req!.route.reads === true || (s.req!.method === 'GET' && s.req!.rawBody === undefined);
      // A call that writes only after its first reads (Route.readsFirst) runs beside the checks
      // too: it waits for the verdict itself before anything more.
      if ((readOnly || s.req!.route.readsFirst === true) && authenticator.authenticateDeferred) {
        // Where invocations run one at a time, the reads of the caller's keys and status (a new
        // environment's) and the operation's first reads by key go out as one request, when the
        // operation has started (runOperation): one connection, not two, on a cold start's GET.
        if (getDeps().config.invocationsOneAtATime) s.sendReads = gatherReads();
        const { principal, status } = await authenticator.authenticateDeferred(authorization).catch((err: unknown) => {
          s.sendReads?.();
          throw err;
        });
        // Awaited by runOperation (until then a refusal must not count as unhandled); this
        // callback comes first, so `accepted` is set by the time the answer is logged.
        status.then(
          () => (s.accepted = true),
          () => {},
        );
        s.status = status;
        s.req = { ...s.req!, principal, verdict: status.then(() => true, () => false) };
        return;
      }
      const principal = await authenticator.authenticate(authorization);
      s.req = { ...s.req!, principal };
    },
  });

  const errorHandler = () => ({
    onError: async (request: MiddyRequest) => {
      const err = request.error;
      const cors = corsFor(request);
      if (err instanceof ApiError) {
        if (request.internal.gatehouse) request.internal.gatehouse.errorCode = err.code;
        request.response = serialize(errorResponse(err), cors);
        return;
      }
      const { logger } = getDeps();
      const describe = describer(await stackMapping());
      if (err instanceof StoreUnavailable) {
        logger.warn('store unavailable', { requestId: request.internal.gatehouse?.requestId, family: spec.family, cause: describe(err.cause) });
        const e = serviceUnavailable(1);
        request.response = serialize(errorResponse(e), cors);
        return;
      }
      logger.error('unexpected error', {
        requestId: request.internal.gatehouse?.requestId,
        family: spec.family,
        operation: request.internal.gatehouse?.operation,
        error: describe(err),
        ...(err instanceof ConditionFailed ? { reasons: err.reasons } : {}),
      });
      request.response = serialize(errorResponse(internalError()), cors);
    },
  });

  function corsFor(request: MiddyRequest): Record<string, string> {
    return corsHeaders(getDeps().config.corsOrigins, request.event.headers?.origin);
  }

  // The operation is the middy handler; it finds the pipeline state through its event.
  const runOperationStep = async (event: HttpEvent): Promise<HttpResult> => {
    const s = states.get(event);
    if (!s?.req) throw new Error('pipeline state missing');
    const op = spec.operations[s.operation!];
    if (!op) throw new ApiError(501, 'NotImplemented', `${s.operation} is not implemented yet.`);
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
    const origin = s.req.headers.origin;
    return serialize(res, corsHeaders(getDeps().config.corsOrigins, origin));
  };

  // A write with an `Idempotency-Key` runs its operation once and replays the answer to retries
  // (shared/http/idempotency.ts); a call without the header runs as above.
  const runOperation = withIdempotencyKey(runOperationStep, {
    deps: getDeps,
    request: (event) => states.get(event)?.req,
    verdict: (event) => {
      const s = states.get(event);
      s?.sendReads?.();
      return s?.status;
    },
    cors: (event) => corsHeaders(getDeps().config.corsOrigins, event.headers?.origin),
  });

  const handler = middy<HttpEvent, HttpResult>()
    .use(requestContext() as Mw)
    .use(errorHandler() as Mw)
    .use(bodyLimit() as Mw)
    .use(routing() as Mw)
    .use(bodyParser() as Mw)
    .use(authentication() as Mw)
    .use(rateLimit(() => getDeps().config, (request: MiddyRequest) => state(request).req?.principal) as Mw)
    .handler(runOperation);

  // Each invocation counts the DynamoDB capacity of its own calls (requests may run at once locally).
  const measured = (event: HttpEvent, context: Context): Promise<HttpResult> => withCapacityScope(() => handler(event, context));
  return Object.assign(measured, { deps: getDeps });
}

type StackMapping = typeof import('../stack.ts');
/** The stack mapping (shared/stack.ts), loaded with the first unexpected error logged: no cold start that answers needs it. */
const stackMapping = onFirstUse(() => import('../stack.ts'));

/** An error as logged: name, message, its stack mapped to the TypeScript, and its cause. */
function describer({ sourceMappedStack }: StackMapping): (err: unknown) => Record<string, unknown> {
  const describe = (err: unknown): Record<string, unknown> =>
    err instanceof Error
      ? { name: err.name, message: err.message, stack: sourceMappedStack(err.stack), cause: err.cause ? describe(err.cause) : undefined }
      : { value: String(err) };
  return describe;
}
