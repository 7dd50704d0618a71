/**
 * Gatehouse as an OpenID Connect relying party of an instance's identity provider, on
 * `openid-client` (certified RP): discovery, the authorization request with our own `state`,
 * `nonce` and PKCE, and the code exchange, whose ID token it validates (issuer, audience, expiry,
 * `iat`, nonce, `azp`, the authorization response's `iss`).
 *
 * openid-client does not check the ID token's signature when it comes straight from the token
 * endpoint over TLS (OIDC Core 3.1.3.7 allows that); we check it anyway with `jose` against the
 * provider's JWKS, so that a token endpoint answering for someone else's keys is refused too.
 * The JWKS is cached per provider and read again for a `kid` it does not hold (a rotation), at
 * once: the token came from the provider's own endpoint, so an unknown `kid` is a rotation, not
 * an attacker's probe. oauth4webapi's own cache would wait a minute before reading it again.
 *
 * Discovery is cached per provider configuration for {@link DISCOVERY_TTL_MS}.
 */
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { TtlCache } from '../../ttl-cache.ts';
import { isLoopbackHost } from './provider-rules.ts';

/** How long a provider's discovery document is reused. */
const DISCOVERY_TTL_MS = 60 * 60_000;
/** How long a provider's JWKS is reused before it is read again (an unknown `kid` reads it at once). */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** Seconds a request to a provider may take. */
const PROVIDER_TIMEOUT_S = 10;

/** What the relying party needs of a provider (its object, and the secret opened). */
export interface ProviderSettings {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly authMethod: 'client_secret_basic' | 'client_secret_post';
  /** http on a loopback address is allowed (GATEHOUSE_IDP_ALLOW_LOOPBACK). */
  readonly allowLoopback: boolean;
}

const configurations = new TtlCache<Promise<oidc.Configuration>>(1000, DISCOVERY_TTL_MS);
const keySets = new TtlCache<ReturnType<typeof createRemoteJWKSet>>(1000, 24 * 60 * 60_000);

function cacheId(p: ProviderSettings): string {
  const secret = createHash('sha256').update(p.clientSecret, 'utf8').digest('base64url');
  return [p.issuer, p.clientId, p.authMethod, secret].join('\u0000');
}

/** The provider's configuration from its discovery document (cached; a failure is not). */
function configurationOf(p: ProviderSettings): Promise<oidc.Configuration> {
  const id = cacheId(p);
  let cfg = configurations.get(id);
  if (!cfg) {
    const auth = p.authMethod === 'client_secret_post' ? oidc.ClientSecretPost(p.clientSecret) : oidc.ClientSecretBasic(p.clientSecret);
    const issuer = new URL(p.issuer);
    const insecure = issuer.protocol === 'http:' && p.allowLoopback && isLoopbackHost(issuer.hostname);
    cfg = oidc.discovery(issuer, p.clientId, undefined, auth, {
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      timeout: PROVIDER_TIMEOUT_S,
    });
    cfg.catch(() => configurations.delete(id));
    configurations.set(id, cfg);
  }
  return cfg;
}

function keySetOf(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
  let set = keySets.get(jwksUri);
  if (!set) {
    set = createRemoteJWKSet(new URL(jwksUri), { cacheMaxAge: JWKS_MAX_AGE_MS, cooldownDuration: 0, timeoutDuration: PROVIDER_TIMEOUT_S * 1000 });
    keySets.set(jwksUri, set);
  }
  return set;
}

/** Our side of one login at the provider: kept with the pending login, never sent to the client. */
export interface LoginSecrets {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
}

/** New state, nonce and PKCE verifier for a login. */
export function newLoginSecrets(): LoginSecrets {
  return { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier() };
}

/** The provider's authorization URL for a login (discovery is read, or taken from the cache). */
export async function authorizationUrl(
  p: ProviderSettings,
  secrets: LoginSecrets,
  opts: { readonly redirectUri: string; readonly scopes: string; readonly loginHint?: string },
): Promise<URL> {
  const cfg = await configurationOf(p);
  return oidc.buildAuthorizationUrl(cfg, {
    redirect_uri: opts.redirectUri,
    scope: opts.scopes,
    state: secrets.state,
    nonce: secrets.nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(secrets.codeVerifier),
    code_challenge_method: 'S256',
    ...(opts.loginHint ? { login_hint: opts.loginHint } : {}),
  });
}

/**
 * Redeems the provider's code of `callbackUrl` (our redirect URI with the provider's answer in
 * its query) and returns the ID token's claims, validated and with a checked signature. Throws
 * on anything else (an error answer of the provider included).
 */
export async function redeemProviderCode(p: ProviderSettings, secrets: LoginSecrets, callbackUrl: URL): Promise<JWTPayload> {
  const cfg = await configurationOf(p);
  const tokens = await oidc.authorizationCodeGrant(cfg, callbackUrl, {
    pkceCodeVerifier: secrets.codeVerifier,
    expectedState: secrets.state,
    expectedNonce: secrets.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  const jwksUri = cfg.serverMetadata().jwks_uri;
  if (!claims || !tokens.id_token || !jwksUri) throw new Error('the provider answered no ID token or publishes no JWKS');
  const verified = await jwtVerify(tokens.id_token, keySetOf(jwksUri), { issuer: cfg.serverMetadata().issuer, audience: p.clientId });
  return verified.payload;
}
