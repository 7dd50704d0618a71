/**
 * Single sign-on, Gatehouse's side as the authorization server of its own clients (authorization
 * code with PKCE, RFC 6749 and 7636), each login relayed to the instance's identity provider:
 *
 * 1. `GET /oauth/authorize` ({@link authorize}): the client and its redirect URI are checked
 *    first (an unknown one is a 400 page, never a redirect: {@link AuthorizePageError}); then the
 *    request, the instance and its provider (the one the client named, else the login hint's
 *    domain's, else the only enabled one: a sign-in page learns the names from
 *    {@link publicProviders}).
 *    The pending login (the client's request, our state, nonce and PKCE verifier) is stored under
 *    our state for {@link PENDING_TTL_MS}; the browser goes to the provider.
 * 2. `GET /oauth/callback` ({@link callback}): the pending login is taken (once), the provider's
 *    code redeemed and its ID token validated (relying-party.ts), the user found, linked or
 *    created (users.ts); the browser goes back to the client with a one-time code
 *    ({@link CODE_TTL_MS}, single use) and the client's state.
 * 3. `POST /token` with `grant_type=authorization_code` ({@link redeemCode}): the code, the
 *    client, the redirect URI and the PKCE verifier are checked; the answer is a password
 *    login's.
 *
 * Every refusal after the client and redirect URI are known goes back to the client as
 * `error=access_denied` with a short description that says nothing an attacker could use; the
 * reason is logged (never a token, a code or a secret).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CoreDeps } from '../../core-deps.ts';
import { claimOwner, getObject, listCollection } from '../../db/objects-repo.ts';
import { putAuthorizationCode, putPendingLogin, takeAuthorizationCode, takePendingLogin } from '../../db/sso-repo.ts';
import { instanceNameClaim } from '../../model/claims.ts';
import type { StoredObject } from '../../model/stored-object.ts';
import { findInstanceByName, isDisabled, isInstance } from '../directory.ts';
import { CONSOLE_OAUTH_CLIENT_ID, tokenError, type TokenRequest } from '../token-request.ts';
import { signInTokens, type TokenResponse } from '../token-service.ts';
import { providerSecret } from './provider-secret.ts';
import { authorizationUrl, newLoginSecrets, redeemProviderCode, type ProviderSettings } from './relying-party.ts';
import { SignInRefused, domainAllowed, emailDomain, signInUser } from './sso-users.ts';

/** How long a login may stay at the provider. */
export const PENDING_TTL_MS = 10 * 60_000;
/** How long the one-time code handed to the client is valid (single use). */
export const CODE_TTL_MS = 60_000;

export const IDENTITY_PROVIDERS = 'identityproviders';

/** A request the authorization endpoint cannot send back to its client: answered by a 400 page. */
export class AuthorizePageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthorizePageError';
  }
}

/** Query values by name (the first of a repeated one). */
export type QueryOf = (name: string) => string | undefined;

/** The redirect URIs `clientId` registered (`<base>/console/callback` for the console), or undefined for an unknown client. */
export function redirectUrisOf(cfg: CoreDeps['config'], clientId: string, baseUrl: string): readonly string[] | undefined {
  if (clientId === CONSOLE_OAUTH_CLIENT_ID) return [`${baseUrl}/console/callback`];
  return cfg.oauthClients.find((c) => c.clientId === clientId)?.redirectUris;
}

/** `uri` with `params` added to its query. */
function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}

/** The redirect that tells the client its sign-in failed (RFC 6749 4.1.2.1). */
const refusal = (redirectUri: string, state: string | undefined, error: string, description: string): string =>
  withParams(redirectUri, { error, error_description: description, state });

const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/** A provider's object and secret as the relying party takes them. */
async function settingsOf(deps: CoreDeps, provider: StoredObject): Promise<ProviderSettings> {
  const secret = await providerSecret(deps.config, deps.db, provider.key);
  if (secret === undefined) throw new SignInRefused('the provider has no client secret');
  return {
    issuer: String(provider.doc.Issuer),
    clientId: String(provider.doc.ClientId),
    clientSecret: secret,
    authMethod: provider.doc.TokenEndpointAuthMethod === 'client_secret_post' ? 'client_secret_post' : 'client_secret_basic',
    allowLoopback: deps.config.idpAllowLoopback,
  };
}

const isEnabled = (p: StoredObject): boolean => p.doc.Enabled !== false;

const enabledProvidersOf = async (deps: CoreDeps, instance: StoredObject): Promise<StoredObject[]> =>
  (await listCollection(deps.db, instance.key, IDENTITY_PROVIDERS, 100)).items.filter(isEnabled);

/**
 * The provider a login to `instance` goes to: the one the client named (`provider`, its Key: the
 * console's button of that provider), else the login hint's domain's, else the only enabled one.
 */
async function chooseProvider(deps: CoreDeps, instance: StoredObject, loginHint: string | undefined, providerKey: string | undefined): Promise<StoredObject> {
  const providers = await enabledProvidersOf(deps, instance);
  if (providerKey) {
    const named = providers.find((p) => p.key === providerKey);
    if (named) return named;
    throw new SignInRefused('the named provider is not an enabled provider of the instance');
  }
  if (loginHint && emailDomain(loginHint)) {
    const byDomain = providers.find((p) => domainAllowed(p, loginHint));
    if (byDomain) return byDomain;
  }
  if (providers.length === 1) return providers[0]!;
  throw new SignInRefused(providers.length === 0 ? 'the instance has no enabled identity provider' : 'several providers and no login hint naming one');
}

/**
 * Starts a sign-in: the provider's authorization URL to send the browser to, or the client's
 * redirect URI with an error. Throws {@link AuthorizePageError} for an unknown client or
 * redirect URI.
 */
export async function authorize(deps: CoreDeps, query: QueryOf, baseUrl: string): Promise<string> {
  const clientId = query('client_id') ?? '';
  const redirectUri = query('redirect_uri') ?? '';
  const registered = redirectUrisOf(deps.config, clientId, baseUrl);
  if (!registered) throw new AuthorizePageError('The client is not registered with Gatehouse.');
  if (!registered.includes(redirectUri)) throw new AuthorizePageError('The redirect_uri is not registered for this client.');
  const state = query('state');
  if (query('response_type') !== 'code') return refusal(redirectUri, state, 'unsupported_response_type', 'response_type must be code.');
  const challenge = query('code_challenge') ?? '';
  if (query('code_challenge_method') !== 'S256' || !PKCE_VALUE.test(challenge)) {
    return refusal(redirectUri, state, 'invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  }
  const instanceName = query('instance') ?? '';
  if (!instanceName) return refusal(redirectUri, state, 'invalid_request', 'instance is required.');
  const loginHint = query('login_hint');
  try {
    const instanceKey = await claimOwner(deps.db, instanceNameClaim(instanceName), true);
    const instance = instanceKey ? await getObject(deps.db, instanceKey, true) : undefined;
    if (!isInstance(instance) || isDisabled(instance)) throw new SignInRefused('no such instance, or disabled');
    const provider = await chooseProvider(deps, instance, loginHint, query('provider') || undefined);
    const secrets = newLoginSecrets();
    const callbackUrl = `${baseUrl}/oauth/callback`;
    const url = await authorizationUrl(await settingsOf(deps, provider), secrets, {
      redirectUri: callbackUrl,
      scopes: typeof provider.doc.Scopes === 'string' && provider.doc.Scopes.trim() ? provider.doc.Scopes : 'openid email profile',
      ...(loginHint ? { loginHint } : {}),
    });
    await putPendingLogin(
      deps.db,
      secrets.state,
      {
        ClientId: clientId,
        RedirectUri: redirectUri,
        ...(state !== undefined ? { ClientState: state } : {}),
        CodeChallenge: challenge,
        InstanceKey: instance.key,
        ProviderKey: provider.key,
        Nonce: secrets.nonce,
        Verifier: secrets.codeVerifier,
        CallbackUrl: callbackUrl,
      },
      deps.now().getTime() + PENDING_TTL_MS,
    );
    return url.toString();
  } catch (err) {
    deps.logger.warn('single sign-on refused at authorize', { reason: reasonOf(err), instance: instanceName });
    return refusal(redirectUri, state, 'access_denied', 'Single sign-on is not available for this sign-in.');
  }
}

/** What may be logged of a refusal: our own reason, or an error's class and message (never a token: they are not in messages). */
function reasonOf(err: unknown): string {
  if (err instanceof SignInRefused) return err.reason;
  if (err instanceof Error) return `${err.name}: ${err.message}`.slice(0, 300);
  return 'unknown';
}

/**
 * The provider's answer: the client's redirect URI with a one-time code, or with an error.
 * Throws {@link AuthorizePageError} when the state names no pending login (unknown, used or
 * expired): there is no client to send the browser back to.
 */
export async function callback(deps: CoreDeps, query: QueryOf, search: URLSearchParams): Promise<string> {
  const ourState = query('state') ?? '';
  const pending = ourState ? await takePendingLogin(deps.db, ourState, deps.now().getTime()) : undefined;
  if (!pending) throw new AuthorizePageError('This sign-in has expired or was already completed. Start again from the application.');
  const redirectUri = String(pending.RedirectUri);
  const clientState = typeof pending.ClientState === 'string' ? pending.ClientState : undefined;
  try {
    if (query('error') !== undefined) throw new SignInRefused(`the provider answered ${String(query('error')).slice(0, 64)}`);
    const [instance, provider] = await Promise.all([getObject(deps.db, String(pending.InstanceKey), true), getObject(deps.db, String(pending.ProviderKey), true)]);
    if (!isInstance(instance) || isDisabled(instance)) throw new SignInRefused('the instance is gone or disabled');
    if (provider?.collection !== IDENTITY_PROVIDERS || provider.folder !== instance.key || !isEnabled(provider)) throw new SignInRefused('the provider is gone or disabled');
    const callbackUrl = new URL(String(pending.CallbackUrl));
    callbackUrl.search = search.toString();
    const claims = await redeemProviderCode(
      await settingsOf(deps, provider),
      { state: ourState, nonce: String(pending.Nonce), codeVerifier: String(pending.Verifier) },
      callbackUrl,
    );
    const user = await signInUser(deps, instance, provider, claims);
    const code = randomBytes(32).toString('base64url');
    await putAuthorizationCode(
      deps.db,
      code,
      { UserKey: user.key, InstanceKey: instance.key, ClientId: pending.ClientId, RedirectUri: redirectUri, CodeChallenge: pending.CodeChallenge },
      deps.now().getTime() + CODE_TTL_MS,
    );
    deps.logger.info('single sign-on completed', { userKey: user.key, instanceKey: instance.key, providerKey: provider.key });
    return withParams(redirectUri, { code, state: clientState });
  } catch (err) {
    deps.logger.warn('single sign-on refused at callback', { reason: reasonOf(err), providerKey: String(pending.ProviderKey) });
    return refusal(redirectUri, clientState, 'access_denied', 'The sign-in was refused.');
  }
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

const badCode = () => tokenError('invalid_grant', 'The authorization code is not valid, has expired or was already used.');

/**
 * The authorization_code grant: the code is taken (used up, whatever follows), then its client,
 * redirect URI and PKCE verifier are checked; the answer is a password login's.
 */
export async function redeemCode(deps: CoreDeps, req: TokenRequest): Promise<TokenResponse> {
  if (!req.code) throw badCode();
  const grant = await takeAuthorizationCode(deps.db, req.code, deps.now().getTime());
  if (!grant) throw badCode();
  const verifier = req.codeVerifier ?? '';
  if (grant.ClientId !== req.clientId || grant.RedirectUri !== req.redirectUri || !PKCE_VALUE.test(verifier) || !sameText(s256(verifier), String(grant.CodeChallenge))) {
    throw badCode();
  }
  return signInTokens(deps, { userKey: String(grant.UserKey), instanceKey: String(grant.InstanceKey), clientId: req.clientId });
}

/** What anyone may learn of an instance's single sign-on: an enabled provider's name and Key. */
export interface PublicProvider {
  readonly CommonName: string;
  readonly Key: string;
}

/**
 * The enabled identity providers of the instance named `instanceName`, for a sign-in page's
 * "Sign in with ..." buttons before anyone is signed in: names and Keys only. An unknown or
 * disabled instance answers as one without providers (an empty list), so the call does not tell
 * which instance names exist; an instance with single sign-on is known either way, as
 * `/oauth/authorize` sends the browser on to its provider.
 */
export async function publicProviders(deps: CoreDeps, instanceName: string): Promise<readonly PublicProvider[]> {
  const instance = await findInstanceByName(deps.db, instanceName);
  if (!isInstance(instance) || isDisabled(instance)) return [];
  return (await enabledProvidersOf(deps, instance))
    .map((p) => ({ CommonName: String(p.doc.CommonName ?? ''), Key: p.key }))
    .sort((a, b) => a.CommonName.localeCompare(b.CommonName) || a.Key.localeCompare(b.Key));
}

/** The authorization server's metadata (RFC 8414) at `baseUrl`. */
export function authorizationServerMetadata(baseUrl: string): Record<string, unknown> {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/token`,
    jwks_uri: `${baseUrl}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'password'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    scopes_supported: [],
  };
}
