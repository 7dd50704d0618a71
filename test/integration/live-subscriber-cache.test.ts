/**
 * The fan-out's cache of WebSocket subscribers against DynamoDB Local: the `websocket` and
 * `fanout` handlers, a recording connection notifier in place of the Management API, and
 * either the stream poller reading the table's real stream (subscriptions reach the cache in
 * stream order) or batches built by hand without the subscription records (AWS, where another
 * shard carries them to another Lambda instance: the cache's maximum age applies).
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createFanoutHandler } from '#functions/fanout/handler.ts';
import { createHandler as createWebSocketHandler } from '#functions/websocket/handler.ts';
import { issueAccessToken } from '#shared/auth/access-tokens.ts';
import { createInstance, createUser } from '#shared/auth/provisioning.ts';
import { putLiveEvent, type EventWrite } from '#shared/db/events-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createStreamReader } from '#local/storage/stream-reader.ts';
import { createLiveDeps, type LiveDeps } from '#shared/live/live-deps.ts';
import type { ServerMessage } from '#shared/live/websocket/protocol.ts';
import { SUBSCRIBERS_MAX_AGE_MS, SubscriberCache } from '#shared/live/websocket/subscriber-cache.ts';
import { startStreamPoller, type StreamPoller } from '#local/stream-poller.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { liveEvent } from '../support/live-events.ts';
import { RecordingConnections, connectEvent, disconnectEvent, messageEvent, newConnectionId, streamRecord } from '../support/live-handlers.ts';

const newKey = (): string => randomBytes(12).toString('hex');
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** The stream record of a live event's INSERT, as the event source mapping delivers it. */
function eventRecord(w: EventWrite): DynamoDBRecord {
  return streamRecord({
    PK: `LIVE#${w.event.key}`,
    SK: 'A',
    Key: w.event.key,
    Coll: 'events',
    Type: 'EventMessageData',
    Folder: w.event.folder,
    Instances: [...w.event.instances],
    Doc: JSON.stringify(w.event.doc),
  });
}

/** Waits until `done()` holds (15 s at most). */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let t: TestDb;
let root: StoredObject;
let child: StoredObject;
let other: StoredObject;
const tokens: Record<'root' | 'child' | 'other', string> = { root: '', child: '', other: '' };

async function userToken(deps: LiveDeps, instance: StoredObject): Promise<string> {
  const name = `u${newKey().slice(-6)}`;
  const user = await createUser(t.db, { instance, name, password: 'Passw0rd!long', role: 'Operator' });
  const principal = { userKey: user.key, userName: name, instanceKey: instance.key, instanceName: String(instance.doc.CommonName), role: 'Operator' as const };
  return (await issueAccessToken(deps.keys, deps.config, principal, new Date())).token;
}

/** A fan-out and WebSocket handlers sharing one subscriber cache and one recording notifier. */
function live(cache: SubscriberCache, now?: () => Date) {
  const connections = new RecordingConnections();
  const deps = createLiveDeps({ config: t.config, db: t.db, connections, subscribers: cache, ...(now ? { now } : {}) });
  const websocket = createWebSocketHandler(() => deps);
  const fanout = createFanoutHandler(() => deps);
  return {
    connections,
    deps,
    fanout,
    async open(token: string): Promise<string> {
      const id = newConnectionId();
      const res = await websocket(connectEvent(id, { token }));
      expect(res).toEqual({ statusCode: 200 });
      return id;
    },
    async say(id: string, body: unknown): Promise<ServerMessage | undefined> {
      await websocket(messageEvent(id, body));
      return connections.of(id).at(-1);
    },
    async close(id: string): Promise<void> {
      await websocket(disconnectEvent(id));
    },
  };
}

beforeAll(async () => {
  t = await createTestDb();
  const suffix = newKey().slice(-8);
  root = await createInstance(t.db, { name: `Root ${suffix}` });
  child = await createInstance(t.db, { name: `Child ${suffix}`, parent: root });
  other = await createInstance(t.db, { name: `Other ${suffix}` });
  const deps = createLiveDeps({ config: t.config, db: t.db, connections: new RecordingConnections() });
  [tokens.root, tokens.child, tokens.other] = await Promise.all([userToken(deps, root), userToken(deps, child), userToken(deps, other)]);
});

afterAll(() => {
  t?.db.raw.destroy();
});

describe('through the table\'s stream (subscriptions reach the cache in stream order)', () => {
  // No read after the first may explain a delivery: whatever these tests see came from the stream.
  const cache = new SubscriberCache({ maxAgeMs: 10 * 60_000 });
  let l: ReturnType<typeof live>;
  let poller: StreamPoller;
  /** A subscriber of every instance's events, to know when a batch has been delivered. */
  const watchers: Record<'root' | 'other', string> = { root: '', other: '' };

  /** Publishes an event and waits until the watcher of its root received it. */
  async function publish(instances: readonly string[], linked: readonly string[] = []): Promise<string> {
    const w = liveEvent(instances, linked);
    await putLiveEvent(t.db, w, nowSeconds());
    poller.wake();
    const watcher = instances[0] === other.key ? watchers.other : watchers.root;
    await until(() => l.connections.events(watcher).some((e) => e.endsWith(w.event.key)), `event ${w.event.key} delivered`);
    return w.event.key;
  }

  beforeAll(async () => {
    l = live(cache);
    poller = await startStreamPoller({ reader: createStreamReader(t.config), invoke: (e) => l.fanout(e), logger: l.deps.logger, idleMs: 50 });
    watchers.root = await l.open(tokens.root);
    expect(await l.say(watchers.root, { action: 'subscribe', topic: `/${root.key}/$` })).toEqual({ type: 'subscribed', topic: `/${root.key}/$` });
    watchers.other = await l.open(tokens.other);
    expect(await l.say(watchers.other, { action: 'subscribe', topic: `/${other.key}/$` })).toEqual({ type: 'subscribed', topic: `/${other.key}/$` });
    // The first events make the fan-out read (and cache) the subscribers of both roots and the child.
    await publish([root.key, child.key]);
    await publish([other.key]);
    await cache.idle();
  });

  afterAll(async () => {
    await poller?.stop();
  });

  it('delivers an event published right after a subscription, read from the stream and not by a Query', async () => {
    const reads = cache.reads;
    for (let i = 0; i < 5; i++) {
      const objectKey = newKey();
      const id = await l.open(tokens.child);
      const topic = `/${child.key}/${objectKey}`;
      expect(await l.say(id, { action: 'subscribe', topic })).toEqual({ type: 'subscribed', topic });

      const key = await publish([root.key, child.key], [objectKey]);

      expect(l.connections.events(id)).toEqual([`${topic} ${key}`]);
    }
    expect(cache.reads).toBe(reads);
  });

  it('stops delivering a topic at the first event after unsubscribe, and every topic after a disconnect', async () => {
    const reads = cache.reads;
    const objectKey = newKey();
    const all = `/${root.key}/$`;
    const one = `/${child.key}/${objectKey}`;
    const id = await l.open(tokens.root);
    const leaving = await l.open(tokens.root);
    for (const c of [id, leaving]) {
      for (const topic of [all, one]) expect(await l.say(c, { action: 'subscribe', topic })).toEqual({ type: 'subscribed', topic });
    }
    const first = await publish([root.key, child.key], [objectKey]);
    expect(l.connections.events(id).sort()).toEqual([`${all} ${first}`, `${one} ${first}`].sort());

    expect(await l.say(id, { action: 'unsubscribe', topic: one })).toEqual({ type: 'unsubscribed', topic: one });
    await l.close(leaving);
    const second = await publish([root.key, child.key], [objectKey]);

    expect(l.connections.events(id).filter((e) => e.endsWith(second))).toEqual([`${all} ${second}`]);
    expect(l.connections.events(leaving).filter((e) => e.endsWith(second))).toEqual([]);
    expect(cache.reads).toBe(reads);
  });

  it('never delivers an instance\'s events to the subscribers of another, with every list cached', async () => {
    const inChild = await l.open(tokens.child);
    const inOther = await l.open(tokens.other);
    expect(await l.say(inChild, { action: 'subscribe', topic: `/${child.key}/$` })).toMatchObject({ type: 'subscribed' });
    expect(await l.say(inOther, { action: 'subscribe', topic: `/${other.key}/$` })).toMatchObject({ type: 'subscribed' });

    const published: Record<'root' | 'child' | 'other', string[]> = { root: [], child: [], other: [] };
    for (let i = 0; i < 3; i++) {
      published.other.push(await publish([other.key]));
      published.child.push(await publish([root.key, child.key]));
      published.root.push(await publish([root.key]));
    }

    const keys = (id: string) => l.connections.events(id).map((e) => e.split(' ')[1]);
    expect(keys(inOther)).toEqual(published.other);
    expect(keys(inChild)).toEqual(published.child);
    expect(keys(watchers.root)).toEqual(expect.arrayContaining([...published.child, ...published.root]));
    expect(keys(watchers.root).filter((k) => published.other.includes(k))).toEqual([]);
    expect(keys(watchers.other).filter((k) => [...published.root, ...published.child].includes(k))).toEqual([]);
  });

  it('never delivers a cached subscription whose connection lifetime is over', async () => {
    const later = live(cache, () => new Date(Date.now() + 3 * 3600_000));
    const before = l.connections.events(watchers.root).length;
    const reads = cache.reads;

    const res = await later.fanout({ Records: [eventRecord(liveEvent([root.key, child.key]))] });

    expect(res).toEqual({ batchItemFailures: [] });
    expect([...later.connections.sent.keys()]).toEqual([]);
    expect(l.connections.events(watchers.root)).toHaveLength(before);
    expect(cache.reads).toBe(reads);
  });
});

describe('without the subscription records (another shard, another Lambda instance)', () => {
  let clock = 0;
  const cache = new SubscriberCache({ clock: () => clock });
  let l: ReturnType<typeof live>;

  beforeAll(() => {
    l = live(cache);
  });

  it(`applies a subscription and an unsubscribe within ${SUBSCRIBERS_MAX_AGE_MS} ms, reading again in the background after half of it`, async () => {
    const watcher = await l.open(tokens.root);
    await l.say(watcher, { action: 'subscribe', topic: `/${root.key}/$` });
    const deliver = async () => {
      const w = liveEvent([root.key]);
      expect(await l.fanout({ Records: [eventRecord(w)] })).toEqual({ batchItemFailures: [] });
      return w.event.key;
    };
    clock = 1_000_000;
    const warm = await deliver();
    expect(l.connections.events(watcher)).toEqual([`/${root.key}/$ ${warm}`]);
    expect(cache.reads).toBe(1);

    const late = await l.open(tokens.root);
    await l.say(late, { action: 'subscribe', topic: `/${root.key}/$` });
    // Under half the maximum age: the cached list, as read before the subscription.
    clock += SUBSCRIBERS_MAX_AGE_MS / 2 - 1;
    await deliver();
    expect(cache.reads).toBe(1);
    expect(l.connections.events(late)).toEqual([]);
    // Past half of it: this batch still goes to the cached list while the list is read again.
    clock += 2;
    await deliver();
    expect(cache.reads).toBe(2);
    await cache.idle();
    const seen = await deliver();
    expect(l.connections.events(late)).toEqual([`/${root.key}/$ ${seen}`]);

    await l.say(late, { action: 'unsubscribe', topic: `/${root.key}/$` });
    // Past the maximum age: the batch waits for a new read.
    clock += SUBSCRIBERS_MAX_AGE_MS;
    const after = await deliver();
    expect(cache.reads).toBe(3);
    expect(l.connections.events(late).filter((e) => e.endsWith(after))).toEqual([]);
    expect(l.connections.events(watcher).filter((e) => e.endsWith(after))).toEqual([`/${root.key}/$ ${after}`]);
  });
});
