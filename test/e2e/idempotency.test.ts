/**
 * `Idempotency-Key` over HTTP against the local runtime: the header reaches the pipeline as
 * API Gateway passes it, a retried POST replays the first answer byte for byte (one person), and
 * a key on `POST /token` is refused.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { documentedFetch } from '../support/documented-fetch.ts';
import { adminToken } from '../support/runtime.ts';

const url = inject('url');
const admin = inject('admin');

let token: string;

beforeAll(async () => {
  token = await adminToken(url, admin);
});

const post = (path: string, body: string, headers: Record<string, string>) =>
  documentedFetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe('Idempotency-Key over HTTP', () => {
  it('replays a retried POST people and creates one person', async () => {
    const givenName = `Retry-${randomBytes(4).toString('hex')}`;
    const body = JSON.stringify({ GivenName: givenName, Surname: 'Over HTTP' });
    const headers = { authorization: `Bearer ${token}`, 'Idempotency-Key': randomUUID() };
    const first = await post(`/api/f/${admin.instanceKey}/people`, body, headers);
    const firstText = await first.text();
    expect(first.status, firstText).toBe(201);
    const again = await post(`/api/f/${admin.instanceKey}/people`, body, headers);
    expect(again.status).toBe(201);
    expect(await again.text()).toBe(firstText);
    const reused = await post(`/api/f/${admin.instanceKey}/people`, JSON.stringify({ GivenName: givenName, Surname: 'Changed' }), headers);
    expect(reused.status).toBe(422);
    expect(((await reused.json()) as { Error: string }).Error).toBe('IdempotencyKeyReused');

    const listed = await documentedFetch(`${url}/api/f/${admin.instanceKey}/people?pageSize=1000`, { headers: { authorization: `Bearer ${token}` } });
    const people = (await listed.json()) as Array<{ GivenName: string }>;
    expect(people.filter((p) => p.GivenName === givenName)).toHaveLength(1);
  });

  it('answers 400 to a key on POST /token', async () => {
    const r = await documentedFetch(`${url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'Idempotency-Key': randomUUID() },
      body: new URLSearchParams({ grant_type: 'password', instance: admin.instanceName, username: admin.userName, password: admin.password, client_id: admin.clientId }).toString(),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { Error: string }).Error).toBe('IdempotencyKeyNotAllowed');
  });
});
