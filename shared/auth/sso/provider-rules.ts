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

/**
 * True for a literal address a provider of the Internet does not have: private, link-local,
 * shared, unspecified or multicast (IPv4), or any IPv6 literal outside the global unicast range.
 * Gatehouse fetches an issuer's documents itself: an issuer must not point it at a private service.
 */
function isPrivateAddress(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return a === 0 || a === 10 || a === 127 || a >= 224 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168);
  }
  // An IPv6 literal: only global unicast (2000::/3) is public.
  if (h.includes(':')) return !/^[23][0-9a-f]{0,3}:/.test(h);
  return false;
}

/** Why `issuer` may not name an identity provider here, or undefined when it may. */
export function issuerProblem(issuer: string, allowLoopback: boolean): string | undefined {
  const url = new URL(issuer);
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') {
    if (allowLoopback && isLoopbackHost(url.hostname)) return undefined;
    return isPrivateAddress(url.hostname) ? 'must not be a private, loopback or link-local address' : undefined;
  }
  if (url.protocol === 'http:' && allowLoopback && isLoopbackHost(url.hostname)) return undefined;
  return allowLoopback ? 'must be https (http only on a loopback address)' : 'must be https';
}
