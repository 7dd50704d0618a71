/**
 * HTTP calls as the original service's field clients make them: a bearer token and
 * `Content-Type: application/json` on every call, GETs included. The answer keeps the body text
 * as sent, because `JSON.parse` rounds the 64-bit numbers some tests check. Every answer is
 * checked against the OpenAPI document (`documented-fetch.ts`).
 */
import { documentedFetch } from './documented-fetch.ts';

interface FieldResponse {
  readonly status: number;
  /** The body text as sent. */
  readonly text: string;
  readonly body: any;
}

export type FieldCall = (method: string, path: string, body?: unknown, rawBody?: string) => Promise<FieldResponse>;

/** A caller of the runtime at `url` with the access token `token()` answers at call time. */
export function fieldClient(url: string, token: () => string): FieldCall {
  return async (method, path, body, rawBody) => {
    const res = await documentedFetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
      ...(rawBody !== undefined ? { body: rawBody } : body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  };
}
