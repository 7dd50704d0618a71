/**
 * One DynamoDB call, its failures sorted: throttling and 5xx (after the SDK's own retries with
 * backoff) become {@link StoreUnavailable}, which the pipeline answers with 503 and Retry-After;
 * anything else is thrown as it came. A module of its own so that small functions (the key
 * manager) and the key store can use it without the object repository.
 */
import { StoreUnavailable } from '../errors.ts';

const RETRYABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
]);

/** A failed call's error as thrown to the pipeline: {@link StoreUnavailable} for throttling and 5xx. */
export function asStoreError(err: unknown): unknown {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return RETRYABLE.has(e.name ?? '') || (e.$metadata?.httpStatusCode ?? 0) >= 500 ? new StoreUnavailable(err) : err;
}

/** Sends `command` through `client` (the document client or the plain one). */
export async function sendTo<T>(client: { send(command: never): Promise<unknown> }, command: object): Promise<T> {
  try {
    return (await client.send(command as never)) as T;
  } catch (err) {
    throw asStoreError(err);
  }
}
