/**
 * The generic calls of every collection, through that collection's own path
 * (`/api/f/<folder>/<collection>/<key>/...`, folders and instances included): a link is read, a
 * note added and removed again, a source's connections of one relation listed and disconnected,
 * and an empty child instance deleted. Each answer is also checked against the OpenAPI document
 * by `api.call`, so these are the operations the other tests reach for one collection only.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS } from '#shared/model/collections.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi, uniqueName, type Tenant } from '../support/tokens.ts';

let t: TestDb;
let api: Awaited<ReturnType<typeof setupApi>>['api'];
let root: Tenant;
let I: string;

const T = (name: string) => `Acme.${name}, Acme`;

/** The fields a collection requires besides CommonName. */
const REQUIRED: Readonly<Record<string, Record<string, unknown>>> = {
  identityproviders: { Issuer: 'https://idp.example.com', ClientId: 'gatehouse', ClientSecret: 'a-secret' },
};

async function make(collection: string, typeName: string): Promise<string> {
  const body = { $type: T(typeName), CommonName: uniqueName(collection), ...REQUIRED[collection] };
  const res = await api.post(`/api/f/${I}/${collection}`, { token: root.tokens.Administrator, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.Key as string;
}

beforeAll(async () => {
  t = await createTestDb();
  ({ api, root } = await setupApi(t));
  I = root.instance.key;
});

describe('every collection through its own path', () => {
  it.each(COLLECTIONS.map((c) => [c.name, c] as const))('reads a link of, and adds and removes a note of, an object of %s', async (name, c) => {
    const token = root.tokens.Administrator;
    const path = `/api/f/${I}/${name}/${await make(name, c.typeName)}`;

    const meta = await api.get(`${path}/meta`, { token });
    expect(meta.status).toBe(200);
    expect(meta.body).toEqual([]);
    const note = await api.post(`${path}/notes`, { token, body: { $type: 'NoteInfo', NoteText: `a note of ${name}` } });
    expect(note.status).toBe(201);
    expect((await api.get(`${path}/notes`, { token })).body).toEqual([note.body]);

    const removed = await api.del(`${path}/notes/${note.body.Key}`, { token });

    expect(removed.status).toBe(204);
    expect((await api.get(`${path}/notes`, { token })).body).toEqual([]);
    expect((await api.del(`${path}/notes/${note.body.Key}`, { token })).status).toBe(404);
  });

  it.each([
    ['inputs', 'InputInfo', 'Controller', 'controllers', 'Lp1502Info'],
    ['outputs', 'OutputInfo', 'Controller', 'controllers', 'Lp1502Info'],
    ['readers', 'VendorReaderInfo', 'Door', 'doors', 'DoorInfo'],
    ['inputscanners', 'InputScannerInfo', 'Controller', 'controllers', 'Lp1502Info'],
    ['accesslevels', 'AccessLevelInfo', 'Schedule', 'schedules', 'ScheduleInfo'],
  ] as const)('lists the %s connections of one relation and disconnects one', async (collection, typeName, relation, targetCollection, targetType) => {
    const source = `/api/f/${I}/${collection}/${await make(collection, typeName)}`;
    const target = await make(targetCollection, targetType);
    const connected = await api.post(`${source}/connections/${relation}`, { token: root.tokens.Operator, query: { relatedKey: target } });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);

    const listed = await api.get(`${source}/connections/${relation}`, { token: root.tokens.ReadOnly });
    expect(listed.status).toBe(200);
    expect(listed.body.map((o: { Key: string }) => o.Key)).toEqual([target]);

    const gone = await api.del(`${source}/connections/${relation}/${target}`, { token: root.tokens.Operator });

    expect(gone.status).toBe(204);
    expect((await api.get(`${source}/connections/${relation}`, { token: root.tokens.ReadOnly })).body).toEqual([]);
  });

  it('deletes an empty child instance through the instances collection', async () => {
    const path = `/api/f/${I}/instances/${await make('instances', 'InstanceInfo')}`;

    const removed = await api.del(path, { token: root.tokens.Administrator });

    expect(removed.status).toBe(204);
    expect((await api.get(path, { token: root.tokens.Administrator })).status).toBe(404);
  });
});
