/**
 * The browser console's session (`gatehouseConsole`, a public client): its access token lives in
 * the page's memory only, and its refresh token never reaches a script. The token answer moves the
 * refresh token out of the body into a cookie (`HttpOnly`, `SameSite=Strict`, `Secure` over HTTPS,
 * `Path=/token`: sent to the token endpoint and its revocation only), and the console's refresh
 * and sign-out read it from there.
 *
 * Every token call of that client carries {@link CONSOLE_CSRF_HEADER}: a page of another site can
 * post a form to `/token`, but cannot add a header without a CORS preflight, which Gatehouse never
 * grants it (no login planted in an operator's browser, no refresh run from elsewhere).
 */
import { CONSOLE_OAUTH_CLIENT_ID, tokenError } from './token-request.ts';

const CONSOLE_REFRESH_COOKIE = 'gatehouse_console_refresh';

/** The request header every token call of the console carries (any value). */
const CONSOLE_CSRF_HEADER = 'x-gatehouse-csrf';

const COOKIE_PATH = '/token';

export const isConsoleClient = (clientId: string): boolean => clientId === CONSOLE_OAUTH_CLIENT_ID;

/** Refuses a console token call without its header. */
export function checkConsoleCall(headers: Readonly<Record<string, string>>): void {
  if (!headers[CONSOLE_CSRF_HEADER]) throw tokenError('invalid_client', `The console's token calls carry the ${CONSOLE_CSRF_HEADER} header.`);
}

/** The console's refresh token, from its cookie; undefined when the browser sent none. */
export const consoleRefreshToken = (cookies: Readonly<Record<string, string>>): string | undefined => cookies[CONSOLE_REFRESH_COOKIE] || undefined;

function cookie(value: string, secure: boolean, maxAgeSeconds: number): string {
  return [`${CONSOLE_REFRESH_COOKIE}=${value}`, `Path=${COOKIE_PATH}`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])].join('; ');
}

/** The cookie that carries a console login's refresh token for as long as the login lasts. */
const refreshCookie = (token: string, secure: boolean, maxAgeSeconds: number): string => cookie(token, secure, Math.max(0, Math.floor(maxAgeSeconds)));

/** The cookie that removes it (sign-out, or a refresh that failed). */
export const clearedRefreshCookie = (secure: boolean): string => cookie('', secure, 0);

/** A token answer for the console: the same body without `refresh_token`, which goes into the cookie. */
export function consoleTokenAnswer<T extends { readonly refresh_token: string }>(
  body: T,
  secure: boolean,
  maxAgeSeconds: number,
): { readonly body: Omit<T, 'refresh_token'>; readonly cookie: string } {
  const { refresh_token: refresh, ...rest } = body;
  return { body: rest, cookie: refreshCookie(refresh, secure, maxAgeSeconds) };
}
