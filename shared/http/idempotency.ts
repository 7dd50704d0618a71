/**
 * `Idempotency-Key` (the IETF httpapi draft) on the API's writes: a client that retries a POST,
 * PUT or DELETE after a timeout sends the same key, and gets the first call's answer instead of a
 * second person or event.
 *
 * The key is scoped to the caller (instance and user), the method and the path. The same key with
 * the same request (query and body, byte for byte) within 24 hours replays the first answer
 * (status, headers such as `Location`, body) without running the operation again; with another
 * request it is 422 `IdempotencyKeyReused`; while the first call still runs it is 409
 * `IdempotencyKeyInProgress` with `Retry-After: 1`. Only a success (2xx) is kept: an error answer
 * changed nothing (every write is all or nothing), so a retry runs again, and a passing refusal
 * (an expired token, a stale ConcurrencyVersion, a busy store) is not pinned for a day. Without
 * the header nothing changes, and nothing more is read or written.
 *
 * The protocol is Powertools' idempotency utility (`makeIdempotent` over its DynamoDB persistence
 * layer, shared/db/idempotency-store.ts), run by idempotent-call.ts, which is loaded with the
 * first keyed call: a cold start without the header reads none of it. It wraps the operation,
 * after authentication (the scope needs the caller), so the request is still logged, counted and
 * metered once whether it ran or was replayed.
 */
import { onFirstUse } from '../first-use.ts';
import type { IdempotencyHooks, OperationStep } from './idempotent-call.ts';

/** The request header (lower-case, as the pipeline keeps headers). */
const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** The methods a key applies to; on a GET the header is ignored (reads are idempotent already). */
export const KEYED_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'DELETE']);

const keyedCall = onFirstUse(() => import('./idempotent-call.ts'));

/**
 * Wraps the pipeline's operation step: a call with `Idempotency-Key` on a POST, PUT or DELETE
 * runs through Powertools' idempotency; any other call runs as it would without this.
 */
export function withIdempotencyKey(run: OperationStep, hooks: IdempotencyHooks): OperationStep {
  return async (event, context) => {
    const req = hooks.request(event);
    const header = req?.headers[IDEMPOTENCY_KEY_HEADER];
    if (!req || header === undefined || !KEYED_METHODS.has(req.method)) return run(event, context);
    return (await keyedCall()).runKeyed({ run, hooks, event, context, req, header });
  };
}
