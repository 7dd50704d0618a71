/** Loopback hosts: an identity provider's Issuer may be http there where the deployment allows it. */

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
