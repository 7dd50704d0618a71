/**
 * A browser's part in a single sign-on, over HTTP with a cookie jar: follows the redirects from
 * Gatehouse's authorization endpoint to the provider and back, fills in oidc-provider's
 * development login form and its consent form, and stops at the first answer that leaves for
 * the client's redirect URI (or that is not a redirect). Gatehouse's own answers are checked
 * against the OpenAPI document; the provider's are not ours to document.
 */
import { documentedFetch } from './documented-fetch.ts';

export interface SsoOutcome {
  /** The client's redirect URI with its query (`code` and `state`, or `error`), when the flow got there. */
  readonly redirect: URL | undefined;
  /** The last answer when it was not a redirect to the client (a 400 page...). */
  readonly status: number;
  readonly contentType: string | undefined;
  readonly text: string;
  /** Every URL visited, in order. */
  readonly visited: readonly string[];
}

/** Cookies by origin and name (paths are ignored: oidc-provider scopes them, a test browser needs not). */
class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();
  store(url: URL, res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      if (at <= 0) continue;
      const cookies = this.jar.get(url.origin) ?? new Map<string, string>();
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
      this.jar.set(url.origin, cookies);
    }
  }
  header(url: URL): string {
    return [...(this.jar.get(url.origin) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

const formAction = (html: string): string | undefined => /<form[^>]*action="([^"]+)"/i.exec(html)?.[1]?.replace(/&amp;/g, '&');
const promptOf = (html: string): string | undefined => /name="prompt" value="([^"]+)"/i.exec(html)?.[1];

/**
 * Walks a sign-in from `authorizeUrl` as the account `login` until the browser is sent to a URL
 * starting with `clientRedirect`. `gatehouse` is Gatehouse's origin (its answers are checked).
 */
export async function signInThroughBrowser(authorizeUrl: string, opts: { readonly gatehouse: string; readonly clientRedirect: string; readonly login?: string }): Promise<SsoOutcome> {
  const jar = new CookieJar();
  const visited: string[] = [];
  let next: { url: URL; method: string; body?: string } = { url: new URL(authorizeUrl), method: 'GET' };
  for (let hop = 0; hop < 20; hop++) {
    visited.push(`${next.method} ${next.url}`);
    if (next.url.toString().startsWith(opts.clientRedirect)) {
      return { redirect: next.url, status: 0, contentType: undefined, text: '', visited };
    }
    const ours = next.url.origin === opts.gatehouse;
    const init: RequestInit = {
      method: next.method,
      redirect: 'manual',
      headers: {
        ...(jar.header(next.url) ? { cookie: jar.header(next.url) } : {}),
        ...(next.body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(next.body !== undefined ? { body: next.body } : {}),
    };
    const res = ours ? await documentedFetch(next.url, init) : await fetch(next.url, init);
    jar.store(next.url, res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      next = { url: new URL(location, next.url), method: 'GET' };
      continue;
    }
    const text = await res.text();
    const action = res.status === 200 && !ours ? formAction(text) : undefined;
    const prompt = promptOf(text);
    if (action && prompt === 'login') {
      next = { url: new URL(action, next.url), method: 'POST', body: new URLSearchParams({ prompt: 'login', login: opts.login ?? '', password: 'any' }).toString() };
      continue;
    }
    if (action && prompt === 'consent') {
      next = { url: new URL(action, next.url), method: 'POST', body: new URLSearchParams({ prompt: 'consent' }).toString() };
      continue;
    }
    return { redirect: undefined, status: res.status, contentType: res.headers.get('content-type') ?? undefined, text, visited };
  }
  throw new Error(`the sign-in did not end after 20 hops:\n${visited.join('\n')}`);
}
