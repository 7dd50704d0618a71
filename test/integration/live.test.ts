/**
 * The live event feed's handlers against DynamoDB Local: `websocket` ($connect, messages,
 * $disconnect) and `fanout` (stream records → subscribers), with a recording connection notifier
 * in place of the Management API, and the stream poller reading the table's real stream.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createFanoutHandler } from '#functions/fanout/handler.ts';
import { createHandler as createWebSocketHandler } from '#functions/websocket/handler.ts';
import { issueAccessToken } from '#shared/auth/access-tokens.ts';
import { createInstance, createUser } from '#shared/auth/provisioning.ts';
import { putLiveEvent } from '#shared/db/events-repo.ts';
import { renderEvent } from '#shared/events/event-render.ts';
import { getConnection, subscriptionsOf } from '#shared/db/live-repo.ts';
import { getItem } from '#shared/db/objects-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createStreamReader } from '#local/storage/stream-reader.ts';
import type { Role } from '#shared/auth/principal.ts';
import { MAX_SUBSCRIPTIONS_PER_CONNECTION } from '#shared/live/websocket/connections.ts';
import { createLiveDeps, type LiveDeps } from '#shared/live/live-deps.ts';
import type { ServerMessage } from '#shared/live/websocket/protocol.ts';
import { startStreamPoller } from '#local/stream-poller.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { liveEvent } from '../support/live-events.ts';
import { RecordingConnections, connectEvent, disconnectEvent, messageEvent, newConnectionId, streamRecord } from '../support/live-handlers.ts';

const newKey = (): string => randomBytes(12).toString('hex');
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * The stream record of a subscription as stored: the fan-out learns of subscriptions from the
 * stream it reads, so a batch built by hand carries them as the stream would.
 */
async function subscribedRecord(instanceKey: string, connectionId: string, topic: string): Promise<DynamoDBRecord> {
  const item = await getItem(t.db, `SUB#${instanceKey}`, `${connectionId}#${topic}`);
  expect(item).toBeDefined();
  return streamRecord(item!);
}

/** An event as subscribers receive it: rendered as the API returns it. */
function delivered(key: string, folder: string, instances: readonly string[], doc: Record<string, unknown>) {
  return renderEvent(
    { key, collection: 'events', type: 'EventMessageData', folder, path: [], instances, version: 1, doc },
    'Gatehouse.Model',
  );
}

function eventItem(instances: readonly string[], linked: readonly string[] = [], pk?: string) {
  const key = newKey();
  const stored = { $type: 'EventMessageData', MessageShort: 'door forced', ObjectLinks: linked.map((k) => ({ LinkedObjectKey: k })) };
  const folder = instances[instances.length - 1]!;
  return {
    doc: delivered(key, folder, instances, stored),
    item: { PK: pk ?? `O#${key}`, SK: 'A', Key: key, Coll: 'events', Type: 'EventMessageData', Folder: folder, Instances: [...instances], Doc: JSON.stringify(stored) },
  };
}

let t: TestDb;
let connections: RecordingConnections;
let deps: LiveDeps;
let websocket: ReturnType<typeof createWebSocketHandler>;
let fanout: ReturnType<typeof createFanoutHandler>;
let root: StoredObject;
let child: StoredObject;
let other: StoredObject;
const tokens: Record<'root' | 'child' | 'other', string> = { root: '', child: '', other: '' };

async function userToken(instance: StoredObject, role: Role = 'Operator'): Promise<string> {
  const name = `u${newKey().slice(-6)}`;
  const user = await createUser(t.db, { instance, name, password: 'Passw0rd!long', role });
  const issued = await issueAccessToken(
    deps.keys,
    deps.config,
    { userKey: user.key, userName: name, instanceKey: instance.key, instanceName: String(instance.doc.CommonName), role },
    new Date(),
  );
  return issued.token;
}

/** Opens a connection for a token; returns its id. */
async function open(token: string): Promise<string> {
  const id = newConnectionId();
  expect(await websocket(connectEvent(id, { token }))).toEqual({ statusCode: 200 });
  return id;
}

async function say(id: string, body: unknown): Promise<ServerMessage | undefined> {
  await websocket(messageEvent(id, body));
  return connections.last(id);
}

beforeAll(async () => {
  t = await createTestDb();
  connections = new RecordingConnections();
  deps = createLiveDeps({ config: t.config, db: t.db, connections });
  websocket = createWebSocketHandler(() => deps);
  fanout = createFanoutHandler(() => deps);
  const suffix = newKey().slice(-8);
  root = await createInstance(t.db, { name: `Root ${suffix}` });
  child = await createInstance(t.db, { name: `Child ${suffix}`, parent: root });
  other = await createInstance(t.db, { name: `Other ${suffix}` });
  [tokens.root, tokens.child, tokens.other] = await Promise.all([userToken(root), userToken(child), userToken(other)]);
});

describe('websocket $connect', () => {
  it('rejects a connection without a token with 401', async () => {
    expect(await websocket(connectEvent(newConnectionId()))).toEqual({ statusCode: 401 });
  });

  it('rejects a Controller user with 401: its role reads credential downloads and decisions, not live events', async () => {
    const controller = await userToken(child, 'Controller');
    const id = newConnectionId();
    expect(await websocket(connectEvent(id, { token: controller }))).toEqual({ statusCode: 401 });
    expect(await getConnection(t.db, id, nowSeconds())).toBeUndefined();
  });

  it('rejects a connection with an invalid token with 401', async () => {
    expect(await websocket(connectEvent(newConnectionId(), { token: 'not.a.token' }))).toEqual({ statusCode: 401 });
  });

  it('accepts an access_token and stores the connection for 2 hours', async () => {
    const id = await open(tokens.root);

    const stored = await getConnection(t.db, id, nowSeconds());
    expect(stored?.principal).toMatchObject({ instanceKey: root.key, role: 'Operator' });
    const item = await getItem(t.db, `WSC#${id}`, 'C');
    expect(Number(item?.ttl) - nowSeconds()).toBeGreaterThan(7200 - 60);
    expect(Number(item?.ttl) - nowSeconds()).toBeLessThanOrEqual(7200);
  });

  it('accepts a bearer token in an Authorization header of any case', async () => {
    const id = newConnectionId();

    const res = await websocket(connectEvent(id, { headers: { authorization: `Bearer ${tokens.child}` } }));

    expect(res).toEqual({ statusCode: 200 });
    expect((await getConnection(t.db, id, nowSeconds()))?.principal.instanceKey).toBe(child.key);
  });
});

describe('websocket messages', () => {
  it('answers ping with pong', async () => {
    const id = await open(tokens.root);

    expect(await say(id, { action: 'ping' })).toEqual({ type: 'pong' });
  });

  it('answers malformed messages with InvalidMessage and no topic', async () => {
    const id = await open(tokens.root);

    for (const body of ['{oops', '[]', { action: 'jump' }, { action: 'subscribe' }, { action: 'subscribe', topic: 7 }]) {
      expect(await say(id, body)).toEqual({ type: 'error', error: 'InvalidMessage', message: expect.any(String) });
    }
  });

  it('answers malformed topics with InvalidTopic', async () => {
    const id = await open(tokens.root);

    for (const topic of ['', '/', `${root.key}/$`, `/${root.key}`, `/${root.key}/*`, `/${root.key}/$/x`, `/ROOT/$`]) {
      expect(await say(id, { action: 'subscribe', topic })).toEqual({ type: 'error', topic, error: 'InvalidTopic', message: expect.any(String) });
    }
  });

  it('subscribes to the caller\'s instance, its sub-instances and their objects', async () => {
    const id = await open(tokens.root);

    for (const topic of [`/${root.key}/$`, `/${child.key}/$`, `/${child.key}/${newKey()}`]) {
      expect(await say(id, { action: 'subscribe', topic })).toEqual({ type: 'subscribed', topic });
    }
    expect((await subscriptionsOf(t.db, child.key, nowSeconds())).filter((s) => s.connectionId === id)).toHaveLength(2);
  });

  it('rejects topics above or beside the caller\'s instance, or of no instance, with Forbidden', async () => {
    const id = await open(tokens.child);
    const notAnInstance = (await getConnection(t.db, id, nowSeconds()))!.principal.userKey;

    for (const topic of [`/${root.key}/$`, `/${other.key}/$`, `/${other.key}/${newKey()}`, `/${newKey()}/$`, `/${notAnInstance}/$`]) {
      expect(await say(id, { action: 'subscribe', topic })).toEqual({ type: 'error', topic, error: 'Forbidden', message: expect.any(String) });
    }
    expect((await subscriptionsOf(t.db, root.key, nowSeconds())).filter((s) => s.connectionId === id)).toEqual([]);
  });

  it('rejects a subscription from a connection that is not open with Forbidden', async () => {
    const id = newConnectionId();

    expect(await say(id, { action: 'subscribe', topic: `/${root.key}/$` })).toMatchObject({ type: 'error', error: 'Forbidden' });
  });

  it('unsubscribes, idempotently', async () => {
    const id = await open(tokens.root);
    const topic = `/${root.key}/$`;
    await say(id, { action: 'subscribe', topic });

    expect(await say(id, { action: 'unsubscribe', topic })).toEqual({ type: 'unsubscribed', topic });
    expect(await say(id, { action: 'unsubscribe', topic })).toEqual({ type: 'unsubscribed', topic });

    expect((await subscriptionsOf(t.db, root.key, nowSeconds())).filter((s) => s.connectionId === id)).toEqual([]);
    expect((await getConnection(t.db, id, nowSeconds()))?.subscriptions).toEqual({});
  });

  it(`rejects more than ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions on one connection`, async () => {
    const id = await open(tokens.root);
    const topics = Array.from({ length: MAX_SUBSCRIPTIONS_PER_CONNECTION }, () => `/${root.key}/${newKey()}`);
    for (const topic of topics) await websocket(messageEvent(id, { action: 'subscribe', topic }));
    expect(connections.of(id).filter((m) => m.type === 'subscribed')).toHaveLength(MAX_SUBSCRIPTIONS_PER_CONNECTION);

    const extra = `/${root.key}/${newKey()}`;
    expect(await say(id, { action: 'subscribe', topic: extra })).toMatchObject({ type: 'error', topic: extra, error: 'Forbidden' });
    // Subscribing again to a held topic still succeeds.
    expect(await say(id, { action: 'subscribe', topic: topics[0] })).toEqual({ type: 'subscribed', topic: topics[0] });
  });
});

describe('websocket $disconnect', () => {
  it('deletes the connection and every subscription it held', async () => {
    const id = await open(tokens.root);
    await say(id, { action: 'subscribe', topic: `/${root.key}/$` });
    await say(id, { action: 'subscribe', topic: `/${child.key}/${newKey()}` });

    expect(await websocket(disconnectEvent(id))).toEqual({ statusCode: 200 });

    expect(await getConnection(t.db, id, nowSeconds())).toBeUndefined();
    expect(await getItem(t.db, `WSC#${id}`, 'C')).toBeUndefined();
    const left = [...(await subscriptionsOf(t.db, root.key, nowSeconds())), ...(await subscriptionsOf(t.db, child.key, nowSeconds()))];
    expect(left.filter((s) => s.connectionId === id)).toEqual([]);
  });
});

describe('fanout', () => {
  let all: string;
  let viaRoot: string;
  let objectWatcher: string;
  let otherObjectWatcher: string;
  let stranger: string;
  const watched = newKey();

  beforeAll(async () => {
    all = await open(tokens.child);
    await say(all, { action: 'subscribe', topic: `/${child.key}/$` });
    viaRoot = await open(tokens.root);
    await say(viaRoot, { action: 'subscribe', topic: `/${root.key}/$` });
    await say(viaRoot, { action: 'subscribe', topic: `/${child.key}/$` });
    objectWatcher = await open(tokens.root);
    await say(objectWatcher, { action: 'subscribe', topic: `/${child.key}/${watched}` });
    otherObjectWatcher = await open(tokens.root);
    await say(otherObjectWatcher, { action: 'subscribe', topic: `/${child.key}/${newKey()}` });
    stranger = await open(tokens.other);
    await say(stranger, { action: 'subscribe', topic: `/${other.key}/$` });
  });

  const events = (id: string) => connections.of(id).filter((m) => m.type === 'event');

  it('delivers an event to each matching subscription once', async () => {
    const { doc, item } = eventItem([root.key, child.key], [watched]);

    const res = await fanout({ Records: [streamRecord(item)] });

    expect(res).toEqual({ batchItemFailures: [] });
    expect(events(all).at(-1)).toEqual({ type: 'event', topic: `/${child.key}/$`, event: doc });
    expect(events(viaRoot).filter((m) => (m as { event: { Key: string } }).event.Key === doc.Key)).toEqual([
      { type: 'event', topic: `/${root.key}/$`, event: doc },
      { type: 'event', topic: `/${child.key}/$`, event: doc },
    ]);
    expect(events(objectWatcher).at(-1)).toEqual({ type: 'event', topic: `/${child.key}/${watched}`, event: doc });
    expect(events(otherObjectWatcher)).toEqual([]);
    expect(events(stranger)).toEqual([]);
  });

  it('delivers live-only events (LIVE# items)', async () => {
    const { doc, item } = eventItem([root.key, child.key], [], `LIVE#${newKey()}`);

    await fanout({ Records: [streamRecord(item)] });

    expect(events(all).at(-1)).toEqual({ type: 'event', topic: `/${child.key}/$`, event: doc });
  });

  it('ignores modified and removed events and items that are not events', async () => {
    const before = events(all).length;
    const { item } = eventItem([root.key, child.key]);
    const person = { PK: `O#${newKey()}`, SK: 'A', Coll: 'people', Instances: [root.key, child.key], Doc: '{}' };

    const res = await fanout({ Records: [streamRecord(item, 'MODIFY'), streamRecord(item, 'REMOVE'), streamRecord(person)] });

    expect(res).toEqual({ batchItemFailures: [] });
    expect(events(all)).toHaveLength(before);
  });

  it('forgets a connection that is gone (410)', async () => {
    const id = await open(tokens.child);
    await say(id, { action: 'subscribe', topic: `/${child.key}/$` });
    connections.gone.add(id);

    const res = await fanout({ Records: [await subscribedRecord(child.key, id, `/${child.key}/$`), streamRecord(eventItem([root.key, child.key]).item)] });

    expect(res).toEqual({ batchItemFailures: [] });
    expect(await getItem(t.db, `WSC#${id}`, 'C')).toBeUndefined();
    expect((await subscriptionsOf(t.db, child.key, nowSeconds())).filter((s) => s.connectionId === id)).toEqual([]);
  });

  it('reports the records it could not deliver in batchItemFailures', async () => {
    const id = await open(tokens.other);
    await say(id, { action: 'subscribe', topic: `/${other.key}/$` });
    connections.failing.add(id);
    const subscribed = await subscribedRecord(other.key, id, `/${other.key}/$`);
    const ok = streamRecord(eventItem([root.key]).item);
    const failing = streamRecord(eventItem([other.key]).item);

    const res = await fanout({ Records: [subscribed, ok, failing] });

    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: failing.dynamodb!.SequenceNumber }] });
    connections.failing.delete(id);
  });

  it('skips subscriptions whose connection lifetime is over', async () => {
    const later = createLiveDeps({ config: t.config, db: t.db, connections, now: () => new Date(Date.now() + 3 * 3600_000) });
    const before = events(all).length;

    await createFanoutHandler(() => later)({ Records: [streamRecord(eventItem([root.key, child.key]).item)] });

    expect(events(all)).toHaveLength(before);
  });
});

describe('stream poller on the table\'s stream', () => {
  it('delivers an event written to the table to its subscribers', async () => {
    const poller = await startStreamPoller({ reader: createStreamReader(t.config), invoke: (e) => fanout(e), logger: deps.logger, idleMs: 50 });
    try {
      // Subscribed once the poller reads the stream: the fan-out learns of it from its record.
      const id = await open(tokens.root);
      await say(id, { action: 'subscribe', topic: `/${root.key}/$` });
      const w = liveEvent(root.key);

      await putLiveEvent(t.db, w, nowSeconds());

      await expect.poll(() => connections.of(id).filter((m) => m.type === 'event'), { timeout: 10_000 }).toEqual([
        { type: 'event', topic: `/${root.key}/$`, event: delivered(w.event.key, w.event.folder, w.event.instances, w.event.doc) },
      ]);
    } finally {
      await poller.stop();
    }
  });
});

afterAll(async () => {
  t?.db.raw.destroy();
});
