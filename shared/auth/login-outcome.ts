/**
 * What a `POST /token` answer says for the failed-login metrics (`LoginAttempts`,
 * `LoginFailures`): an attempt is a password grant (a one-time code travels in the same grant)
 * whose form could be read and whose client is known; a failure is such an attempt refused for
 * its credentials or a lockout. A malformed request, an unknown client, a refresh grant, a login
 * throttled before it was tried, or a refusal about the instance, its licence or the password
 * rules is not a login failure.
 */
import { parseTokenFields, readTokenRequest, type TokenErrorCode } from './token-request.ts';

/** Token error codes that mean "wrong credentials or locked out", at every security level. */
const CREDENTIAL_FAILURES: ReadonlySet<TokenErrorCode> = new Set<TokenErrorCode>([
  'invalid_grant',
  'incorrect_password',
  'incorrect_tfacode',
  'user_notfound',
  'user_lockedout',
]);

/** Codes that say the request itself was not a login attempt (a throttled one was never tried). */
const NOT_AN_ATTEMPT: ReadonlySet<string> = new Set(['invalid_client', 'unsupported_grant_type', 'too_many_requests']);

/**
 * The login outcome of a token request and its answer (`status`, and `errorCode` when it failed):
 * undefined when it was not a password login attempt.
 */
export function loginOutcome(req: { readonly rawBody: string | undefined; readonly body: unknown }, status: number, errorCode: string | undefined): { failed: boolean } | undefined {
  let grant: string;
  try {
    const text = req.rawBody ?? (req.body !== undefined ? JSON.stringify(req.body) : undefined);
    grant = readTokenRequest(parseTokenFields(text)).grantType;
  } catch {
    return undefined;
  }
  if (grant !== 'password' || (errorCode !== undefined && NOT_AN_ATTEMPT.has(errorCode))) return undefined;
  if (status >= 500) return undefined;
  return { failed: errorCode !== undefined && CREDENTIAL_FAILURES.has(errorCode as TokenErrorCode) };
}
