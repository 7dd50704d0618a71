/**
 * Live events over MQTT on the local runtime, with the `mqtt` client library the way field
 * clients of the original service use it: MQTT 3.1.1 over WebSocket at `/mqtt`, the access token
 * as username, topics `/<instance>/$` and `/<instance>/<object>`, raw BSON payloads.
 *
 * Tenants are seeded in the runtime's own table (P at the root, A below P, C below A, S a sibling
 * of A below P); tokens minted with the runtime's signing key verify there.
 */
import { randomBytes } from 'node:crypto';
import { deserialize, serialize } from 'bson';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { createDb } from '#shared/db/client.ts';
import type { CoreDeps } from '#shared/core-deps.ts';
import { createIotPublisher } from '#shared/live/mqtt/publisher.ts';
import type { TestDb } from '../support/db.ts';
import { openLiveClient, type LiveClient } from '../support/runtime.ts';
import { invalidTokens, mintToken, seedInstance, seedTenant, seedUser, testDeps, uniqueName, type Tenant } from '../support/tokens.ts';
import { documentedFetch } from '../support/documented-fetch.ts';

const url = inject('url');
const wsUrl = inject('wsUrl');
const mqttUrl = wsUrl.replace(/\/events$/, '/mqtt');

let t: TestDb;
let deps: CoreDeps;
const tenants = {} as Record<'P' | 'A' | 'C' | 'S', Tenant>;
const data = {} as Record<'A' | 'C', { person: any; app: any; nickname: string }>;
const clients: MqttClient[] = [];
const sockets: LiveClient[] = [];

async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const res = await documentedFetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

async function fill(n: 'A' | 'C') {
  const token = tenants[n].tokens.Administrator;
  const base = `/api/f/${tenants[n].instance.key}`;
  const person = await call('POST', `${base}/people`, token, { $type: 'PersonInfo', GivenName: 'Mqtt', CommonName: uniqueName(`person${n}`) });
  expect(person.status, person.text).toBe(201);
  const nickname = uniqueName(`nick${n}`);
  const app = await call('POST', `${base}/apps`, token, { $type: 'AppInfo', CommonName: uniqueName(`app${n}`) });
  expect(app.status, app.text).toBe(201);
  const type = await call('PUT', `${app.body.Href}/eventtypes`, token, { $type: 'EventTypeInfo', CommonName: 'Mqtt', Monikers: [{ Namespace: 'mqtt', Nickname: nickname }] });
  expect(type.status, type.text).toBe(201);
  data[n] = { person: person.body, app: app.body, nickname };
}

/** Publishes one event in tenant `n` relating to its person; answers the API's EventMessageData. */
async function publish(n: 'A' | 'C', i: number): Promise<any> {
  const r = await call('POST', `/api/f/${tenants[n].instance.key}/eventmessagesink`, tenants[n].tokens.Administrator, {
    $type: 'EventMessagePosting',
    OccurredOn: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
    AppKey: data[n].app.Key,
    EventTypeMoniker: { $type: 'MonikerItem', Namespace: 'mqtt', Nickname: data[n].nickname },
    RelatedObjects: [{ $type: 'ObjectLinkItem', LinkedObjectKey: data[n].person.Key, Relation: 'Person' }],
    EventDataBsonBase64: Buffer.from(serialize({ N: i })).toString('base64'),
  });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

/** Connects as a field client does; rejects with the CONNACK's return code on refusal. */
async function connect(token: string | undefined): Promise<MqttClient> {
  const c = await mqtt.connectAsync(mqttUrl, {
    protocolVersion: 4,
    clean: true,
    keepalive: 60,
    clientId: `test-${randomBytes(6).toString('hex')}`,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
    ...(token !== undefined ? { username: token } : {}),
  });
  clients.push(c);
  return c;
}

/** Every message a client receives: topic and decoded BSON. */
function collect(c: MqttClient): Array<{ topic: string; event: any }> {
  const got: Array<{ topic: string; event: any }> = [];
  c.on('message', (topic, payload) => got.push({ topic, event: deserialize(payload) }));
  return got;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** Dates (BSON dates, or ISO strings in JSON) as epoch milliseconds, so both sides compare. */
function normalise(v: unknown, key?: string): unknown {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string' && key !== 'EventDataBsonBase64' && ISO.test(v)) return new Date(v).getTime();
  if (Array.isArray(v)) return v.map((x) => normalise(x));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x, k)]));
  return v;
}

beforeAll(async () => {
  const config = loadConfig({
    GATEHOUSE_DYNAMODB_ENDPOINT: inject('runtimeDynamoEndpoint'),
    GATEHOUSE_DATA_DIR: inject('dataDir'),
    GATEHOUSE_LOG_LEVEL: 'SILENT',
  });
  t = { db: createDb(config), config, calls: [] };
  deps = testDeps(t);
  tenants.P = await seedTenant(t, deps);
  tenants.A = await seedTenant(t, deps, { parent: tenants.P.instance });
  tenants.C = await seedTenant(t, deps, { parent: tenants.A.instance });
  tenants.S = await seedTenant(t, deps, { parent: tenants.P.instance });
  await fill('A');
  await fill('C');
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
  await Promise.all(sockets.map((s) => s.close()));
  t?.db.raw.destroy();
});

describe('live events over MQTT', () => {
  it('connects with an access token as username, and answers CONNACK 5 to every bad token', async () => {
    const ok = await connect(tenants.A.tokens.ReadOnly);
    expect(ok.connected).toBe(true);
    await ok.endAsync();

    const disabled = await seedUser(t, tenants.A.instance, 'Operator', uniqueName('disabled'), { doc: { IsDisabled: true } });
    const offInstance = await seedInstance(t, uniqueName('Disabled'), tenants.P.instance, { IsDisabled: true });
    const offAdmin = await seedUser(t, offInstance, 'Administrator');
    const bad = [
      { name: 'missing', token: undefined },
      { name: 'malformed', token: 'not-a-token' },
      ...(await invalidTokens(deps.config, deps.keys, tenants.A.users.Administrator, tenants.A.instance, tenants.P.instance)),
      { name: 'disabled user', token: await mintToken(deps.config, deps.keys, disabled, tenants.A.instance) },
      { name: 'disabled instance', token: await mintToken(deps.config, deps.keys, offAdmin, offInstance) },
    ];
    for (const b of bad) {
      await expect(connect(b.token), b.name).rejects.toMatchObject({ code: 5 });
    }
  });

  it('grants in-scope topics, refuses the rest with SUBACK 0x80 per filter, 2 as 1', async () => {
    const c = await connect(tenants.A.tokens.Operator);
    const A = tenants.A.instance.key;
    // [filter, QoS asked, QoS granted (128: SUBACK failure)], sent in one SUBSCRIBE.
    const asked: Array<[string, 0 | 1 | 2, number]> = [
      [`/${A}/$`, 0, 0],
      [`/${tenants.S.instance.key}/$`, 0, 128],
      [`/${tenants.C.instance.key}/$`, 2, 1],
      [`/${tenants.P.instance.key}/$`, 1, 128],
      [`/${A}/#`, 0, 128],
      [`/${A}/+`, 0, 128],
      [`/+/$`, 0, 128],
      [`/${'0'.repeat(24)}/$`, 0, 128],
      [`/${A}/${data.A.person.Key}`, 1, 1],
      [`${A}/$`, 0, 128],
    ];
    // mqtt.js rejects a SUBACK holding a failure, with the packet (one code per filter, in order).
    const suback = await c.subscribeAsync(Object.fromEntries(asked.map(([f, qos]) => [f, { qos }]))).then(
      () => undefined,
      (err: { packet?: { granted: number[] } }) => err.packet,
    );
    expect(suback?.granted).toEqual(asked.map(([, , g]) => g));
    expect(c.connected).toBe(true);
  });

  it('delivers 200 parallel events exactly once per topic, as the BSON of what GET on their Href returns', async () => {
    const A = tenants.A.instance.key;
    const instanceTopic = `/${A}/$`;
    const objectTopic = `/${A}/${data.A.person.Key}`;
    const sub = await connect(tenants.A.tokens.ReadOnly);
    const got = collect(sub);
    await sub.subscribeAsync({ [instanceTopic]: { qos: 0 }, [objectTopic]: { qos: 1 } });
    // The JSON WebSocket subscriber of the same topic gets every event too.
    const ws = await openLiveClient(wsUrl, { token: tenants.A.tokens.ReadOnly });
    sockets.push(ws);
    const frames: any[] = [];
    ws.ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    ws.send({ action: 'subscribe', topic: instanceTopic });
    await expect.poll(() => frames.some((m) => m.type === 'subscribed'), { timeout: 10_000 }).toBe(true);

    const TOTAL = 200;
    const published = await Promise.all(Array.from({ length: TOTAL }, (_, i) => publish('A', i)));
    const keys = new Set(published.map((e) => e.Key));
    const mine = (topic: string) => got.filter((m) => m.topic === topic && keys.has(m.event.Key));
    await expect.poll(() => [mine(instanceTopic).length, mine(objectTopic).length], { timeout: 60_000, interval: 200 }).toEqual([TOTAL, TOTAL]);
    await expect.poll(() => frames.filter((m) => m.type === 'event' && keys.has(m.event.Key)).length, { timeout: 30_000 }).toBe(TOTAL);
    await new Promise((r) => setTimeout(r, 1500));

    for (const topic of [instanceTopic, objectTopic]) {
      const counts = new Map<string, number>();
      for (const m of mine(topic)) counts.set(m.event.Key, (counts.get(m.event.Key) ?? 0) + 1);
      expect(counts.size).toBe(TOTAL);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
    }
    const wsKeys = frames.filter((m) => m.type === 'event' && keys.has(m.event.Key)).map((m) => m.event.Key);
    expect(new Set(wsKeys)).toEqual(keys);
    expect(wsKeys).toHaveLength(TOTAL);

    // Dates are BSON dates; everything else is the API's representation.
    const sample = mine(instanceTopic).slice(0, 20);
    expect(sample[0]!.event.OccurredOn).toBeInstanceOf(Date);
    expect(typeof sample[0]!.event.EventDataBsonBase64).toBe('string');
    for (const m of sample) {
      const api = await call('GET', m.event.Href, tenants.A.tokens.ReadOnly);
      expect(api.status, api.text).toBe(200);
      expect(normalise(m.event)).toEqual(normalise(api.body));
    }
    const ws1 = frames.find((m) => m.type === 'event' && m.event.Key === sample[0]!.event.Key);
    expect(normalise(sample[0]!.event)).toEqual(normalise(ws1.event));
  }, 120_000);

  it("delivers a child instance's events to a parent's subscription, and none to a sibling's", async () => {
    const parent = await connect(tenants.P.tokens.ReadOnly);
    const atParent = collect(parent);
    await parent.subscribeAsync(`/${tenants.P.instance.key}/$`);
    const sibling = await connect(tenants.S.tokens.Administrator);
    const atSibling = collect(sibling);
    await sibling.subscribeAsync(`/${tenants.S.instance.key}/$`);

    const ev = await publish('C', 1);
    await expect.poll(() => atParent.filter((m) => m.event.Key === ev.Key).map((m) => m.topic), { timeout: 20_000 }).toEqual([`/${tenants.P.instance.key}/$`]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(atParent.filter((m) => m.event.Key === ev.Key)).toHaveLength(1);
    expect(atSibling.filter((m) => m.event.Key === ev.Key)).toEqual([]);
    expect(JSON.stringify(atSibling)).not.toContain(tenants.C.instance.key);
  });

  it('closes the connection of a client that publishes', async () => {
    const c = await connect(tenants.A.tokens.Administrator);
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    c.publish(`/${tenants.A.instance.key}/$`, Buffer.from('hello'), { qos: 0 });
    await closed;
    expect(c.connected).toBe(false);
  });

  it("closes the connection at the token's expiry", async () => {
    const token = await mintToken(deps.config, deps.keys, tenants.A.users.ReadOnly, tenants.A.instance, { ttlSeconds: 4 });
    const c = await connect(token);
    const connectedAt = Date.now();
    await new Promise<void>((resolve) => c.once('close', () => resolve()));
    const after = Date.now() - connectedAt;
    expect(after).toBeGreaterThan(1500);
    expect(after).toBeLessThan(8000);
    // The same token no longer connects.
    await expect(connect(token)).rejects.toMatchObject({ code: 5 });
  });

  it("does not serve the IoT data plane's Publish on the API port: only the runtime itself publishes", async () => {
    // IoT Core signs Publish (iot:Publish); the runtime serves its stand-in only to code in its own
    // process (test/security/internal-endpoints.test.ts), never to other programs on the machine.
    const c = await connect(tenants.A.tokens.Administrator);
    const got = collect(c);
    const topic = `/${tenants.A.instance.key}/$`;
    await c.subscribeAsync(topic, { qos: 1 });
    const marker = randomBytes(6).toString('hex');

    await expect(createIotPublisher({ endpoint: url, region: 'us-east-1' }).publish(topic, serialize({ Marker: marker }))).rejects.toThrow();

    // The runtime's own events still arrive, and nothing forged before them.
    const event = await publish('A', 90);
    await expect.poll(() => got.some((m) => m.event.Key === event.Key)).toBe(true);
    expect(got.filter((m) => m.event.Marker === marker)).toEqual([]);
  });

  it('reports the MQTT URL in sysinfo beside the JSON WebSocket one', async () => {
    const info = (await (await documentedFetch(`${url}/api/sysinfo`)).json()) as Record<string, unknown>;
    expect(info.MqttPublisherUrl).toBe(mqttUrl);
    expect(info.EventPublisherUrl).toBe(wsUrl);
  });
});
