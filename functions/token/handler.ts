/**
 * Token family: `POST /token` (password and refresh_token grants) and the public keys that verify
 * access tokens (`GET /.well-known/jwks.json`). Both are public routes.
 */
import { config } from '#shared/config.ts';
import { assembleDeps, type CoreDeps } from '#shared/deps-assembly.ts';
import { refusingAuthenticator } from '#shared/public-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { ok, type Operation } from '#shared/http/operation-contract.ts';
import { loginOutcome } from '#shared/auth/login-outcome.ts';
import { loginThrottleOf } from '#shared/auth/login-throttle.ts';
import { NO_STORE, checkClient, parseTokenFields, readTokenRequest } from '#shared/auth/token-request.ts';
import { secretRingFor } from '#shared/auth/secret-ring.ts';
import { passwordGrant, refreshGrant } from '#shared/auth/token-service.ts';
import { notifierFor } from '#shared/notify/sns-notifier.ts';

const token: Operation<CoreDeps> = async (req, deps) => {
  const request = readTokenRequest(parseTokenFields(req.rawBody));
  checkClient(deps.config, request.clientId, request.clientSecret);
  // Before anything is read or hashed: a login costs a scrypt whether or not the user exists.
  if (request.grantType === 'password') loginThrottleOf(deps.config).check(req.sourceIp, request);
  const body = request.grantType === 'password' ? await passwordGrant(deps, request) : await refreshGrant(deps, request);
  // The instance logged into is the call's tenant (usage and the request log line).
  return { ...ok(body, { ...NO_STORE }), tenant: body.instance };
};

// Caches outside (other verifiers) may keep the JWKS as long as our own environments do: a
// rollover publishes a key twice that long before it signs (shared/auth/key-ring.ts).
const jwks: Operation<CoreDeps> = async (_req, deps) =>
  ok(await deps.keys.publicKeys(), { 'Cache-Control': `public, max-age=${deps.config.keyCacheSeconds}` });

export const operations = { token, jwks };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'token', operations, deps, loginOutcome, middlewares: [metering] });

// The one function that sends codes and signs tokens: the only HTTP family bundling the SNS and
// Secrets Manager clients. Its routes are all public: it bundles no token verification.
export const handler = createHandler(() => {
  const cfg = config();
  const signingRing = secretRingFor(cfg);
  return assembleDeps({ notifier: notifierFor(cfg), ...(signingRing ? { signingRing } : {}) }, () => refusingAuthenticator);
});
