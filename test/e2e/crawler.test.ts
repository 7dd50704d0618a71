/**
 * A hypermedia client on the local runtime: it starts at GET /api, follows every Link and Href
 * of every answer, and meets no 404 and no 5xx. Every response it receives is checked against
 * the OpenAPI document (test/support/documented-fetch.ts).
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { COLLECTIONS } from '#shared/model/collections.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { sharedValidator } from '../support/openapi-validator.ts';
import { crawl, populate } from '../support/tokens.ts';

const url = inject('url');
const admin = inject('admin');

async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await documentedFetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function login(instance: string, username: string, password: string): Promise<string> {
  const res = await documentedFetch(`${url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: admin.clientId, client_secret: admin.clientSecret, instance, username, password }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

const name = `Crawl-${randomBytes(4).toString('hex')}`;
const PASSWORD = `Cr4wl!${randomBytes(6).toString('base64url')}`;
let token: string;
let made: string[];

beforeAll(async () => {
  const root = await login(admin.instanceName, admin.userName, admin.password);
  const inst = await call('POST', `/api/f/${admin.instanceKey}/instances`, root, { $type: 'InstanceInfo', CommonName: name });
  expect(inst.status).toBe(201);
  expect((await call('POST', `/api/f/${inst.body.Key}/users`, root, { $type: 'UserInfo', CommonName: 'crawler', Role: 'Administrator', Password: PASSWORD })).status).toBe(201);
  token = await login(name, 'crawler', PASSWORD);
  made = await populate((method, path, body) => call(method, path, token, body), inst.body.Key, COLLECTIONS);
});

describe('crawler over HTTP', () => {
  it('follows every Link and Href from GET /api and meets no 404 or 500', async () => {
    const { visited, problems } = await crawl((path) => call('GET', path, token));
    expect(problems).toEqual([]);
    for (const href of made) expect(visited.get(href), href).toBe(200);
    expect(visited.size).toBeGreaterThan(200);
    // Events, event types and the event types an alarm definition references were reached too.
    const paths = [...visited.keys()];
    expect(paths.some((p) => /\/events\/[0-9a-f]{24}$/.test(p))).toBe(true);
    expect(paths.some((p) => /\/apps\/[0-9a-f]{24}\/eventtypes\/[0-9a-f]{24}$/.test(p))).toBe(true);
    expect(paths.some((p) => p.endsWith('/collections/eventtypes'))).toBe(true);
  });

  it('received only responses that the OpenAPI document describes', () => {
    const { validated, mismatches } = sharedValidator().report();
    console.info(`[e2e/crawler] ${Object.values(validated).reduce((a, b) => a + b, 0)} responses over ${Object.keys(validated).length} operations validated against docs/openapi.json`);
    expect(mismatches).toEqual([]);
  });
});
