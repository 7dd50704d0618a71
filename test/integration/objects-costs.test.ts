/**
 * Request counts of each call, measured with ReturnConsumedCapacity on every DynamoDB request, so a
 * regression (a second read, a Scan, a Query per page walked) fails here.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cursorCache, placementCache } from '#shared/objects/cursor-cache.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi } from '../support/tokens.ts';

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let root: string;
let token: string;

async function measure<T>(fn: () => Promise<T>): Promise<{ result: T; commands: string[]; read: number; write: number }> {
  const before = t.calls.length;
  const result = await fn();
  const calls = t.calls.slice(before);
  return {
    result,
    commands: calls.map((c) => c.command),
    read: calls.reduce((s, c) => s + c.read, 0),
    write: calls.reduce((s, c) => s + c.write, 0),
  };
}

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  root = env.root.instance.key;
  token = env.root.tokens.Operator;
  await env.api.get('/api', { token }); // warm the authenticator's status cache
});

describe('request counts', () => {
  it('GET /api and GET one object: one GetItem', async () => {
    expect((await measure(() => env.api.get('/api', { token }))).commands).toEqual(['GetItem']);
    const p = (await env.api.post(`/api/f/${root}/people`, { token, body: { $type: 'PersonInfo', GivenName: 'x' } })).body;
    const m = await measure(() => env.api.get(p.Href, { token }));
    expect(m.result.status).toBe(200);
    expect(m.commands).toEqual(['GetItem']);
    expect((await measure(() => env.api.get(`${p.Href}/meta`, { token }))).commands).toEqual(['GetItem']);
    expect((await measure(() => env.api.get(`/api/f/${root}`, { token }))).commands).toEqual(['GetItem']);
  });

  it('a miss in the caller\'s own instance: one GetItem; in a sub-folder: the folder is read once more', async () => {
    const miss = await measure(() => env.api.get(`/api/f/${root}/people/0123456789abcdef01234567`, { token }));
    expect(miss.result.status).toBe(404);
    expect(miss.commands).toEqual(['GetItem']);
    const f = (await env.api.post(`/api/f/${root}/folders`, { token, body: { $type: 'FolderInfo' } })).body;
    const sub = await measure(() => env.api.get(`/api/f/${f.Key}/people/0123456789abcdef01234567`, { token }));
    expect(sub.result.status).toBe(404);
    expect(sub.commands.length).toBeLessThanOrEqual(2);
  });

  it('a list page: one Query, also in a sub-folder and for the empty last page', async () => {
    const f = (await env.api.post(`/api/f/${root}/folders`, { token, body: { $type: 'FolderInfo' } })).body;
    for (let i = 0; i < 5; i++) await env.api.post(`/api/f/${f.Key}/holidays`, { token, body: { $type: 'HolidayInfo', CommonName: `h${i}` } });
    cursorCache.clear();
    for (const page of [0, 1, 2]) {
      const m = await measure(() => env.api.get(`/api/f/${f.Key}/holidays`, { token, query: { page, pageSize: 2 } }));
      expect(m.commands).toEqual(['Query']);
    }
    const end = await measure(() => env.api.get(`/api/f/${f.Key}/holidays`, { token, query: { page: 3, pageSize: 2 } }));
    expect(end.result.body).toEqual([]);
    expect(end.commands).toEqual(['Query']);
  });

  it('create: one TransactWriteItems (GetItem of the folder first when its placement is not cached); PUT: GetItem and one TransactWriteItems; an unchanged PUT writes nothing', async () => {
    placementCache.clear();
    const cold = await measure(() => env.api.post(`/api/f/${root}/schedules`, { token, body: { $type: 'ScheduleInfo', CommonName: 'cold' } }));
    expect(cold.commands).toEqual(['GetItem', 'TransactWriteItems']);
    const c = await measure(() => env.api.post(`/api/f/${root}/schedules`, { token, body: { $type: 'ScheduleInfo', CommonName: 'sched' } }));
    expect(c.commands).toEqual(['TransactWriteItems']);
    const o = c.result.body;
    const r = await measure(() => env.api.put(o.Href, { token, body: { ...o, IsAlways: true } }));
    expect(r.result.status).toBe(204);
    expect(r.commands).toEqual(['GetItem', 'TransactWriteItems']);
    const same = await measure(() => env.api.put(o.Href, { token, body: { ...o, IsAlways: true, ConcurrencyVersion: 2 } }));
    expect(same.result.status).toBe(204);
    expect(same.commands).toEqual(['GetItem']);
    const d = await measure(() => env.api.del(o.Href, { token }));
    // The delete itself, then the relationships hook's Queries of connections from and to it.
    expect(d.commands).toEqual(['GetItem', 'TransactWriteItems', 'Query', 'Query']);
  });

  it('notes and input status: one read and one write', async () => {
    const i = (await env.api.post(`/api/f/${root}/inputs`, { token, body: { $type: 'InputInfo' } })).body;
    expect((await measure(() => env.api.post(`${i.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 'n' } }))).commands).toEqual(['GetItem', 'UpdateItem']);
    expect((await measure(() => env.api.put(`${i.Href}/status`, { token, body: { $type: 'InputStatusItem' } }))).commands).toEqual(['GetItem', 'PutItem']);
    expect((await measure(() => env.api.get(`${i.Href}/status`, { token }))).commands).toEqual(['GetItem', 'GetItem']);
  });

  it('deleting a folder checks emptiness with one keys-only Query per collection, never a Scan', async () => {
    const f = (await env.api.post(`/api/f/${root}/folders`, { token, body: { $type: 'FolderInfo' } })).body;
    const d = await measure(() => env.api.del(f.Href, { token }));
    expect(d.result.status).toBe(204);
    // 16 collections a folder can hold, then the relationships hook's 2 (connections from and to it).
    expect(d.commands.filter((c) => c === 'Query')).toHaveLength(16 + 2);
    expect(d.commands.filter((c) => c !== 'Query')).toEqual(['GetItem', 'TransactWriteItems']);
  });

  it('never scanned the table', () => {
    expect(t.calls.filter((c) => c.command === 'Scan')).toEqual([]);
  });
});
