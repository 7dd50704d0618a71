/**
 * API calls of an end-to-end test with one token at a time: `call` answers whatever came back
 * (checked against the OpenAPI document), `ok` expects a status and answers the body.
 */
import { expect } from 'vitest';
import { documentedFetch } from './documented-fetch.ts';

interface Called {
  readonly status: number;
  readonly body: any;
  readonly text: string;
}

export interface E2eCalls {
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Called>;
  ok(method: string, path: string, body?: unknown, status?: number): Promise<any>;
}

/** Calls to `url` with the bearer token `token()` answers at each call (a test logs in later). */
export function e2eCalls(url: string, token: () => string): E2eCalls {
  const call: E2eCalls['call'] = async (method, path, body, headers = {}) => {
    const res = await documentedFetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
  };
  return {
    call,
    async ok(method, path, body, status = 201) {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
      return r.body;
    },
  };
}
