/**
 * SCIM over HTTP against the local runtime: the route table sends `/scim/v2/...` (PATCH included)
 * to the scim family, a token made with the API opens its instance's SCIM base, and a SCIM change
 * is an ordinary object change: a webhook subscription of the instance receives its audit events.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { documentedFetch } from '../support/documented-fetch.ts';
import { adminToken } from '../support/runtime.ts';
import { uniqueName } from '../support/tokens.ts';
import { WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';

const url = inject('url');
const admin = inject('admin');
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

let token: string;
let root: string;
let scimToken: string;
const rx = new WebhookReceiver();

async function call(method: string, path: string, bearer: string, body?: unknown, contentType = 'application/json') {
  const res = await documentedFetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  token = await adminToken(url, admin);
  root = admin.instanceKey;
  await rx.start();
  const created = await call('POST', `/api/f/${root}/scimtokens`, token, { CommonName: uniqueName('e2e') });
  expect(created.status).toBe(201);
  scimToken = created.body.Token;
});

afterAll(async () => {
  await rx.stop();
});

describe('SCIM over HTTP', () => {
  it('provisions a person whose changes reach a webhook as audit events', async () => {
    const path = `/${uniqueName('scim')}`;
    const hook = await call('POST', `/api/f/${root}/webhooks`, token, { CommonName: path, Url: rx.endpoint(path) });
    expect(hook.status).toBe(201);
    rx.secrets(path, hook.body.Secret);

    const base = `/scim/v2/${root}`;
    const userName = `${uniqueName('e2e')}@example.com`;
    const created = await call('POST', `${base}/Users`, scimToken, { schemas: [USER], userName, name: { givenName: 'Edsger', familyName: 'Dijkstra' } }, 'application/scim+json');
    expect(created.status).toBe(201);
    expect(created.contentType).toMatch(/^application\/scim\+json/);
    const id = created.body.id as string;
    const patched = await call('PATCH', `${base}/Users/${id}`, scimToken, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }, 'application/scim+json');
    expect(patched.status).toBe(200);
    expect(patched.body.active).toBe(false);
    const found = await call('GET', `${base}/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`, scimToken);
    expect(found.body.Resources.map((u: { id: string }) => u.id)).toEqual([id]);
    // The access token is not a SCIM token, and the SCIM token is not an access token.
    expect((await call('GET', `${base}/Users`, token)).status).toBe(401);
    expect((await call('GET', `/api/f/${root}/people/${id}`, scimToken)).status).toBe(401);

    // Created, then updated: both audited, both delivered.
    const mentions = () => rx.received(path).filter((d) => JSON.stringify(d.payload.data).includes(id));
    expect(await waitFor(() => mentions().length >= 2, 30_000), `deliveries: ${mentions().length}`).toBe(true);
    expect(rx.invalid(path)).toEqual([]);
    expect((await call('DELETE', `/api/f/${root}/webhooks/${hook.body.Key}`, token)).status).toBe(204);
  });
});
