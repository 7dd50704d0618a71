/**
 * Calls to Gatehouse's API with the session's access token. A token about to expire is renewed
 * first, a 401 once after a renewal; errors become {@link ApiFailure} with the spec's
 * `{Error, Message}` body (or the token error's), which pages show in an alert.
 */
import { refresh, session } from './session.ts';

class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

export interface CallOptions {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly body?: unknown;
  readonly query?: Record<string, string | number | boolean | undefined>;
}

async function token(): Promise<string> {
  let s = session.value;
  if (s && s.expiresAt - Date.now() < 60_000) s = await refresh();
  if (!s) throw new ApiFailure(401, 'Unauthorized', 'Your session has ended: sign in again.');
  return s.accessToken;
}

/** A path with its query (undefined values left out). */
function withQuery(path: string, query: CallOptions['query']): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
  const text = q.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

async function send(path: string, opts: CallOptions, accessToken: string): Promise<Response> {
  return fetch(withQuery(path, opts.query), {
    method: opts.method ?? 'GET',
    headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json', ...(opts.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
  });
}

async function failureOf(res: Response): Promise<ApiFailure> {
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  const code = String(body.Error ?? body.error ?? res.status);
  const message = String(body.Message ?? body.error_description ?? `The request failed (${res.status} ${res.statusText}).`);
  return new ApiFailure(res.status, code, message);
}

/** A raw call: the response, after one renewal on 401 (for a page that reads the body itself). */
export async function call(path: string, opts: CallOptions = {}): Promise<Response> {
  let res = await send(path, opts, await token());
  if (res.status === 401 && (await refresh())) res = await send(path, opts, await token());
  if (!res.ok) throw await failureOf(res);
  return res;
}

/** A JSON call: the parsed body, or undefined for an empty answer (204). */
export async function api<T = unknown>(path: string, opts: CallOptions = {}): Promise<T> {
  const res = await call(path, opts);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The message to show for any failure. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
