/**
 * Calls to a runtime that may be stopped or killed while they are in flight (the stop and crash
 * tests): a call that gets no answer is `undefined`, not a failure of the test.
 */
import { expect } from 'vitest';

/** What a call got: its status and body, or `undefined` when no answer came (connection refused or cut). */
export async function send(url: string, token: string, method: string, body?: unknown): Promise<{ status: number; body: any } | undefined> {
  try {
    const res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  } catch {
    return undefined;
  }
}

/** Answers a call must have while setting up. */
export async function must(url: string, token: string, method: string, body: unknown, status: number): Promise<any> {
  const res = await send(url, token, method, body);
  expect(res?.status, `${method} ${url}: ${JSON.stringify(res?.body)}`).toBe(status);
  return res!.body;
}
