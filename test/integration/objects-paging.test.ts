/**
 * Pagination: bounds (400, never a silent clamp), the empty page at the end, stable creation
 * order, and the cost of walking a collection: one Query a page, O(total items) in all.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createObject } from '#shared/db/object-writes.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';
import { cursorCache } from '#shared/objects/cursor-cache.ts';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let root: string;
let token: string;
const TOTAL = 45;
let keys: string[];

/** The DynamoDB requests made by `fn`, by command. */
const measure = <T>(fn: () => Promise<T>) => commandsOf(t, fn);

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  root = env.root.instance.key;
  token = env.root.tokens.Operator;
  keys = [];
  for (let i = 0; i < TOTAL; i++) {
    const r = await env.api.post(`/api/f/${root}/badgetypes`, { token, body: { $type: 'BadgeTypeInfo', CommonName: `b${String(i).padStart(3, '0')}` } });
    keys.push(r.body.Key);
  }
});

describe('pagination', () => {
  it('rejects a negative page, a pageSize outside 1..1000 and non-integers with 400', async () => {
    const bad: Array<Record<string, string | number>> = [{ page: -1 }, { pageSize: 0 }, { pageSize: 1001 }, { pageSize: -5 }, { page: 'x' }, { pageSize: '2.5' }];
    for (const query of bad) {
      const r = await env.api.get(`/api/f/${root}/badgetypes`, { token, query });
      expect(r.status, JSON.stringify(query)).toBe(400);
      expect(r.body.Error).toBe('InvalidPaging');
    }
    expect((await env.api.get(`/api/f/${root}/badgetypes`, { token, query: { pageSize: 1000 } })).body).toHaveLength(TOTAL);
  });

  it('defaults to page 0 of 20', async () => {
    const r = await env.api.get(`/api/f/${root}/badgetypes`, { token });
    expect(r.body.map((o: { Key: string }) => o.Key)).toEqual(keys.slice(0, 20));
  });

  it('walks every page in creation order, ending with an empty array, one Query a page', async () => {
    cursorCache.clear();
    await env.api.get('/api', { token }); // warm the authenticator's status cache
    const seen: string[] = [];
    const perPage: string[][] = [];
    for (let page = 0; ; page++) {
      const { result, commands } = await measure(() => env.api.get(`/api/f/${root}/badgetypes`, { token, query: { page, pageSize: 10 } }));
      perPage.push(commands);
      expect(result.status).toBe(200);
      if (result.body.length === 0) break;
      seen.push(...result.body.map((o: { Key: string }) => o.Key));
    }
    expect(seen).toEqual(keys);
    // 5 pages of items and the empty one: each exactly one Query.
    expect(perPage).toHaveLength(6);
    for (const commands of perPage) expect(commands).toEqual(['Query']);
  });

  it('finds a page without a cached cursor by reading keys only (another execution environment)', async () => {
    cursorCache.clear();
    const { result, commands } = await measure(() => env.api.get(`/api/f/${root}/badgetypes`, { token, query: { page: 3, pageSize: 7 } }));
    expect(result.body.map((o: { Key: string }) => o.Key)).toEqual(keys.slice(21, 28));
    expect(commands).toEqual(['Query', 'Query']);
    const beyond = await env.api.get(`/api/f/${root}/badgetypes`, { token, query: { page: 50, pageSize: 7 } });
    expect(beyond.body).toEqual([]);
  });

  it('keeps its place when earlier items are deleted during a walk', async () => {
    cursorCache.clear();
    const first = await env.api.get(`/api/f/${root}/badgetypes`, { token, query: { page: 0, pageSize: 10 } });
    await env.api.del(first.body[0].Href, { token });
    const second = await env.api.get(`/api/f/${root}/badgetypes`, { token, query: { page: 1, pageSize: 10 } });
    expect(second.body[0].Key).toBe(keys[10]);
    keys.shift();
  });

  it('costs O(total) to walk a large collection with pageSize 1000', async () => {
    const sub = await env.api.post(`/api/f/${root}/folders`, { token, body: { $type: 'FolderInfo', CommonName: 'many' } });
    const folder = (await import('#shared/db/objects-repo.ts')).getObject;
    const f = (await folder(t.db, sub.body.Key))!;
    const n = 2150;
    const made: string[] = [];
    for (let i = 0; i < n; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, n - i) }, async () => {
          const key = newKey();
          made.push(key);
          await createObject(t.db, { key, collection: 'people', type: 'PersonInfo', ...placeIn(f), version: 1, doc: { $type: 'PersonInfo', GivenName: 'x'.repeat(200) } });
        }),
      );
    }
    made.sort();
    const all: string[] = [];
    let queries = 0;
    let capacity = 0;
    for (let page = 0; ; page++) {
      const before = t.calls.length;
      const r = await env.api.get(`/api/f/${sub.body.Key}/people`, { token, query: { page, pageSize: 1000 } });
      const calls = t.calls.slice(before);
      queries += calls.filter((c) => c.command === 'Query').length;
      capacity += calls.reduce((s, c) => s + c.read, 0);
      all.push(...r.body.map((o: { Key: string }) => o.Key));
      if (r.body.length < 1000) break;
    }
    expect(all).toEqual(made);
    expect(queries).toBe(3);
    // Read capacity is proportional to the data (about 0.5 RCU per 4 KB), not to pages squared.
    expect(capacity).toBeLessThan(200);
  }, 180_000); // thousands of writes: minutes on a busy two-core machine
});

describe('listing scope', () => {
  let other: Tenant;
  beforeAll(async () => {
    other = await seedTenant(t, env.deps);
  });

  it('answers 403 for a folder outside the scope, empty or not, and [] for an empty folder inside it', async () => {
    await env.api.post(`/api/f/${other.instance.key}/doors`, { token: other.tokens.Operator, body: { $type: 'DoorInfo' } });
    expect((await env.api.get(`/api/f/${other.instance.key}/doors`, { token })).status).toBe(403);
    expect((await env.api.get(`/api/f/${other.instance.key}/holidays`, { token })).status).toBe(403);
    expect((await env.api.get(`/api/f/${root}/holidays`, { token })).body).toEqual([]);
    const sub = await env.api.post(`/api/f/${root}/folders`, { token, body: { $type: 'FolderInfo', CommonName: 'empty' } });
    expect((await env.api.get(`/api/f/${sub.body.Key}/holidays`, { token })).body).toEqual([]);
    expect((await env.api.get(`/api/f/${sub.body.Key}/holidays`, { token: other.tokens.Operator })).status).toBe(403);
  });
});
