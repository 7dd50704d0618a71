/**
 * The object model over HTTP on the local runtime, as field clients use it: a child instance and
 * its administrator made through the API, that administrator's login, every collection's five
 * calls (with `Content-Type: application/json` even on GETs), vendor fields, paging until a short
 * page, concurrency and the card race.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { COLLECTIONS } from '#shared/model/collections.ts';
import { documentedFetch } from '../support/documented-fetch.ts';

const url = inject('url');
const admin = inject('admin');

interface Res {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

async function call(method: string, path: string, token: string, body?: unknown): Promise<Res> {
  const res = await documentedFetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

async function login(instance: string, username: string, password: string): Promise<string> {
  const res = await documentedFetch(`${url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: admin.clientId, client_secret: admin.clientSecret, instance, username, password }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`login ${instance}\\${username}: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

const suffix = randomBytes(4).toString('hex');
const PASSWORD = `Ch1ld!${randomBytes(6).toString('base64url')}`;
let rootToken: string;
let token: string;
let child: string;

beforeAll(async () => {
  rootToken = await login(admin.instanceName, admin.userName, admin.password);
  const inst = await call('POST', `/api/f/${admin.instanceKey}/instances`, rootToken, { $type: 'InstanceInfo', CommonName: `Objects-${suffix}` });
  expect(inst.status).toBe(201);
  child = inst.body.Key;
  const user = await call('POST', `/api/f/${child}/users`, rootToken, { $type: 'UserInfo', CommonName: 'boss', Role: 'Administrator', Password: PASSWORD });
  expect(user.status).toBe(201);
  expect(user.body).not.toHaveProperty('Password');
  token = await login(`Objects-${suffix}`, 'boss', PASSWORD);
});

describe('objects over HTTP', () => {
  it('answers GET /api with the child instance for its administrator', async () => {
    const r = await call('GET', '/api', token);
    expect(r.status).toBe(200);
    // The parent is outside the child's scope: its key is not shown.
    expect(r.body).toMatchObject({ Key: child, Href: `/api/f/${child}`, InFolderKey: null, InFolderHref: null });
    expect(JSON.stringify(r.body)).not.toContain(admin.instanceKey);
    expect((await call('GET', `/api/f/${admin.instanceKey}`, token)).status).toBe(403);
  });

  // Identity providers need an Administrator and their provider's fields: test/e2e/single-sign-on.test.ts.
  it.each(COLLECTIONS.filter((c) => !['instances', 'users', 'identityproviders'].includes(c.name)).map((c) => [c.name, c] as const))(
    'serves the five calls of %s',
    async (name, def) => {
      const base = `/api/f/${child}/${name}`;
      const sent = { $type: `Original.Model.${def.typeName}, Original.Model`, CommonName: `${name}-${suffix}`, FacilityCode: 9, Metadata: [{ Key: 'x', Values: '{"v":[1]}' }] };
      const created = await call('POST', base, token, sent);
      expect(created.status).toBe(201);
      expect(created.body.$type).toMatch(new RegExp(`\\.${def.typeName}, `));
      expect(created.body.FacilityCode).toBe(9);
      expect(created.body.Metadata[0].Values).toBe('{"v":[1]}');
      const href = created.body.Href;
      expect((await call('GET', href, token)).body).toEqual(created.body);
      expect((await call('GET', base, token)).body.map((o: { Key: string }) => o.Key)).toContain(created.body.Key);
      const put = await call('PUT', href, token, { ...created.body, Description: 'changed' });
      expect(put.status).toBe(def.putAnswersNoContent ? 204 : 200);
      const again = await call('GET', href, token);
      expect(again.body.Description).toBe('changed');
      expect((await call('PUT', href, token, again.body)).status).toBe(204);
      expect((await call('DELETE', href, token)).status).toBe(204);
      expect((await call('GET', href, token)).status).toBe(404);
    },
  );

  it('pages people until a short page, and at pageSize 1000', async () => {
    const folder = (await call('POST', `/api/f/${child}/folders`, token, { $type: 'FolderInfo', CommonName: 'paging' })).body.Key;
    const keys: string[] = [];
    for (let i = 0; i < 45; i += 15) {
      const batch = await Promise.all(Array.from({ length: 15 }, (_, j) => call('POST', `/api/f/${folder}/people`, token, { $type: 'PersonInfo', GivenName: `p${i + j}` })));
      keys.push(...batch.map((r) => r.body.Key));
    }
    keys.sort();
    const seen: string[] = [];
    for (let page = 0; ; page++) {
      const r = await call('GET', `/api/f/${folder}/people?page=${page}&pageSize=20`, token);
      seen.push(...r.body.map((o: { Key: string }) => o.Key));
      if (r.body.length < 20) break;
    }
    expect(seen).toEqual(keys);
    expect((await call('GET', `/api/f/${folder}/people?pageSize=1000`, token)).body).toHaveLength(45);
    expect((await call('GET', `/api/f/${folder}/people?page=3&pageSize=20`, token)).body).toEqual([]);
    expect((await call('GET', `/api/f/${folder}/people?pageSize=1001`, token)).status).toBe(400);
    expect((await call('GET', `/api/f/${folder}/people?page=-1`, token)).status).toBe(400);
    const notEmpty = await call('DELETE', `/api/f/${folder}`, token);
    expect(notEmpty.status).toBe(409);
    expect(notEmpty.body.Error).toBe('FolderNotEmpty');
  });

  it('resolves a card race to exactly one winner, and a version race too', async () => {
    const card = { $type: 'CardAssignmentInfo', EncodedCardNumber: 424242, FacilityCode: 1 };
    const results = await Promise.all(Array.from({ length: 8 }, () => call('POST', `/api/f/${child}/people`, token, { $type: 'PersonInfo', CardAssignments: [card] })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.Error === 'CardIsAlreadyAssigned')).toHaveLength(7);

    const o = (await call('POST', `/api/f/${child}/accesslevels`, token, { $type: 'AccessLevelInfo', CommonName: `race-${suffix}` })).body;
    const puts = await Promise.all(Array.from({ length: 5 }, (_, i) => call('PUT', o.Href, token, { ...o, Description: `v${i}` })));
    expect(puts.filter((r) => r.status === 200)).toHaveLength(1);
    expect(puts.filter((r) => r.status === 409 && r.body.Error === 'ConcurrencyConflict')).toHaveLength(4);
  });

  it('adds and removes notes, and answers takeownership GET with 405 Allow: POST', async () => {
    const p = (await call('POST', `/api/f/${child}/people`, token, { $type: 'PersonInfo', GivenName: 'noted' })).body;
    const n = await call('POST', `${p.Href}/notes`, token, { $type: 'NoteInfo', NoteText: 'hello' });
    expect(n.status).toBe(201);
    expect(n.body.CreatedBy).toBe('boss');
    expect((await call('GET', p.Href, token)).body.Notes).toEqual([n.body]);
    expect((await call('DELETE', `${p.Href}/notes/${n.body.Key}`, token)).status).toBe(204);
    const t = await call('GET', `${p.Href}/takeownership`, token);
    expect(t.status).toBe(405);
    expect(t.headers.get('allow')).toBe('POST');
    expect((await call('GET', `${p.Href}/commonname`, token)).status).toBe(200);
  });
});
