/**
 * Tenant isolation of the live event feed, on the real local runtime (a child process on the
 * run's DynamoDB Local, in a table of its own): WebSocket subscribers holding tokens of instance
 * A's three roles, of its child C, its parent P and its sibling S, and connections with no token
 * or an invalid one. Invalid connections are refused with 401; each caller may subscribe exactly
 * to the instances it can see (its own and those below it, so a parent sees its children's
 * events); every event published or recorded in an instance reaches each matching subscription of
 * those callers exactly once and nobody else; and no frame a caller receives holds a Key or
 * CommonName of a tenant it cannot see. The same callers also subscribe over MQTT (`/mqtt`, token
 * as username): refused tokens get CONNACK 5, out-of-scope topics SUBACK 0x80, and the same
 * delivery and no-leak rules hold for the BSON messages.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { deserialize } from 'bson';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreDeps } from '#shared/core-deps.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { HandshakeRefused, newDataDir, openLiveClient, spawnRuntime, type LiveClient, type SpawnedRuntime } from '../support/runtime.ts';
import { invalidTokens, seedTenant, testDeps, uniqueName, type Tenant } from '../support/tokens.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';

type Name = 'P' | 'A' | 'C' | 'S';
const NAMES: readonly Name[] = ['P', 'A', 'C', 'S'];
/** The instances above and including each tenant, root first: P is a root, A and S are below P, C below A. */
const LINEAGE: Record<Name, readonly Name[]> = { P: ['P'], A: ['P', 'A'], C: ['P', 'A', 'C'], S: ['P', 'S'] };

let runtime: SpawnedRuntime;
let dataDir: string;
let t: TestDb;
let deps: CoreDeps;
const tenants = {} as Record<Name, Tenant>;
/** Keys and CommonNames of each tenant's objects (its instance and users included). */
const secrets: Record<Name, Set<string>> = { P: new Set(), A: new Set(), C: new Set(), S: new Set() };
/** Per tenant: a person, an app and an event type to publish with. */
const data = {} as Record<Name, { person: any; app: any; nickname: string }>;

interface Caller {
  readonly name: string;
  readonly own: Name;
  readonly token: string;
  /** Tenants whose events, keys and names it may see: its own and those below it. */
  readonly sees: readonly Name[];
}
const callers: Caller[] = [];
const refused: Array<{ name: string; token: string | undefined }> = [];
/** Every frame each caller received, in order. */
const frames = new Map<string, any[]>();
const sockets: LiveClient[] = [];
/** Every MQTT message each caller received: topic and decoded event. */
const mqttFrames = new Map<string, Array<{ topic: string; event: any }>>();
const mqttClients: MqttClient[] = [];

async function mqttConnect(token: string | undefined): Promise<MqttClient> {
  const c = await mqtt.connectAsync(runtime.wsUrl.replace(/\/events$/, '/mqtt'), {
    protocolVersion: 4,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
    ...(token !== undefined ? { username: token } : {}),
  });
  mqttClients.push(c);
  return c;
}
/** The topics each caller holds. */
const subscribed = new Map<string, string[]>();

const key = (n: Name) => tenants[n].instance.key;
const instanceTopic = (n: Name) => `/${key(n)}/$`;

async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const res = await documentedFetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

/** A person, an app and an event type in tenant `n`, made over HTTP by its Administrator. */
async function fill(n: Name) {
  const token = tenants[n].tokens.Administrator;
  const base = `/api/f/${key(n)}`;
  const mark = (o: { Key?: string; CommonName?: string }) => {
    if (o.Key) secrets[n].add(o.Key);
    if (o.CommonName) secrets[n].add(o.CommonName);
  };
  const person = await call('POST', `${base}/people`, token, { $type: 'PersonInfo', GivenName: 'Live', CommonName: uniqueName(`person${n}`) });
  expect(person.status, person.text).toBe(201);
  mark(person.body);
  const nickname = uniqueName(`nick${n}`);
  const app = await call('POST', `${base}/apps`, token, { $type: 'AppInfo', CommonName: uniqueName(`app${n}`) });
  expect(app.status, app.text).toBe(201);
  mark(app.body);
  const type = await call('PUT', `${app.body.Href}/eventtypes`, token, { $type: 'EventTypeInfo', CommonName: uniqueName(`type${n}`), Monikers: [{ Namespace: 'isolive', Nickname: nickname }] });
  expect(type.status, type.text).toBe(201);
  mark(type.body);
  data[n] = { person: person.body, app: app.body, nickname };
}

beforeAll(async () => {
  dataDir = await newDataDir();
  const tableName = `isolive-${randomBytes(6).toString('hex')}`;
  // Well under the default stage throttling (some 40 requests): it stays on.
  runtime = await spawnRuntime({ dataDir, env: { GATEHOUSE_DYNAMODB_ENDPOINT: dynamoEndpoint(), GATEHOUSE_TABLE_NAME: tableName } });
  // The runtime's table and signing key: tokens minted here verify there.
  t = await createTestDb({ GATEHOUSE_TABLE_NAME: tableName, GATEHOUSE_DATA_DIR: runtime.dataDir });
  deps = testDeps(t);
  tenants.P = await seedTenant(t, deps);
  tenants.A = await seedTenant(t, deps, { parent: tenants.P.instance });
  tenants.C = await seedTenant(t, deps, { parent: tenants.A.instance });
  tenants.S = await seedTenant(t, deps, { parent: tenants.P.instance });
  for (const n of NAMES) {
    const { instance, users } = tenants[n];
    secrets[n].add(instance.key).add(String(instance.doc.CommonName));
    for (const u of Object.values(users)) secrets[n].add(u.key).add(String(u.doc.CommonName));
  }
  for (const n of NAMES) await fill(n);

  const sees = (own: Name) => NAMES.filter((n) => LINEAGE[n].includes(own));
  const A = tenants.A;
  callers.push(
    { name: 'A Administrator', own: 'A', token: A.tokens.Administrator, sees: sees('A') },
    { name: 'A Operator', own: 'A', token: A.tokens.Operator, sees: sees('A') },
    { name: 'A ReadOnly', own: 'A', token: A.tokens.ReadOnly, sees: sees('A') },
    { name: 'child C Administrator', own: 'C', token: tenants.C.tokens.Administrator, sees: sees('C') },
    { name: 'parent P Administrator', own: 'P', token: tenants.P.tokens.Administrator, sees: sees('P') },
    { name: 'sibling S Administrator', own: 'S', token: tenants.S.tokens.Administrator, sees: sees('S') },
  );
  refused.push({ name: 'no token', token: undefined }, ...(await invalidTokens(deps.config, deps.keys, A.users.Administrator, A.instance, tenants.P.instance)));
}, 120_000);

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await Promise.all(mqttClients.map((c) => c.endAsync(true).catch(() => {})));
  await runtime?.stop();
  t?.db.raw.destroy();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The secrets of tenants `c` cannot see that appear in `text`. */
function leaks(c: Caller, text: string): string[] {
  const found: string[] = [];
  for (const n of NAMES) {
    if (c.sees.includes(n)) continue;
    for (const s of secrets[n]) if (text.includes(s)) found.push(`${n}:${s}`);
  }
  return found;
}

/** The topics of `c` an event of tenant `n` relating to `linked` must reach, each once. */
function expectedTopics(c: Caller, n: Name, linked: readonly string[]): string[] {
  return (subscribed.get(c.name) ?? [])
    .filter((topic) => {
      const [, instanceKey, object] = topic.split('/') as [string, string, string];
      const inLineage = LINEAGE[n].some((i) => key(i) === instanceKey);
      return inLineage && (object === '$' || linked.includes(object));
    })
    .sort();
}

describe('live feed isolation', () => {
  it('refuses the handshake of a connection without a valid token with 401, in the query or a header', async () => {
    for (const r of refused) {
      await expect(openLiveClient(runtime.wsUrl, r.token ? { token: r.token } : {}), `${r.name} (query)`).rejects.toEqual(new HandshakeRefused(401));
      if (r.token) {
        await expect(openLiveClient(runtime.wsUrl, { headers: { Authorization: `Bearer ${r.token}` } }), `${r.name} (header)`).rejects.toEqual(new HandshakeRefused(401));
      }
    }
  });

  it('refuses an MQTT connection without a valid token with CONNACK 5', async () => {
    for (const r of refused) await expect(mqttConnect(r.token), `${r.name} (MQTT)`).rejects.toMatchObject({ code: 5 });
  });

  it('lets each caller subscribe exactly to the instances it can see', async () => {
    const topics = [...NAMES.map(instanceTopic), `/${key('A')}/${data.A.person.Key}`];
    for (const c of callers) {
      const ws = await openLiveClient(runtime.wsUrl, { token: c.token });
      sockets.push(ws);
      // Every frame is kept: audit events of the setup may arrive between the answers.
      const got: any[] = [];
      frames.set(c.name, got);
      ws.ws.on('message', (d) => got.push(JSON.parse(d.toString())));
      const held: string[] = [];
      for (const topic of topics) {
        ws.send({ action: 'subscribe', topic });
        await expect.poll(() => got.some((m) => m?.type !== 'event' && m?.topic === topic), { timeout: 10_000, interval: 20 }).toBe(true);
        const answer = got.find((m) => m?.type !== 'event' && m?.topic === topic);
        const instance = NAMES.find((n) => topic.startsWith(`/${key(n)}/`))!;
        if (c.sees.includes(instance)) {
          expect(answer, `${c.name} ${topic}`).toEqual({ type: 'subscribed', topic });
          held.push(topic);
        } else {
          expect(answer, `${c.name} ${topic}`).toEqual({ type: 'error', topic, error: 'Forbidden', message: expect.any(String) });
        }
      }
      subscribed.set(c.name, held);

      // The same topics over MQTT, in one SUBSCRIBE: 0x80 for each filter out of scope.
      const client = await mqttConnect(c.token);
      const received: Array<{ topic: string; event: any }> = [];
      mqttFrames.set(c.name, received);
      client.on('message', (topic, payload) => received.push({ topic, event: deserialize(payload) }));
      const granted = await client.subscribeAsync(Object.fromEntries(topics.map((topic) => [topic, { qos: 1 as const }]))).then(
        (g) => g.map((x) => x.qos),
        (err: { packet?: { granted: number[] } }) => err.packet?.granted,
      );
      expect(granted, `${c.name} MQTT`).toEqual(topics.map((topic) => (held.includes(topic) ? 1 : 128)));
    }
    expect(subscribed.get('parent P Administrator')).toHaveLength(5);
    expect(subscribed.get('A ReadOnly')).toHaveLength(3);
    expect(subscribed.get('child C Administrator')).toEqual([instanceTopic('C')]);
    expect(subscribed.get('sibling S Administrator')).toEqual([instanceTopic('S')]);
  });

  it('delivers the events of each instance to exactly the subscriptions that can see it, once, and leaks nothing', async () => {
    // Probes in every tenant: a published event relating to its person, and the audit event of a
    // person created now.
    const probes: Array<{ what: string; tenant: Name; linked: string[]; match: (event: any) => boolean }> = [];
    for (const n of NAMES) {
      const token = tenants[n].tokens.Administrator;
      const base = `/api/f/${key(n)}`;
      const published = await call('POST', `${base}/eventmessagesink`, token, {
        $type: 'EventMessagePosting',
        OccurredOn: new Date().toISOString(),
        AppKey: data[n].app.Key,
        EventTypeMoniker: { $type: 'MonikerItem', Namespace: 'isolive', Nickname: data[n].nickname },
        RelatedObjects: [{ $type: 'ObjectLinkItem', LinkedObjectKey: data[n].person.Key, Relation: 'Person' }],
        EventDataBsonBase64: null,
      });
      expect(published.status, published.text).toBe(201);
      secrets[n].add(published.body.Key);
      probes.push({ what: `event published in ${n}`, tenant: n, linked: [data[n].person.Key], match: (e) => e?.Key === published.body.Key });
      const person = await call('POST', `${base}/people`, token, { $type: 'PersonInfo', GivenName: 'Probe', CommonName: uniqueName(`probe${n}`) });
      expect(person.status, person.text).toBe(201);
      secrets[n].add(person.body.Key).add(person.body.CommonName);
      probes.push({
        what: `audit event of a person created in ${n}`,
        tenant: n,
        linked: [person.body.Key],
        match: (e) => (e?.ObjectLinks ?? []).some((l: any) => l?.LinkedObjectKey === person.body.Key),
      });
    }
    const topicsOf = (c: Caller, p: (typeof probes)[number]) =>
      frames
        .get(c.name)!
        .filter((m) => m?.type === 'event' && p.match(m.event))
        .map((m) => m.topic as string)
        .sort();
    const mqttTopicsOf = (c: Caller, p: (typeof probes)[number]) =>
      mqttFrames
        .get(c.name)!
        .filter((m) => p.match(m.event))
        .map((m) => m.topic)
        .sort();

    // Everything expected arrives; then a little longer, for anything that should not.
    await expect
      .poll(
        () =>
          callers.flatMap((c) =>
            probes
              .filter((p) => Math.min(topicsOf(c, p).length, mqttTopicsOf(c, p).length) < expectedTopics(c, p.tenant, p.linked).length)
              .map((p) => `${c.name}: ${p.what}`),
          ),
        {
        timeout: 30_000,
        interval: 200,
      })
      .toEqual([]);
    await new Promise((r) => setTimeout(r, 1500));

    let deliveries = 0;
    for (const c of callers) {
      for (const p of probes) {
        const want = expectedTopics(c, p.tenant, p.linked);
        expect(topicsOf(c, p), `${c.name}: ${p.what}`).toEqual(want);
        expect(mqttTopicsOf(c, p), `${c.name} (MQTT): ${p.what}`).toEqual(want);
        deliveries += 2 * want.length;
      }
      for (const m of frames.get(c.name)!) {
        // A subscription's answer echoes the caller's own topic, which names the instance.
        const { topic, ...rest } = m as { topic?: string };
        if (m?.type === 'event') {
          expect(subscribed.get(c.name), `${c.name}: an event on a topic it does not hold`).toContain(topic);
          const folder = NAMES.find((n) => key(n) === m.event?.InFolderKey || secrets[n].has(m.event?.InFolderKey));
          expect(folder && c.sees.includes(folder), `${c.name}: an event of folder ${m.event?.InFolderKey}`).toBe(true);
        }
        expect(leaks(c, JSON.stringify(m.type === 'event' ? m : rest)), `${c.name} received ${JSON.stringify(m).slice(0, 300)}`).toEqual([]);
      }
      for (const m of mqttFrames.get(c.name)!) {
        expect(subscribed.get(c.name), `${c.name} (MQTT): an event on a topic it does not hold`).toContain(m.topic);
        expect(leaks(c, JSON.stringify(m.event)), `${c.name} received over MQTT ${JSON.stringify(m.event).slice(0, 300)}`).toEqual([]);
      }
      // The needles are real: the caller's events do hold keys and names of each tenant it sees.
      const all = JSON.stringify(frames.get(c.name)!.filter((m) => m?.type === 'event'));
      for (const n of c.sees) expect([...secrets[n]].some((x) => all.includes(x)), `${c.name} saw nothing of ${n}`).toBe(true);
    }
    const received = callers.reduce((sum, c) => sum + frames.get(c.name)!.filter((m) => m?.type === 'event').length + mqttFrames.get(c.name)!.length, 0);
    console.info(
      `[reliability/isolation-live] ${callers.length} subscribers (each over WebSocket and MQTT), ${refused.length} refused tokens (query and header), ${probes.length} probe events: ` +
        `${deliveries} expected deliveries, ${received} event frames received in all, no leak`,
    );
  });
});
