/** Optimistic concurrency: 409 ConcurrencyConflict on a stale version, and no update ever lost. */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi } from '../support/tokens.ts';

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let base: string;
let token: string;

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  base = `/api/f/${env.root.instance.key}/accesslevels`;
  token = env.root.tokens.Operator;
});

const create = async (name: string) =>
  (await env.api.post(base, { token, body: { $type: 'AccessLevelInfo', CommonName: name, Counter: 0 } })).body;

describe('optimistic concurrency', () => {
  it('rejects a PUT carrying a stale ConcurrencyVersion with 409 ConcurrencyConflict', async () => {
    const o = await create('stale');
    const first = await env.api.put(o.Href, { token, body: { ...o, Counter: 1 } });
    expect(first.status).toBe(200);
    expect(first.body.ConcurrencyVersion).toBe(2);
    const stale = await env.api.put(o.Href, { token, body: { ...o, Counter: 2 } });
    expect(stale.status).toBe(409);
    expect(stale.body.Error).toBe('ConcurrencyConflict');
    expect((await env.api.get(o.Href, { token })).body.Counter).toBe(1);
  });

  it('replaces unconditionally when the PUT has no ConcurrencyVersion', async () => {
    const o = await create('unconditional');
    await env.api.put(o.Href, { token, body: { ...o, Counter: 1 } });
    const { ConcurrencyVersion: _v, ...noVersion } = o;
    const r = await env.api.put(o.Href, { token, body: { ...noVersion, Counter: 5 } });
    expect(r.status).toBe(200);
    expect(r.body.ConcurrencyVersion).toBe(3);
    expect(r.body.Counter).toBe(5);
  });

  it('lets exactly one of parallel PUTs of the same version win', async () => {
    const o = await create('race');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => env.api.put(o.Href, { token, body: { ...o, Counter: i + 1 } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(7);
    const winner = results.find((r) => r.status === 200)!;
    const now = await env.api.get(o.Href, { token });
    expect(now.body.Counter).toBe(winner.body.Counter);
    expect(now.body.ConcurrencyVersion).toBe(2);
  });

  it('loses no update among parallel PUTs without a version: each one is applied once, in some order', async () => {
    const o = await create('lost-update');
    const { ConcurrencyVersion: _v, ...noVersion } = o;
    const n = 10;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => env.api.put(o.Href, { token, body: { ...noVersion, Counter: i + 1 } })),
    );
    expect(results.map((r) => r.status)).toEqual(new Array(n).fill(200));
    // Every write got its own version: none overwrote another without being counted.
    const versions = results.map((r) => r.body.ConcurrencyVersion).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: n }, (_, i) => i + 2));
    const last = results.find((r) => r.body.ConcurrencyVersion === n + 1)!;
    const now = await env.api.get(o.Href, { token });
    expect(now.body.ConcurrencyVersion).toBe(n + 1);
    expect(now.body.Counter).toBe(last.body.Counter);
  });

  it('keeps a note added in parallel with PUTs, and the PUTs', async () => {
    const o = await create('notes-race');
    const { ConcurrencyVersion: _v, ...noVersion } = o;
    const [notes, puts] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, (_, i) => env.api.post(`${o.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: `n${i}` } }))),
      Promise.all(Array.from({ length: 5 }, (_, i) => env.api.put(o.Href, { token, body: { ...noVersion, Counter: i + 1 } }))),
    ]);
    expect(notes.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(puts.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const now = await env.api.get(o.Href, { token });
    expect(now.body.Notes.map((n: { NoteText: string }) => n.NoteText).sort()).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    expect(now.body.ConcurrencyVersion).toBe(6);
  });
});
