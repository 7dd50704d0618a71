/**
 * The one state a request carries through the pipeline (shared/http/pipeline.ts), and where it is
 * kept: a WeakMap keyed by the request's event. The operation step is the middy handler, which
 * receives the event and not middy's request, so the event is the one key every step holds; the
 * middlewares read the same entry through {@link stateOf}. (A copy under `request.internal` would
 * be a second store to keep in step with this one.) The entry goes with the event.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Family } from '../../model/collections.ts';
import type { ApiRequest } from '../operation-contract.ts';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

/** Middy's request, as the pipeline's middlewares see it. */
export interface PipelineRequest {
  event: HttpEvent;
  context: Context;
  response: HttpResult | undefined;
  error: unknown;
  internal: Record<string, unknown>;
}

/**
 * A middleware of the pipeline: middy's shape. Its functions are plain where they have nothing to
 * wait for: middy awaits each anyway, and an async function costs a promise per request for nothing.
 */
export interface PipelineMiddleware {
  readonly before?: (request: PipelineRequest) => unknown;
  readonly after?: (request: PipelineRequest) => unknown;
  readonly onError?: (request: PipelineRequest) => unknown;
}

/** What a middleware a family adds to the pipeline is made with ({@link HandlerSpec.middlewares}). */
export interface PipelineOf<D> {
  readonly family: Family;
  /** The family's dependencies, created once per execution environment on first use. */
  readonly deps: () => D;
}

export interface State {
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

const states = new WeakMap<HttpEvent, State>();

/** Starts the state of a request (the first step, `requestContext`). */
export function startState(event: HttpEvent, state: State): void {
  states.set(event, state);
}

/** The state of a request; undefined before `requestContext` has run. */
export function stateOf(event: HttpEvent): State | undefined {
  return states.get(event);
}

/** The state of a request, for the steps that run only after `requestContext`. */
export function requiredState(event: HttpEvent): State {
  const s = states.get(event);
  if (!s) throw new Error('pipeline state missing');
  return s;
}

/**
 * The tenant of an answered request: the caller's instance once its token and status were
 * accepted (a call run on a token's claims while they were checked, a new environment's read, and
 * then refused is no tenant's), else the tenant its operation named.
 */
export function tenantOf(s: State | undefined): string | undefined {
  const principal = s?.req?.principal && (s.status === undefined || s.accepted) ? s.req.principal : undefined;
  return principal?.instanceKey ?? s?.tenant;
}
