/**
 * `Idempotency-Key` on the API's writes (issue #38 item 4): a retried POST replays the first
 * answer instead of creating a second person or event; a reused key, a key in progress, a bad
 * key and a key on `POST /token` answer clear errors; keys are the caller's, the method's and
 * the path's; records expire after 24 hours. Handlers over DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_SK } from '#shared/db/item-keys.ts';
import { createTestDb, withTimeline } from '../support/db.ts';
import { createApi } from '../support/api.ts';
import { invalidTokens, seedTenant, setupApi, testDeps, uniqueName, type Tenant } from '../support/tokens.ts';
import { setupEvents, type Env } from './events-fixture.ts';

let e: Env;
let people: string;
let other: Tenant;

beforeAll(async () => {
  e = await setupEvents();
  people = `/api/f/${e.root}/people`;
  other = await seedTenant(e.t, e.env.deps);
});

const key = () => randomUUID();
const person = (givenName: string, extra: Record<string, unknown> = {}) => ({ $type: 'PersonInfo', GivenName: givenName, Surname: 'Retry', ...extra });
const postPerson = (body: unknown, idempotencyKey?: string, token = e.token, path = people) =>
  e.api.post(path, { token, body, headers: idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey } });

/** The people of the root tenant named `givenName`. */
async function peopleNamed(givenName: string, folder = e.root, token = e.token): Promise<string[]> {
  const r = await e.api.get(`/api/f/${folder}/people`, { token, query: { pageSize: 1000 } });
  expect(r.status).toBe(200);
  return r.body.filter((p: any) => p.GivenName === givenName).map((p: any) => p.Key);
}

/** The idempotency records of the table (a test table: a scan is fine here). */
async function records(): Promise<Array<Record<string, any>>> {
  const out = await e.t.db.doc.send(
    new ScanCommand({ TableName: e.t.db.tableName, FilterExpression: 'begins_with(PK, :p) AND SK = :sk', ExpressionAttributeValues: { ':p': 'IK#', ':sk': IDEMPOTENCY_SK } }),
  );
  return out.Items ?? [];
}

/**
 * Holds the DynamoDB commands named `command` while `fn` runs, until `fn` releases them: a call
 * is then surely still running when another comes. `reached` settles when the first is held.
 */
async function holding<T>(command: string, fn: (reached: Promise<void>, release: () => void) => Promise<T>): Promise<T> {
  const name = `hold-${randomUUID()}`;
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reach = r));
  const released = new Promise<void>((r) => (release = r));
  e.t.db.raw.middlewareStack.add(
    (next, ctx) => async (args) => {
      if (ctx.commandName === `${command}Command`) {
        reach();
        await released;
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return await fn(reached, release);
  } finally {
    release();
    e.t.db.raw.middlewareStack.remove(name);
  }
}

describe('Idempotency-Key', () => {
  it('replays the first answer of POST people (status, headers, body) and creates one person', async () => {
    const name = uniqueName('Ann');
    const k = key();
    const first = await postPerson(person(name), k);
    expect(first.status, first.text).toBe(201);
    const { result: again, timeline } = await withTimeline(e.t, async (timeline, idle) => {
      const result = await postPerson(person(name), k);
      await idle();
      return { result, timeline };
    });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    // Nothing done again: only the key's conditional put, which finds the first answer.
    expect(timeline.filter((x) => x.startsWith('start ') && !x.endsWith('GetItem'))).toEqual(['start PutItem']);
    expect(await peopleNamed(name)).toEqual([first.body.Key]);
  });

  it('replays a retried publish to eventmessagesink: one event', async () => {
    const app = await e.app();
    const type = await e.eventType(app);
    const posting = e.posting(app.Key, type);
    const k = key();
    const send = () => e.api.post(`/api/f/${e.root}/eventmessagesink`, { token: e.token, body: posting, headers: { 'Idempotency-Key': k } });
    const first = await send();
    expect(first.status, first.text).toBe(201);
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    const listed = await e.api.get(`/api/f/${e.root}/events`, { token: e.token, query: { query: `{EventTypeKey: '${type.Key}'}`, pageSize: 1000 } });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.map((x: any) => x.Key)).toEqual([first.body.Key]);
  });

  it('answers 422 IdempotencyKeyReused to the same key with another body, and creates nothing', async () => {
    const name = uniqueName('Bea');
    const k = key();
    expect((await postPerson(person(name), k)).status).toBe(201);
    const other = await postPerson(person(name, { Surname: 'Other' }), k);
    expect(other.status).toBe(422);
    expect(other.body.Error).toBe('IdempotencyKeyReused');
    // Another query is another request too.
    const withQuery = await e.api.post(`${people}?x=1`, { token: e.token, body: person(name), headers: { 'Idempotency-Key': k } });
    expect(withQuery.status).toBe(422);
    expect(await peopleNamed(name)).toHaveLength(1);
  });

  it('answers 409 IdempotencyKeyInProgress with Retry-After: 1 while the first call runs, then replays it', async () => {
    const name = uniqueName('Cy');
    const k = key();
    // The first call's own write (the person's transaction) waits until the second has answered.
    const [first, second] = await holding('TransactWriteItems', async (reached, release) => {
      const running = postPerson(person(name), k);
      await reached;
      const meanwhile = await postPerson(person(name), k);
      release();
      return [await running, meanwhile] as const;
    });
    expect(first.status, first.text).toBe(201);
    expect(second.status).toBe(409);
    expect(second.body.Error).toBe('IdempotencyKeyInProgress');
    expect(second.headers['retry-after']).toBe('1');
    const third = await postPerson(person(name), k);
    expect(third.status).toBe(201);
    expect(third.text).toBe(first.text);
    expect(await peopleNamed(name)).toEqual([first.body.Key]);
  });

  it('replays nothing to a forged token, even on a new environment that runs a publish beside its checks', async () => {
    const app = await e.app();
    const type = await e.eventType(app);
    const posting = e.posting(app.Key, type);
    const k = key();
    const sink = `/api/f/${e.root}/eventmessagesink`;
    const first = await e.api.post(sink, { token: e.token, body: posting, headers: { 'Idempotency-Key': k } });
    expect(first.status, first.text).toBe(201);
    const { root } = e.env;
    const forged = (await invalidTokens(e.env.deps.config, e.env.deps.keys, root.users.Operator, root.instance, root.instance)).filter((t) => t.name !== 'expired token');
    for (const { name, token } of forged) {
      // A new environment: its first token's signature is checked beside the call.
      const cold = createApi(testDeps(e.t));
      const r = await cold.post(sink, { token, body: posting, headers: { 'Idempotency-Key': k } });
      expect(r.status, name).toBe(401);
      expect(r.text, name).not.toContain(first.body.Key);
    }
  });

  it('answers a replay with the CORS headers of the retry\'s origin, not the first call\'s', async () => {
    const cors = await setupApi(await createTestDb({ GATEHOUSE_CORS_ORIGINS: 'https://a.example,https://b.example' }));
    const path = `/api/f/${cors.root.instance.key}/people`;
    const k = key();
    const send = (origin: string) => cors.api.post(path, { token: cors.root.tokens.Operator, body: person('Cora'), headers: { 'Idempotency-Key': k, origin } });
    const first = await send('https://a.example');
    expect(first.status).toBe(201);
    expect(first.headers['access-control-allow-origin']).toBe('https://a.example');
    const again = await send('https://b.example');
    expect(again.text).toBe(first.text);
    expect(again.headers['access-control-allow-origin']).toBe('https://b.example');
    const elsewhere = await send('https://evil.example');
    expect(elsewhere.text).toBe(first.text);
    expect(elsewhere.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('replays a retried DELETE (204), where a plain retry would find the object gone (404)', async () => {
    const created = await postPerson(person(uniqueName('Del')));
    expect(created.status).toBe(201);
    const k = key();
    const first = await e.api.del(created.body.Href, { token: e.token, headers: { 'Idempotency-Key': k } });
    expect(first.status).toBe(204);
    const again = await e.api.del(created.body.Href, { token: e.token, headers: { 'Idempotency-Key': k } });
    expect([again.status, again.text]).toEqual([204, '']);
    expect((await e.api.del(created.body.Href, { token: e.token })).status).toBe(404);
  });

  it('keeps keys apart per user, per instance and per path', async () => {
    const name = uniqueName('Dee');
    const k = key();
    const operator = await postPerson(person(name), k);
    expect(operator.status).toBe(201);
    // Another user of the same instance, same key and body: a call of its own.
    const admin = await postPerson(person(name), k, e.env.root.tokens.Administrator);
    expect(admin.status).toBe(201);
    expect(admin.body.Key).not.toBe(operator.body.Key);
    // Another instance's user.
    const elsewhere = await postPerson(person(name), k, other.tokens.Operator, `/api/f/${other.instance.key}/people`);
    expect(elsewhere.status).toBe(201);
    // The same key on another path of the same caller.
    const reader = await e.api.post(`/api/f/${e.root}/badgetypes`, { token: e.token, body: { $type: 'BadgeTypeInfo', CommonName: uniqueName('badge') }, headers: { 'Idempotency-Key': k } });
    expect(reader.status, reader.text).toBe(201);
    expect(await peopleNamed(name)).toHaveLength(2);
    expect(await peopleNamed(name, other.instance.key, other.tokens.Operator)).toHaveLength(1);
  });

  it('refuses a key on POST /token (400), and a key that is too long, empty or not printable (400)', async () => {
    const token = await e.api.post('/token', { body: 'grant_type=password&username=x&password=y', contentType: 'application/x-www-form-urlencoded', headers: { 'Idempotency-Key': key() } });
    expect(token.status).toBe(400);
    expect(token.body.Error).toBe('IdempotencyKeyNotAllowed');
    const name = uniqueName('Eve');
    for (const bad of ['k'.repeat(256), 'k'.repeat(300), '', 'tab\there', 'é', '"unterminated\\"']) {
      const r = await postPerson(person(name), bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.Error).toBe('InvalidIdempotencyKey');
    }
    expect(await peopleNamed(name)).toEqual([]);
    // 255 characters, and the draft's quoted form, are keys.
    expect((await postPerson(person(name), 'k'.repeat(255))).status).toBe(201);
    const quoted = await postPerson(person(name), '"a \\"quoted\\" key"');
    expect(quoted.status).toBe(201);
  });

  it('changes nothing without the header: each call creates, and nothing more is written', async () => {
    const name = uniqueName('Flo');
    const before = (await records()).length;
    const { result: a, commands } = await e.measure(() => postPerson(person(name)));
    const b = await postPerson(person(name));
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(commands).not.toContain('PutItem');
    expect(commands).not.toContain('UpdateItem');
    expect(await peopleNamed(name)).toHaveLength(2);
    expect(await records()).toHaveLength(before);
  });

  it('keeps no error answer: a refused call runs again on retry', async () => {
    const name = uniqueName('Gus');
    const k = key();
    const bad = await postPerson({ $type: 'PersonInfo', GivenName: 12 }, k);
    expect(bad.status).toBe(400);
    const fixed = await postPerson({ $type: 'PersonInfo', GivenName: 12 }, k);
    expect(fixed.status).toBe(400);
    // The key is free again: the body that is right now runs (no 422, no replay of the 400).
    const good = await postPerson(person(name), k);
    expect(good.status).toBe(201);
  });

  it('keeps a record 24 hours (the table TTL), then runs the same key and body again', async () => {
    const name = uniqueName('Hal');
    const k = key();
    const before = new Set((await records()).map((r) => r.PK));
    const first = await postPerson(person(name), k);
    expect(first.status).toBe(201);
    const mine = (await records()).filter((r) => !before.has(r.PK));
    expect(mine).toHaveLength(1);
    const record = mine[0]!;
    expect(record.status).toBe('COMPLETED');
    expect(record.ttl).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 24 * 3600 - 60);
    expect(record.ttl).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 24 * 3600 + 1);
    // 24 hours on: DynamoDB may not have deleted it yet, but it no longer holds.
    await e.t.db.doc.send(
      new UpdateCommand({ TableName: e.t.db.tableName, Key: { PK: record.PK, SK: record.SK }, UpdateExpression: 'SET #t = :t', ExpressionAttributeNames: { '#t': 'ttl' }, ExpressionAttributeValues: { ':t': Math.floor(Date.now() / 1000) - 1 } }),
    );
    const later = await postPerson(person(name), k);
    expect(later.status).toBe(201);
    expect(later.body.Key).not.toBe(first.body.Key);
    expect(await peopleNamed(name)).toHaveLength(2);
  });

  it('costs at most 2 write units more than the same write without a key', async () => {
    const writes = async (idempotencyKey?: string) => {
      const from = e.t.calls.length;
      const r = await postPerson(person(uniqueName('Ida'), { Addresses: [{ $type: 'EmailAddressInfo', MailTo: 'ida@example.com', Type: 'Work' }] }), idempotencyKey);
      expect(r.status).toBe(201);
      // Writes only: the caller's status reads may fall in either call.
      return e.t.calls.slice(from).filter((c) => c.write > 0);
    };
    const units = (calls: ReadonlyArray<{ write: number }>) => calls.reduce((n, c) => n + c.write, 0);
    const plain = await writes();
    const keyed = await writes(key());
    expect(units(keyed) - units(plain)).toBe(2);
    // The claim and the saved answer (gzipped), one unit each.
    expect(keyed.filter((c) => c.command === 'PutItem' || c.command === 'UpdateItem').map((c) => [c.command, c.write])).toEqual([
      ['PutItem', 1],
      ['UpdateItem', 1],
    ]);
  });
});
