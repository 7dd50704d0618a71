/**
 * Tenant usage through the local runtime over HTTP: a runtime whose families flush once an hour
 * shows nothing of the calls it served until it shuts down, writes them on shutdown, and after a
 * restart on the same data answers them from `GET /api/f/<instance>/usage`, with the person the
 * stream saw created; a runtime flushing every second answers new calls within seconds.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { adminToken, newDataDir, newRuntimeAdmin, spawnRuntime, type RuntimeAdmin, type SpawnedRuntime } from '../support/runtime.ts';

const admin: RuntimeAdmin = newRuntimeAdmin('Usage');
let dataDir: string;
let runtime: SpawnedRuntime | undefined;
const table = `usage-${randomBytes(4).toString('hex')}`;

const start = (flushSeconds: number) =>
  spawnRuntime({
    dataDir,
    env: {
      GATEHOUSE_DYNAMODB_ENDPOINT: inject('runtimeDynamoEndpoint'),
      GATEHOUSE_TABLE_NAME: table,
      GATEHOUSE_INSTANCE: admin.instanceName,
      GATEHOUSE_ADMIN_USER: admin.userName,
      GATEHOUSE_ADMIN_PASSWORD: admin.password,
      GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
      GATEHOUSE_USAGE_FLUSH_SECONDS: String(flushSeconds),
    },
  });

async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${runtime!.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const today = () => new Date().toISOString().slice(0, 10);

/**
 * A count summed over the days answered: a test's calls and its reads may fall on both sides of
 * midnight UTC, so each test asks from the day it started and sums, instead of reading one day.
 */
const total = (body: { Days: Array<Record<string, any>> }, count: (day: Record<string, any>) => number | undefined): number =>
  body.Days.reduce((n, d) => n + (count(d) ?? 0), 0);

beforeAll(async () => {
  dataDir = await newDataDir();
});
afterAll(async () => {
  await runtime?.stop();
});

describe('GET /api/f/<instance>/usage on the local runtime', () => {
  it('writes the counts on shutdown and answers them after a restart', async () => {
    const since = today();
    runtime = await start(3600);
    const instance = runtime.instanceKey;
    const token = await adminToken(runtime.url, admin);
    for (let i = 0; i < 3; i++) expect((await call('GET', `/api/f/${instance}/people`, token)).status).toBe(200);
    const person = await call('POST', `/api/f/${instance}/people`, token, { $type: 'PersonInfo', GivenName: 'Ada', Surname: 'Lovelace' });
    expect(person.status).toBe(201);

    // Held in memory: nothing of the people calls is stored yet.
    const early = await call('GET', `/api/f/${instance}/usage?from=${since}`, token);
    expect(early.status).toBe(200);
    expect(total(early.body, (d) => d.Requests.people)).toBe(0);

    // Let the stream poller hand the person's record to the fan-out before stopping.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await runtime.stop()).toBe(0);
    runtime = await start(3600);
    const again = await adminToken(runtime.url, admin);
    const after = await call('GET', `/api/f/${instance}/usage?from=${since}`, again);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ InstanceKey: instance, From: since, To: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), InstanceKeys: [instance] });
    // Three lists and one create (both people calls); the login and the first usage call too.
    expect(total(after.body, (d) => d.Requests.people)).toBe(4);
    expect(total(after.body, (d) => d.Requests.token)).toBeGreaterThanOrEqual(1);
    expect(total(after.body, (d) => d.Requests.folders)).toBeGreaterThanOrEqual(1);
    expect(total(after.body, (d) => d.ObjectsCreated)).toBeGreaterThanOrEqual(1);
    expect(after.body.StoredObjects).toBeGreaterThanOrEqual(1);
    expect((await runtime.stop())).toBe(0);
    runtime = undefined;
  });

  it('answers new calls within seconds when the families flush every second', async () => {
    const since = today();
    runtime = await start(1);
    const instance = runtime.instanceKey;
    const token = await adminToken(runtime.url, admin);
    const devices = async () => total((await call('GET', `/api/f/${instance}/usage?from=${since}`, token)).body, (d) => d.Requests.devices);
    const before = await devices();
    for (let i = 0; i < 2; i++) expect((await call('GET', `/api/f/${instance}/doors`, token)).status).toBe(200);
    // The runtime's timer writes due counts every few seconds, with no further request needed.
    let seen = before;
    for (let waited = 0; waited < 15_000 && seen < before + 2; waited += 500) {
      await new Promise((r) => setTimeout(r, 500));
      seen = await devices();
    }
    expect(seen).toBe(before + 2);
  });
});
