/**
 * Single sign-on in the browser (issue #40): the console is a public client of Gatehouse's
 * authorization endpoint, with PKCE (RFC 7636). The verifier and the state stay in this tab's
 * `sessionStorage` between the departure to the identity provider and the return to
 * `/console/callback` (a full page load in between, so memory cannot hold them); they are removed
 * as soon as the callback has read them, and neither is ever sent anywhere but to Gatehouse.
 */

const CLIENT_ID = 'gatehouseConsole';
const STORE = 'gatehouse.singleSignOn';

/** What anyone may learn of an instance's single sign-on (`GET /oauth/providers`). */
export interface PublicProvider {
  readonly CommonName: string;
  readonly Key: string;
}

interface Pending {
  readonly state: string;
  readonly verifier: string;
  readonly redirectUri: string;
}

const base64url = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

const randomText = (): string => base64url(crypto.getRandomValues(new Uint8Array(32)));

/** The enabled providers of the instance named `instance` (an empty list for an unknown one). */
export async function providersOf(instance: string, signal?: AbortSignal): Promise<readonly PublicProvider[]> {
  const res = await fetch(`/oauth/providers?${new URLSearchParams({ instance })}`, { headers: { Accept: 'application/json' }, ...(signal ? { signal } : {}) });
  if (!res.ok) return [];
  const body = (await res.json()) as unknown;
  return Array.isArray(body) ? (body as PublicProvider[]) : [];
}

/** Thrown when the browser cannot do PKCE: `crypto.subtle` exists in secure contexts only (HTTPS, or localhost). */
class NoSecureContext extends Error {
  constructor() {
    super('Single sign-on needs the console to be opened over HTTPS.');
    this.name = 'NoSecureContext';
  }
}

/**
 * Leaves for Gatehouse's authorization endpoint, which sends the browser on to the provider;
 * it comes back to `/console/callback` with a one-time code (or an error).
 */
export async function startSingleSignOn(instance: string, provider: PublicProvider, loginHint: string | undefined): Promise<void> {
  if (!globalThis.crypto?.subtle) throw new NoSecureContext();
  const verifier = randomText();
  const state = randomText();
  const redirectUri = `${location.origin}/console/callback`;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const pending: Pending = { state, verifier, redirectUri };
  sessionStorage.setItem(STORE, JSON.stringify(pending));
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: redirectUri,
    code_challenge: base64url(digest),
    code_challenge_method: 'S256',
    state,
    instance,
    provider: provider.Key,
    ...(loginHint ? { login_hint: loginHint } : {}),
  });
  location.assign(`/oauth/authorize?${query}`);
}

/**
 * The sign-in this tab started, taken (removed from storage) when `state` is its own: undefined
 * for another tab's, a stale or a replayed callback.
 */
export function takePending(state: string | null): Pending | undefined {
  const text = sessionStorage.getItem(STORE);
  sessionStorage.removeItem(STORE);
  if (!text || !state) return undefined;
  try {
    const pending = JSON.parse(text) as Pending;
    return pending.state === state ? pending : undefined;
  } catch {
    return undefined;
  }
}
