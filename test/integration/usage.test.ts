/**
 * Tenant usage against DynamoDB Local: requests are counted per tenant and family in memory and
 * written as one UpdateItem per tenant and day once the flush interval has passed; the usage call
 * sums an instance and its sub-instances; events and objects are counted from the real stream
 * records; only Administrators of the instance (or above it) may read it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DynamoDBRecord } from 'aws-lambda';
import { collectionByName } from '#shared/model/collections.ts';
import { createStreamReader, type StreamReader } from '#local/storage/stream-reader.ts';
import { seedDeployment } from '#shared/auth/bootstrap.ts';
import { createLogger } from '#shared/logger.ts';
import { MAX_USAGE_INSTANCES } from '#shared/usage/usage-operations.ts';
import { createUsageRecorder } from '#shared/usage/recorder.ts';
import { meterStreamBatch } from '#shared/usage/stream.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedInstance, seedTenant, testDeps, uniqueName, type Tenant } from '../support/tokens.ts';

let t: TestDb;
/** The server clock of the handlers: tests move it past the flush interval. */
let clock = Date.parse('2026-05-01T10:00:00Z');
let api: ReturnType<typeof createApi>;
let parent: Tenant;
let child: Tenant;
let sibling: Tenant;
let reader: StreamReader;

const today = '2026-05-01';
const usagePath = (key: string) => `/api/f/${key}/usage`;

beforeAll(async () => {
  t = await createTestDb({ GATEHOUSE_USAGE_FLUSH_SECONDS: '60' });
  const deps = testDeps(t, { now: () => new Date(clock) });
  api = createApi(deps);
  parent = await seedTenant(t, deps);
  child = await seedTenant(t, deps, { parent: parent.instance });
  sibling = await seedTenant(t, deps);
  reader = createStreamReader(t.config);
});
afterAll(() => reader.destroy());

/** Moves the clock past the flush interval and makes one call, which flushes. */
async function passAMinute(token: string): Promise<void> {
  clock += 61_000;
  expect((await api.get('/api', { token })).status).toBe(200);
}

describe('request counts', () => {
  it('holds counts in memory for a minute, then writes one UpdateItem per tenant and day', async () => {
    const token = parent.tokens.Administrator;
    const base = `/api/f/${parent.instance.key}`;
    // The first flush is one interval after the environment's first request.
    expect((await api.get('/api', { token })).status).toBe(200);
    const before = t.calls.length;
    for (let i = 0; i < 5; i++) expect((await api.get(`${base}/people`, { token })).status).toBe(200);
    expect((await api.get(`${base}/people`, { token: child.tokens.Administrator })).status).toBe(403);
    // Nothing written yet: every call was a read.
    expect(t.calls.slice(before).filter((c) => c.write > 0)).toEqual([]);

    // The people family's environment flushes on its first request a minute later.
    clock += 61_000;
    const mark = t.calls.length;
    expect((await api.get(`${base}/people`, { token })).status).toBe(200);
    const writes = t.calls.slice(mark).filter((c) => c.command === 'UpdateItem');
    // Two tenants counted by the people family: the parent's seven calls and the child's refused one.
    expect(writes).toHaveLength(2);
    expect(writes.reduce((a, c) => a + c.write, 0)).toBeLessThanOrEqual(2);

    // The folders family (GET /api) flushes on its next request after the interval.
    await passAMinute(token);
    const u = await api.get(usagePath(parent.instance.key), { token, query: { from: today, to: today } });
    expect(u.status).toBe(200);
    expect(u.body.Days).toHaveLength(1);
    const day = u.body.Days[0];
    expect(day).toMatchObject({ $type: 'Gatehouse.Model.UsageDay, Gatehouse.Model', Day: today });
    // Parent: 6 people calls; child: 1 (a refused call is answered, so counted, under the caller's instance).
    expect(day.Requests.people).toBe(7);
    expect(day.Requests.folders).toBeGreaterThanOrEqual(2);
    expect(day.TotalRequests).toBe(Object.values(day.Requests as Record<string, number>).reduce((a, b) => a + b, 0));
  });

  it("counts a child instance's calls in its parent's usage, and not the other way round", async () => {
    const childToken = child.tokens.Administrator;
    const base = `/api/f/${child.instance.key}`;
    for (let i = 0; i < 3; i++) expect((await api.get(`${base}/doors`, { token: childToken })).status).toBe(200);
    clock += 61_000;
    expect((await api.get(`${base}/doors`, { token: childToken })).status).toBe(200);

    const doors = collectionByName('doors')!.family;
    const mine = await api.get(usagePath(child.instance.key), { token: childToken, query: { from: today, to: today } });
    expect(mine.status).toBe(200);
    expect(mine.body.InstanceKeys).toEqual([child.instance.key]);
    // Its refused people call of the first test, and its four doors calls.
    expect(mine.body.Days[0].Requests).toMatchObject({ people: 1, [doors]: 4 });

    const rolled = await api.get(usagePath(parent.instance.key), { token: parent.tokens.Administrator, query: { from: today, to: today } });
    expect(rolled.body.InstanceKeys).toEqual([parent.instance.key, child.instance.key]);
    // The parent made no doors calls: its doors count is the child's.
    expect(rolled.body.Days[0].Requests[doors]).toBe(4);
    expect(rolled.body.Days[0].Requests.people).toBe(7);
  });

  it('answers every day of the range, days without counts as zeros', async () => {
    const r = await api.get(usagePath(sibling.instance.key), { token: sibling.tokens.Administrator, query: { from: '2026-04-29', to: today } });
    expect(r.status).toBe(200);
    expect(r.body.Days.map((d: { Day: string }) => d.Day)).toEqual(['2026-04-29', '2026-04-30', today]);
    expect(r.body.Days[0]).toEqual({
      $type: 'Gatehouse.Model.UsageDay, Gatehouse.Model',
      Day: '2026-04-29',
      Requests: {},
      TotalRequests: 0,
      EventsPublished: 0,
      AuditEvents: 0,
      ObjectsCreated: 0,
      ObjectsDeleted: 0,
    });
  });
});

describe('the request log line', () => {
  /** The JSON lines (log lines and EMF metrics) written to stdout while `fn` runs. */
  async function jsonLines(fn: () => Promise<unknown>): Promise<Array<Record<string, any>>> {
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(((c: unknown) => {
      out.push(String(c));
      return true;
    }) as typeof process.stdout.write);
    try {
      await fn();
    } finally {
      vi.restoreAllMocks();
    }
    return out
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, any>);
  }
  const requestLines = async (fn: () => Promise<unknown>) => (await jsonLines(fn)).filter((l) => l.message === 'request');

  it("carries the caller's instance and the capacity its DynamoDB calls consumed", async () => {
    const logged = createApi(testDeps(t, { config: { ...t.config, logLevel: 'INFO' }, now: () => new Date(clock) }));
    const token = parent.tokens.Administrator;
    const before = t.calls.length;
    const [line, ...rest] = await requestLines(() => logged.get(`/api/f/${child.instance.key}/people`, { token }));
    const capacity = t.calls.slice(before).reduce((a, c) => a + c.read + c.write, 0);
    expect(rest).toEqual([]);
    expect(capacity).toBeGreaterThan(0);
    // The tenant is the caller's instance, whatever folder the path names.
    expect(line).toMatchObject({ family: 'people', operation: 'list', status: 200, instanceKey: parent.instance.key, consumedCapacity: capacity });
    expect(typeof line!.ms).toBe('number');
  });

  it('names the instance logged into as the tenant of a password grant, and none for a refused one', async () => {
    // With the metrics on, as in Lambda: the login metrics come with the log lines.
    const logged = createApi(testDeps(t, { config: { ...t.config, logLevel: 'INFO', metrics: true }, now: () => new Date(clock) }));
    const password = `Pw-${uniqueName('x')}!9a`;
    const instanceName = uniqueName('Login');
    const adminUser = uniqueName('admin');
    const seeded = await seedDeployment(testDeps(t), { instanceName, adminUser, adminPassword: password, clientSecret: t.config.clientSecret, dataDir: t.config.dataDir });
    const form = (pw: string) => ({
      body: new URLSearchParams({ grant_type: 'password', client_id: 'consoleApp', client_secret: t.config.clientSecret, instance: instanceName, username: adminUser, password: pw }).toString(),
      contentType: 'application/x-www-form-urlencoded',
    });
    const lines = await jsonLines(async () => {
      expect((await logged.post('/token', form(password))).status).toBe(200);
      expect((await logged.post('/token', form(`${password}-wrong`))).status).toBe(400);
      expect((await logged.post('/token', { body: `grant_type=password&client_id=nobody&instance=${instanceName}&username=${adminUser}&password=x`, contentType: 'application/x-www-form-urlencoded' })).status).toBe(400);
    });
    const [ok, refused] = lines.filter((l) => l.message === 'request');
    expect(ok).toMatchObject({ family: 'token', operation: 'token', status: 200, instanceKey: seeded.instanceKey });
    expect(refused).toMatchObject({ family: 'token', operation: 'token', status: 400 });
    expect(refused).not.toHaveProperty('instanceKey');
    // Two login attempts, one failed on its password; the unknown client is not an attempt.
    const logins = lines.filter((l) => l._aws && 'LoginAttempts' in l);
    expect(logins.map((l) => [l.LoginAttempts, l.LoginFailures])).toEqual([
      [1, 0],
      [1, 1],
    ]);
    expect(logins[0]._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
    const requests = lines.filter((l) => l._aws && 'Requests' in l);
    expect(requests).toHaveLength(3);
    expect(requests.every((l) => l.service === 'token' && l.Operation === 'token' && l.Errors === 0 && !('instanceKey' in l))).toBe(true);
  });

});

describe('write-side counts from the stream', () => {
  it('counts events published and objects created and deleted per instance, each stream record once', async () => {
    const token = sibling.tokens.Administrator;
    const base = `/api/f/${sibling.instance.key}`;
    const app = await api.post(`${base}/apps`, { token, body: { $type: 'AppInfo', CommonName: uniqueName('app') } });
    expect(app.status).toBe(201);
    const nickname = uniqueName('nick');
    expect((await api.put(`${app.body.Href}/eventtypes`, { token, body: { $type: 'EventTypeInfo', CommonName: 'door', Monikers: [{ Namespace: 'u', Nickname: nickname }] } })).status).toBe(201);
    const door = await api.post(`${base}/doors`, { token, body: { $type: 'DoorInfo', CommonName: uniqueName('door') } });
    expect(door.status).toBe(201);
    expect((await api.del(door.body.Href, { token })).status).toBe(204);
    for (let i = 0; i < 2; i++) {
      const posted = await api.post(`${base}/eventmessagesink`, {
        token,
        body: { $type: 'EventMessagePosting', OccurredOn: new Date(clock).toISOString(), AppKey: app.body.Key, EventTypeMoniker: { Namespace: 'u', Nickname: nickname }, RelatedObjects: [] },
      });
      expect(posted.status).toBeLessThan(300);
    }

    // The fan-out's metering over the table's real stream records, with a recorder flushing at once.
    const deps = { db: t.db, logger: createLogger({ logLevel: 'SILENT' }), now: () => new Date(clock), config: { usageFlushSeconds: 0 } };
    const recorder = createUsageRecorder(deps);
    const records = await allRecords();
    // A failed record stops the count there: the event source mapping delivers it and the rest again.
    const failedAt = records.findIndex((r) => r.dynamodb?.NewImage?.Coll?.S === 'events' && r.dynamodb?.NewImage?.Instances?.L?.at(-1)?.S === sibling.instance.key);
    meterStreamBatch(recorder, records, { batchItemFailures: [{ itemIdentifier: records[failedAt]!.dynamodb!.SequenceNumber! }] });
    meterStreamBatch(recorder, records.slice(failedAt), { batchItemFailures: [] });
    await recorder.flush();

    const r = await api.get(usagePath(sibling.instance.key), { token, query: { from: today, to: today } });
    expect(r.status).toBe(200);
    const day = r.body.Days[0];
    expect(day.EventsPublished).toBe(2);
    // The app, its event type and the door were created (the seeded instance and users too); the door was deleted.
    expect(day.ObjectsDeleted).toBe(1);
    expect(day.ObjectsCreated).toBeGreaterThanOrEqual(3 + 4);
    expect(r.body.StoredObjects).toBe(day.ObjectsCreated - day.ObjectsDeleted);
  });
});

describe('the instance subtree', () => {
  it('sums the instances below sub-instances too, breadth first', async () => {
    const top = await seedTenant(t, testDeps(t));
    const token = top.tokens.Administrator;
    const make = async (parentKey: string) => {
      const r = await api.post(`/api/f/${parentKey}/instances`, { token, body: { $type: 'InstanceInfo', CommonName: uniqueName('sub') } });
      expect(r.status).toBe(201);
      return r.body.Key as string;
    };
    const a = await make(top.instance.key);
    const aa = await make(a);
    const b = await make(top.instance.key);
    const r = await api.get(usagePath(top.instance.key), { token, query: { from: today, to: today } });
    expect(r.status).toBe(200);
    expect(r.body.InstanceKeys).toEqual([top.instance.key, a, b, aa]);
    expect((await api.get(usagePath(a), { token, query: { from: today, to: today } })).body.InstanceKeys).toEqual([a, aa]);
  });

  it(`rejects a subtree of more than ${MAX_USAGE_INSTANCES} instances with 400 QueryTooBroad`, async () => {
    const top = await seedTenant(t, testDeps(t));
    for (let i = 0; i < MAX_USAGE_INSTANCES; i++) await seedInstance(t, uniqueName('many'), top.instance);
    const r = await api.get(usagePath(top.instance.key), { token: top.tokens.Administrator });
    expect(r.status).toBe(400);
    expect(r.body.Error).toBe('QueryTooBroad');
  });
});

describe('who may read usage', () => {
  it('rejects a non-administrator of the instance with 403', async () => {
    for (const role of ['Operator', 'ReadOnly'] as const) {
      const r = await api.get(usagePath(parent.instance.key), { token: parent.tokens[role] });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ Error: expect.any(String), Message: expect.stringContaining('usage') });
    }
  });

  it("rejects another tenant's administrator and a child's administrator asking for its parent with 403", async () => {
    expect((await api.get(usagePath(parent.instance.key), { token: sibling.tokens.Administrator })).status).toBe(403);
    expect((await api.get(usagePath(parent.instance.key), { token: child.tokens.Administrator })).status).toBe(403);
    expect((await api.get(usagePath('0123456789abcdef01234567'), { token: parent.tokens.Administrator })).status).toBe(403);
  });

  it('lets an ancestor administrator read a sub-instance', async () => {
    const r = await api.get(usagePath(child.instance.key), { token: parent.tokens.Administrator, query: { from: today, to: today } });
    expect(r.status).toBe(200);
    expect(r.body.InstanceKey).toBe(child.instance.key);
  });

  it('rejects a folder that is not an instance with 404', async () => {
    const token = parent.tokens.Administrator;
    const folder = await api.post(`/api/f/${parent.instance.key}/folders`, { token, body: { $type: 'FolderInfo', CommonName: uniqueName('f') } });
    expect(folder.status).toBe(201);
    const r = await api.get(usagePath(folder.body.Key), { token });
    expect(r.status).toBe(404);
  });

  it('rejects a malformed or too long range with 400 InvalidParameter', async () => {
    const token = parent.tokens.Administrator;
    const queries: Array<Record<string, string>> = [{ from: 'yesterday' }, { from: '2026-02-30' }, { from: '2026-05-02', to: today }, { from: '2024-01-01', to: '2026-05-01' }, { from: '2025-04-01', to: today }];
    for (const query of queries) {
      const r = await api.get(usagePath(parent.instance.key), { token, query });
      expect(r.status, JSON.stringify(query)).toBe(400);
      expect(r.body.Error).toBe('InvalidParameter');
    }
  });
});

async function allRecords(): Promise<DynamoDBRecord[]> {
  const arn = (await reader.latestStreamArn())!;
  const out: DynamoDBRecord[] = [];
  for (const shard of await reader.shards(arn)) {
    let it = await reader.iterator(arn, shard.shardId, { type: 'TRIM_HORIZON' });
    for (let i = 0; it && i < 50; i++) {
      const page = await reader.records(it, 1000);
      out.push(...page.records);
      if (page.records.length === 0) break;
      it = page.next;
    }
  }
  return out;
}
