/**
 * What a tenant is told about a failed delivery: one of a few fixed reasons (and the receiver's
 * status code, when it answered). The cause behind "could not connect" (a name that does not
 * resolve, resolves to a refused address, a refused or unreachable port) would let a tenant map
 * the sender's network and DNS through the `test` call and the deliveries list; it goes to the
 * server log only. A module of its own: the deliveries list reads it without loading the sender.
 */

export const COULD_NOT_CONNECT = 'Could not connect to the receiver.';
export const TLS_FAILED = 'The TLS handshake with the receiver failed.';
export const TIMED_OUT = 'The receiver did not answer in time.';
export const CONNECTION_LOST = 'The connection to the receiver was lost before its answer.';
export const INVALID_URL = 'The URL is not valid.';
export const NOT_HTTPS = 'The URL must use https.';
export const SUBSCRIPTION_DISABLED = 'The subscription is disabled.';

const PUBLIC = new Set([COULD_NOT_CONNECT, TLS_FAILED, TIMED_OUT, CONNECTION_LOST, INVALID_URL, NOT_HTTPS, SUBSCRIPTION_DISABLED]);

/**
 * The reason a stored attempt shows: itself when it is one of the fixed ones; a record written
 * before reasons were generic (kept 30 days) as {@link TIMED_OUT} for a timeout and
 * {@link COULD_NOT_CONNECT} for anything else.
 */
export const publicReason = (stored: string): string =>
  PUBLIC.has(stored) ? stored : stored.startsWith('No answer within') ? TIMED_OUT : COULD_NOT_CONNECT;
