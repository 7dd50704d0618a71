import { beforeAll, describe, expect, it } from 'vitest';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createObject } from '#shared/db/object-writes.ts';
import { cardClaim } from '#shared/model/claims.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

let t: TestDb;
let api: Awaited<ReturnType<typeof setupApi>>['api'];
let deps: Awaited<ReturnType<typeof setupApi>>['deps'];
let root: Tenant;
let child: Tenant;
let sibling: Tenant;
const keys: Record<string, string> = {};

const person = (name: string, extra: Record<string, unknown> = {}) => ({ $type: 'Acme.Model.PersonInfo, Acme.Model', CommonName: name, ...extra });

beforeAll(async () => {
  t = await createTestDb();
  ({ api, deps, root } = await setupApi(t));
  child = await seedTenant(t, deps, { parent: root.instance });
  sibling = await seedTenant(t, deps);
  const admin = root.tokens.Administrator;
  const make = async (coll: string, body: Record<string, unknown>, folder = root.instance.key, token = admin) => {
    const res = await api.post(`/api/f/${folder}/${coll}`, { token, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.Key as string;
  };
  keys.ann = await make('people', person('Ann Lee', {
    GivenName: 'Ann', Department: 'Engineering', Tags: ['vip'], Monikers: [{ Namespace: 'hr', Nickname: 'ann' }],
    Addresses: [{ $type: 'EmailAddressInfo', MailTo: 'ann@example.com', Type: 'work' }],
    CardAssignments: [{ $type: 'CardAssignmentInfo', EncodedCardNumber: 1001, FacilityCode: 7, ActiveOn: '2024-01-01T00:00:00Z' }],
    Metadata: [{ Application: 'hr', Values: '{"a":1}' }], FacilityCode: 7,
  }));
  keys.bob = await make('people', person('Bob Stone', { Department: 'Sales', CardAssignments: [{ EncodedCardNumber: 2002, ActiveOn: '2025-06-01T00:00:00Z' }] }));
  keys.input = await make('inputs', { $type: 'X.AscInputInfo, X', CommonName: 'Door contact', Vendor: 'asc' });
  keys.kid = await make('people', person('Kid Person', { Department: 'Engineering' }), child.instance.key, child.tokens.Administrator);
  keys.stranger = await make('people', person('Stranger', { Department: 'Engineering' }), sibling.instance.key, sibling.tokens.Administrator);
});

async function search(query: unknown, opts: { token?: string; folder?: string; query?: Record<string, string | number | boolean> } = {}) {
  return api.post(`/api/f/${opts.folder ?? root.instance.key}/search`, {
    token: opts.token ?? root.tokens.ReadOnly,
    body: typeof query === 'string' ? JSON.stringify(query) : query,
    query: opts.query,
  });
}

const names = (res: { body: any }) => (res.body as Array<{ CommonName: string }>).map((o) => o.CommonName).sort();

describe('search', () => {
  it('answers full objects with $type for a JSON-string query with single quotes', async () => {
    const res = await search("{ '_t': 'Person', 'Department': 'Engineering' }");
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(['Ann Lee']);
    expect(res.body[0]).toMatchObject({ $type: 'Gatehouse.Model.PersonInfo, Gatehouse.Model', Key: keys.ann, Href: `/api/f/${root.instance.key}/people/${keys.ann}` });
  });

  it('accepts a plain object body, _t with and without Info, arrays and $in, and derived types', async () => {
    expect(names(await search({ _t: 'PersonInfo' }))).toEqual(['Ann Lee', 'Bob Stone']);
    expect(names(await search({ _t: 'Input' }))).toEqual(['Door contact']);
    expect(names(await search({ _t: ['Person', 'AscInputInfo'] }))).toEqual(['Ann Lee', 'Bob Stone', 'Door contact']);
    expect(names(await search({ _t: { $in: ['Input'] } }))).toEqual(['Door contact']);
    expect(names(await search({ Vendor: 'asc' }))).toEqual(['Door contact']);
  });

  it('filters nested paths, vendor fields and shell forms', async () => {
    expect(names(await search({ 'Addresses.MailTo': 'ann@example.com' }))).toEqual(['Ann Lee']);
    expect(names(await search({ 'CardAssignments.EncodedCardNumber': 2002 }))).toEqual(['Bob Stone']);
    expect(names(await search({ 'Monikers.Nickname': 'ann' }))).toEqual(['Ann Lee']);
    expect(names(await search({ Tags: 'vip' }))).toEqual(['Ann Lee']);
    expect(names(await search({ 'Metadata.Application': 'hr' }))).toEqual(['Ann Lee']);
    expect(names(await search(`{ _id: ObjectId("${keys.bob}") }`))).toEqual(['Bob Stone']);
    expect(names(await search('{ "CardAssignments.ActiveOn": { $lt: ISODate("2025-01-01T00:00:00Z") } }'))).toEqual(['Ann Lee']);
    expect(names(await search({ 'CardAssignments.ActiveOn': { $gte: { $date: '2025-01-01T00:00:00Z' } } }))).toEqual(['Bob Stone']);
    expect(names(await search({ CommonName: { $regex: '^bob', $options: 'i' } }))).toEqual(['Bob Stone']);
  });

  it('includes child instances only when asked, and never a sibling', async () => {
    expect(names(await search({ Department: 'Engineering' }))).toEqual(['Ann Lee']);
    expect(names(await search({ Department: 'Engineering' }, { query: { includeChildInstances: true } }))).toEqual(['Ann Lee', 'Kid Person']);
    const fromChild = await search({ Department: 'Engineering' }, { token: child.tokens.ReadOnly, folder: child.instance.key, query: { includeChildInstances: true } });
    expect(names(fromChild)).toEqual(['Kid Person']);
    expect((await search({}, { folder: sibling.instance.key })).status).toBe(403);
    expect((await search({}, { token: child.tokens.ReadOnly, folder: root.instance.key })).status).toBe(403);
  });

  it('pages results in a stable order and rejects bad paging', async () => {
    const all = await search({ _t: 'Person' }, { query: { pageSize: 1000 } });
    const paged = [];
    for (let page = 0; ; page++) {
      const res = await search({ _t: 'Person' }, { query: { page, pageSize: 1 } });
      if (res.body.length === 0) break;
      paged.push(...res.body);
    }
    expect(paged.map((o: any) => o.Key)).toEqual(all.body.map((o: any) => o.Key));
    expect((await search({}, { query: { pageSize: 0 } })).status).toBe(400);
    expect((await search({}, { query: { page: -1 } })).status).toBe(400);
  });

  it('rejects unsafe, oversized and malformed queries with 400 InvalidQuery', async () => {
    for (const q of [{ $where: 'sleep(1)' }, { a: { $function: {} } }, { $expr: { $gt: [1, 0] } }, { a: { $bogus: 1 } }]) {
      const res = await search(q);
      expect(res.status).toBe(400);
      expect(res.body.Error).toBe('InvalidQuery');
    }
    expect((await search({ CommonName: 'x'.repeat(17_000) })).status).toBe(400);
    const bad = await search("{ 'a': ");
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toMatch(/offset/);
  });

  it('returns fast on a regular expression that would backtrack catastrophically', async () => {
    const started = Date.now();
    const res = await search({ CommonName: { $regex: '^(a|a)*(a+)+$' } });
    expect([200, 400]).toContain(res.status);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('search over event types', () => {
  it('finds event types by type and name, with their Href under the app', async () => {
    const admin = root.tokens.Administrator;
    const app = await api.post(`/api/f/${root.instance.key}/apps`, { token: admin, body: { $type: 'AppInfo', CommonName: 'Door app', Monikers: [{ Namespace: 'acme', Nickname: 'doors' }] } });
    expect(app.status).toBe(201);
    const et = await api.put(`/api/f/${root.instance.key}/apps/${app.body.Key}/eventtypes`, {
      token: admin,
      body: { $type: 'EventTypeInfo', CommonName: 'Door forced', Monikers: [{ Namespace: 'acme', Nickname: 'forced' }], Priority: 5 },
    });
    expect(et.status).toBe(201);
    for (const q of [{ CommonName: 'Door forced' }, { _t: 'EventType', Priority: 5 }]) {
      const res = await search(q);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
      expect(res.body[0].Href).toBe(`/api/f/${root.instance.key}/apps/${app.body.Key}/eventtypes/${et.body.Key}`);
    }
  });
});

describe('search cost', () => {
  it('reads O(matches) through the name and card indexes over thousands of people', async () => {
    // Thousands of people written straight through the repository (the API path is covered above).
    const total = 2000;
    for (let i = 0; i < total; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, total - i) }, (_, j) => {
          const n = i + j;
          const key = newKey();
          const o: StoredObject = {
            key, collection: 'people', type: 'PersonInfo', ...placeIn(root.instance), version: 1,
            doc: { $type: 'PersonInfo', CommonName: `Filler ${String(n).padStart(4, '0')}`, CardAssignments: [{ EncodedCardNumber: 50_000 + n }] },
          };
          return createObject(t.db, o, [cardClaim(root.instance.key, 50_000 + n)]);
        }),
      );
    }
    await search({ _t: 'Person' }); // warm the per-environment caches
    const measure = async (q: unknown) => {
      const before = t.calls.length;
      const res = await search(q);
      expect(res.status).toBe(200);
      const calls = t.calls.slice(before);
      return { count: res.body.length, requests: calls.length, read: calls.reduce((s, c) => s + c.read, 0) };
    };
    const byName = await measure({ CommonName: 'Filler 0007' });
    const byPrefix = await measure({ CommonName: { $regex: '^Filler 001' } });
    const byCard = await measure({ 'CardAssignments.EncodedCardNumber': 50_042 });
    const byKeys = await measure({ _id: { $in: [keys.ann, keys.bob] } });
    const byType = await measure({ _t: 'Person', GivenName: 'Ann' });
    console.info(JSON.stringify({ byName, byPrefix, byCard, byKeys, byType }));
    expect([byName.count, byPrefix.count, byCard.count, byKeys.count, byType.count]).toEqual([1, 10, 1, 2, 1]);
    // One read of the searched instance, then the index: a few capacity units, whatever the size.
    for (const m of [byName, byPrefix, byCard, byKeys]) {
      expect(m.requests).toBeLessThanOrEqual(3);
      expect(m.read).toBeLessThanOrEqual(3);
    }
    // Without an index the type partitions are read: every person, so far more.
    expect(byType.read).toBeGreaterThan(20 * byName.read);
  }, 180_000); // thousands of writes: minutes on a busy two-core machine
});
