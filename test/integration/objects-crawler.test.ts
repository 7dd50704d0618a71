/**
 * A hypermedia client that starts at GET /api and follows every Link and Href meets no 404 and
 * no 5xx (in-process, through the real family handlers; the end-to-end twin runs over HTTP).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS } from '#shared/model/collections.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { crawl, populate, setupApi } from '../support/tokens.ts';

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let made: string[];

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  const token = env.root.tokens.Administrator;
  made = await populate(
    // The in-process client sends a string body as is: a JSON string body must be encoded here.
    (method, path, body) => env.api.call(method, path, { token, body: typeof body === 'string' ? JSON.stringify(body) : body }),
    env.root.instance.key,
    COLLECTIONS,
  );
});

describe('crawler', () => {
  it('follows every Link and Href from GET /api and meets no 404 or 500', async () => {
    const token = env.root.tokens.Administrator;
    const before = t.calls.length;
    const { visited, problems } = await crawl((path) => env.api.get(path, { token, headers: { 'content-type': 'application/json' } }));
    expect(problems).toEqual([]);
    // It reached everything that was made, each collection, and the standard links.
    for (const href of made) expect(visited.get(href), href).toBe(200);
    for (const c of COLLECTIONS) expect(visited.get(`/api/f/${env.root.instance.key}/${c.name}`), c.name).toBe(200);
    expect([...visited.keys()].some((p) => p.endsWith('/takeownership'))).toBe(true);
    expect(visited.size).toBeGreaterThan(200);
    // Events, event types and the event types an alarm definition references were reached too.
    const paths = [...visited.keys()];
    expect(paths.some((p) => /\/events\/[0-9a-f]{24}$/.test(p))).toBe(true);
    expect(paths.some((p) => /\/apps\/[0-9a-f]{24}\/eventtypes\/[0-9a-f]{24}$/.test(p))).toBe(true);
    expect(paths.some((p) => p.endsWith('/collections/eventtypes'))).toBe(true);
    // No Scan on any path.
    expect(t.calls.slice(before).filter((c) => c.command === 'Scan')).toEqual([]);
  });
});
