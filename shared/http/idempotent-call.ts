/**
 * A call with `Idempotency-Key` (see idempotency.ts, which loads this with the first one): the key
 * checked, then the operation run through Powertools' `makeIdempotent` over the table's
 * persistence layer, and the library's refusals answered as the API's errors.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyInconsistentStateError,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { ApiError, StoreUnavailable, badRequest } from '../errors.ts';
import { idempotencyStore } from '../db/idempotency-store.ts';
import { IDEMPOTENCY_PREFIX } from '../db/item-keys.ts';
import { asStoreError } from '../db/send.ts';
import type { ApiRequest, BaseDeps } from './operation-contract.ts';

type HttpEvent = APIGatewayProxyEventV2;
type HttpResult = APIGatewayProxyStructuredResultV2;

/** How long a key's answer is kept and replayed. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** What the pipeline gives the wrapper: its state of the request, found by the event. */
export interface IdempotencyHooks {
  readonly deps: () => BaseDeps;
  /** The request as routed, parsed and authenticated. */
  readonly request: (event: HttpEvent) => ApiRequest | undefined;
  /**
   * The caller's status check, when it still runs beside the operation (see the pipeline): a
   * record is read or written only for a caller accepted, so a token not yet verified (a new
   * environment's first) neither replays another's answer nor holds a key.
   */
  readonly verdict: (event: HttpEvent) => Promise<void> | undefined;
  /** The CORS headers for this request's origin (a replay answers with the retry's own). */
  readonly cors: (event: HttpEvent) => Record<string, string>;
}

/** The operation step as the pipeline runs it. */
export type OperationStep = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/**
 * How long a call may hold its key when the context tells no remaining time: API Gateway's
 * integration timeout. A call that dies holding it frees it then, not after 24 hours.
 */
const HOLD_MS_WITHOUT_CONTEXT = 30_000;

/** Printable ASCII, space included. */
const PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * The key a header carries: the draft's structured-field string (`"…"`, with `\"` and `\\`
 * escapes), or the bare token most clients send. 1–255 printable characters, else a 400.
 */
export function parseIdempotencyKey(header: string): string {
  const value = header.trim();
  const key = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? unquote(value.slice(1, -1)) : value;
  if (key === undefined || key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !PRINTABLE.test(key)) throw invalidKey();
  return key;
}

/** A structured-field string's content unescaped; undefined when it is not one. */
function unquote(inner: string): string | undefined {
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === '"') return undefined;
    if (c === '\\') {
      const next = inner[++i];
      if (next !== '"' && next !== '\\') return undefined;
      out += next;
    } else out += c;
  }
  return out;
}

const invalidKey = (): ApiError =>
  badRequest('InvalidIdempotencyKey', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters.`);

/** 409 while the first call with the key runs. */
export const keyInProgress = (): ApiError =>
  new ApiError(409, 'IdempotencyKeyInProgress', 'A request with this Idempotency-Key is still running; retry after the number of seconds in Retry-After.', {
    'Retry-After': '1',
  });

/** 422: the key was used for another request. */
export const keyReused = (): ApiError =>
  new ApiError(422, 'IdempotencyKeyReused', 'This Idempotency-Key was used for a different request (method, path, query or body); use a new key.');

/**
 * What is kept of a success: the answer as sent, but for the CORS headers of its origin. The body
 * is kept gzipped: JSON shrinks several times, so a typical answer's record stays within one
 * write unit (a KB) when it is saved.
 */
interface KeptAnswer {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly gzippedBody: Uint8Array;
  readonly isBase64Encoded: boolean;
}

/** The request a key stands for: hashed into the record's key (scope and key) and its payload check. */
interface Keyed {
  readonly scope: readonly string[];
  readonly key: string;
  readonly request: { readonly query: string; readonly body: string | null };
}

/** An error answer (≥ 300) the operation returned without throwing: not kept, the record is removed. */
class NotKept extends Error {}

const isCors = (name: string, value: string): boolean => {
  const n = name.toLowerCase();
  return n === 'access-control-allow-origin' || (n === 'vary' && value === 'Origin');
};

function kept(res: HttpResult): KeptAnswer {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers ?? {})) if (!isCors(k, String(v))) headers[k] = String(v);
  return { statusCode: res.statusCode ?? 200, headers, gzippedBody: gzipSync(res.body ?? ''), isBase64Encoded: res.isBase64Encoded ?? false };
}

/** A kept answer as sent again. */
function replayed(answer: KeptAnswer, cors: Record<string, string>): HttpResult {
  return {
    statusCode: answer.statusCode,
    headers: { ...cors, ...answer.headers },
    body: gunzipSync(answer.gzippedBody).toString('utf8'),
    isBase64Encoded: answer.isBase64Encoded,
  };
}

/** One keyed call: `header` is the request's `Idempotency-Key`, on a POST, PUT or DELETE. */
export async function runKeyed(call: {
  readonly run: OperationStep;
  readonly hooks: IdempotencyHooks;
  readonly event: HttpEvent;
  readonly context: Context;
  readonly req: ApiRequest;
  readonly header: string;
}): Promise<HttpResult> {
  const { run, hooks, event, context, req } = call;
  // A public call has no caller to scope a key to (`POST /token`: a login is not replayed).
  if (!req.route.auth || !req.principal) throw badRequest('IdempotencyKeyNotAllowed', `${req.method} ${req.route.path} does not take an Idempotency-Key.`);
  const key = parseIdempotencyKey(call.header);
  await hooks.verdict(event);
  const p = req.principal;
  const keyed: Keyed = {
    scope: [p.instanceKey, p.userKey, req.method, req.path],
    key,
    request: { query: event.rawQueryString ?? '', body: req.rawBody ?? null },
  };
  let fresh: HttpResult | undefined;
  let thrown: { readonly error: unknown } | undefined;
  const idempotent = makeIdempotent(
    async (_keyed: Keyed): Promise<KeptAnswer> => {
      try {
        fresh = await run(event, context);
      } catch (error) {
        thrown = { error };
        throw error;
      }
      if ((fresh.statusCode ?? 200) >= 300) throw new NotKept();
      return kept(fresh);
    },
    {
      persistenceStore: idempotencyStore(hooks.deps().db),
      keyPrefix: IDEMPOTENCY_PREFIX,
      // A configuration per call: the context (its remaining time bounds how long the call holds
      // the key) is this call's, and calls overlap in one process locally.
      config: new IdempotencyConfig({
        eventKeyJmesPath: '[scope, key]',
        payloadValidationJmesPath: 'request',
        throwOnNoIdempotencyKey: true,
        expiresAfterSeconds: IDEMPOTENCY_WINDOW_SECONDS,
        hashFunction: 'sha256',
        lambdaContext:
          typeof context?.getRemainingTimeInMillis === 'function' ? context : ({ getRemainingTimeInMillis: () => HOLD_MS_WITHOUT_CONTEXT } as Context),
      }),
    },
  );
  let answer: KeptAnswer;
  try {
    answer = await idempotent(keyed);
  } catch (err) {
    const { logger } = hooks.deps();
    // The operation ran: its answer stands, whatever became of the record.
    if (thrown) {
      if (err !== thrown.error) logger.warn('idempotency record not removed after a failed call', { requestId: req.requestId, error: (err as Error).message });
      throw thrown.error;
    }
    if (fresh) {
      if (!(err instanceof NotKept)) logger.warn('idempotency record not saved after a call', { requestId: req.requestId, error: (err as Error).message });
      return fresh;
    }
    if (err instanceof IdempotencyValidationError) throw keyReused();
    if (err instanceof IdempotencyAlreadyInProgressError || err instanceof IdempotencyInconsistentStateError) throw keyInProgress();
    if (err instanceof IdempotencyPersistenceLayerError) {
      const cause = asStoreError(err.cause);
      throw cause instanceof StoreUnavailable ? cause : err;
    }
    throw err;
  }
  if (fresh) return fresh;
  return replayed(answer, hooks.cors(event));
}
