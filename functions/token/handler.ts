/**
 * Token family: `POST /token` (password, refresh_token and authorization_code grants) and its
 * revocation (`POST /token/revoke`; the console's session: shared/auth/console-session.ts), the public
 * keys that verify access tokens (`GET /.well-known/jwks.json`), and single sign-on: the
 * authorization endpoint, the identity providers' callback and the authorization server's
 * metadata (shared/auth/sso/flow.ts). Every route is public.
 */
import { config } from '#shared/config.ts';
import { assembleDeps, type CoreDeps } from '#shared/deps-assembly.ts';
import { refusingAuthenticator } from '#shared/public-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { ok, type Operation } from '#shared/http/operation-contract.ts';
import { loginOutcome } from '#shared/auth/login-outcome.ts';
import { loginThrottleOf } from '#shared/auth/login-throttle.ts';
import { DEFAULT_CLIENT_ID, NO_STORE, checkClient, isOAuthClient, parseTokenFields, readTokenRequest, tokenError } from '#shared/auth/token-request.ts';
import { secretRingFor } from '#shared/auth/secret-ring.ts';
import { passwordGrant, refreshGrant, revokeRefreshToken } from '#shared/auth/token-service.ts';
import { checkConsoleCall, clearedRefreshCookie, consoleRefreshToken, consoleTokenAnswer, isConsoleClient } from '#shared/auth/console-session.ts';
import { notifierFor } from '#shared/notify/sns-notifier.ts';
import { validationFailed } from '#shared/errors.ts';
import { onFirstUse } from '#shared/first-use.ts';
import { baseUrlOf } from '#shared/docs/openapi.ts';
import type { ApiRequest, ApiResponse } from '#shared/http/operation-contract.ts';

const token: Operation<CoreDeps> = async (req, deps) => {
  const fields = readTokenRequest(parseTokenFields(req.rawBody));
  const browser = isConsoleClient(fields.clientId);
  if (browser) checkConsoleCall(req.headers);
  // The console refreshes from its cookie: a refresh token in its body is not read.
  const request = browser && fields.grantType === 'refresh_token' ? { ...fields, refreshToken: consoleRefreshToken(req.cookies) } : fields;
  if (request.grantType === 'authorization_code') {
    // Single sign-on's public clients (PKCE): the code, not a secret, proves the caller.
    if (!isOAuthClient(deps.config, request.clientId)) throw tokenError('invalid_client', 'The client is not known.');
  } else checkClient(deps.config, request.clientId, request.clientSecret);
  // Before anything is read or hashed: a login costs a scrypt whether or not the user exists.
  if (request.grantType === 'password') loginThrottleOf(deps.config).check(req.sourceIp, request);
  const body =
    request.grantType === 'password'
      ? await passwordGrant(deps, request)
      : request.grantType === 'authorization_code'
        ? await (await sso()).redeemCode(deps, request)
        : await refreshGrant(deps, request);
  // The instance logged into is the call's tenant (usage and the request log line).
  if (!browser) return { ...ok(body, { ...NO_STORE }), tenant: body.instance };
  const answer = consoleTokenAnswer(body, isHttps(req, deps), deps.config.refreshTokenDays * 86_400);
  return { ...ok(answer.body, { ...NO_STORE }), cookies: [answer.cookie], tenant: body.instance };
};

/**
 * `POST /token/revoke` (RFC 7009): ends the login of a refresh token (`token`, with the client's
 * credentials as at `/token`); the console's sign-out sends its cookie instead, and the answer
 * clears it. Always 200 once the client is accepted, whether or not the token was live.
 */
const revoke: Operation<CoreDeps> = async (req, deps) => {
  const fields = parseTokenFields(req.rawBody);
  const clientId = fields.get('client_id') || DEFAULT_CLIENT_ID;
  const browser = isConsoleClient(clientId);
  if (browser) checkConsoleCall(req.headers);
  else checkClient(deps.config, clientId, fields.get('client_secret') || undefined);
  const refresh = browser ? consoleRefreshToken(req.cookies) : fields.get('token') || undefined;
  if (refresh) await revokeRefreshToken(deps, refresh, clientId);
  return { status: 200, headers: { ...NO_STORE }, ...(browser ? { cookies: [clearedRefreshCookie(isHttps(req, deps))] } : {}) };
};

/** The browser called over HTTPS (the cookie is then `Secure`): API Gateway always, locally behind a TLS proxy. */
const isHttps = (req: ApiRequest, deps: CoreDeps): boolean => baseOf(req, deps).startsWith('https:');

// Caches outside (other verifiers) may keep the JWKS as long as our own environments do: a
// rollover publishes a key twice that long before it signs (shared/auth/key-ring.ts).
const jwks: Operation<CoreDeps> = async (_req, deps) =>
  ok(await deps.keys.publicKeys(), { 'Cache-Control': `public, max-age=${deps.config.keyCacheSeconds}` });

/**
 * Single sign-on (openid-client, and jose's ID token checks), loaded with its first call: a
 * password login or a refresh never loads it.
 */
const sso = onFirstUse(() => import('#shared/auth/sso/flow.ts'));

/** Gatehouse's base URL as the browser sees it: GATEHOUSE_PUBLIC_URL, else the host the request called. */
const baseOf = (req: ApiRequest, deps: CoreDeps): string => (deps.config.publicUrl ? deps.config.publicUrl.replace(/\/+$/, '') : baseUrlOf(req));

const firstOf = (req: ApiRequest) => (name: string) => req.query[name]?.[0];

const redirect = (location: string): ApiResponse => ({ status: 302, headers: { location, ...NO_STORE } });

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The 400 page of a sign-in that cannot go back to its client (unknown client or redirect URI, a stale callback). */
function errorPage(message: string): ApiResponse {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in error</title></head><body><h1>Sign-in error</h1><p>${escapeHtml(message)}</p></body></html>`;
  return { status: 400, headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'", ...NO_STORE }, raw: { text: html } };
}

async function pageOnRefusal(run: (flow: Awaited<ReturnType<typeof sso>>) => Promise<string>): Promise<ApiResponse> {
  const flow = await sso();
  try {
    return redirect(await run(flow));
  } catch (err) {
    if (err instanceof flow.AuthorizePageError) return errorPage(err.message);
    throw err;
  }
}

// Single sign-on: the browser is sent to the instance's identity provider, then back to the client.
// A start counts against the client address's login bucket: each one writes a pending login.
const oauthAuthorize: Operation<CoreDeps> = async (req, deps) => {
  loginThrottleOf(deps.config).checkAddress(req.sourceIp);
  return pageOnRefusal((flow) => flow.authorize(deps, firstOf(req), baseOf(req, deps)));
};

const oauthCallback: Operation<CoreDeps> = async (req, deps) => {
  const search = new URLSearchParams();
  for (const [k, values] of Object.entries(req.query)) for (const v of values) search.append(k, v);
  return pageOnRefusal((flow) => flow.callback(deps, firstOf(req), search));
};

/**
 * A sign-in page's question before anyone is signed in: the enabled providers of an instance (name
 * and Key only; an unknown instance answers as one without providers). Throttled as
 * `/oauth/authorize`, whose reads it repeats: by the stage only.
 */
const oauthProviders: Operation<CoreDeps> = async (req, deps) => {
  const instance = firstOf(req)('instance')?.trim() ?? '';
  if (!instance) throw validationFailed('instance is required: the name of the instance to sign in to.');
  return ok(await (await sso()).publicProviders(deps, instance), { ...NO_STORE });
};

const oauthMetadata: Operation<CoreDeps> = async (req, deps) =>
  ok((await sso()).authorizationServerMetadata(baseOf(req, deps)), { 'Cache-Control': deps.config.publicUrl ? 'public, max-age=3600' : 'private, max-age=300' });

export const operations = { token, revoke, jwks, oauthAuthorize, oauthCallback, oauthProviders, oauthMetadata };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'token', operations, deps, loginOutcome, middlewares: [metering] });

// The one function that sends codes and signs tokens: the only HTTP family bundling the SNS and
// Secrets Manager clients. Its routes are all public: it bundles no token verification.
export const handler = createHandler(() => {
  const cfg = config();
  const signingRing = secretRingFor(cfg);
  return assembleDeps({ notifier: notifierFor(cfg), ...(signingRing ? { signingRing } : {}) }, () => refusingAuthenticator);
});
