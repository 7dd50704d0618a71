/**
 * An identity provider's rules that the users collection's writers share with the sign-in (no
 * dependency: the collection behaviours of every family load this): which issuers a deployment
 * accepts, the defaults of a provider's fields, and what its sealed secret is bound to.
 */

/** The defaults a provider gets for the fields left out. */
export const IDENTITY_PROVIDER_DEFAULTS = Object.freeze({
  Scopes: 'openid email profile',
  EmailDomains: Object.freeze([] as string[]),
  JitProvisioning: false,
  DefaultRole: 'ReadOnly',
  TokenEndpointAuthMethod: 'client_secret_basic',
  Enabled: true,
  RequireEmailVerified: true,
});

/** The additional data a provider's sealed secret is bound to: it opens for that provider only. */
export const providerSecretContext = (providerKey: string): string => `identityprovider/${providerKey}`;

/** True for `localhost` and the loopback addresses (127.0.0.0/8, ::1). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** Why `issuer` may not name an identity provider here, or undefined when it may. */
export function issuerProblem(issuer: string, allowLoopback: boolean): string | undefined {
  const url = new URL(issuer);
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && allowLoopback && isLoopbackHost(url.hostname)) return undefined;
  return allowLoopback ? 'must be https (http only on a loopback address)' : 'must be https';
}
