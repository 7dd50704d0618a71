/**
 * The fan-out's subscriber cache on the local runtime, as WebSocket clients see it: once the
 * fan-out knows an instance's subscribers, a client that subscribes and then publishes still
 * receives its event at once, and one that unsubscribes stops receiving at the next event (the
 * subscription records reach the fan-out through the same stream, before the events after them).
 * Tenant isolation with the cache in place: test/reliability/isolation-live.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '#shared/db/client.ts';
import { putLiveEvent } from '#shared/db/events-repo.ts';
import { liveEvent } from '../support/live-events.ts';
import { adminToken, openLiveClient, type LiveClient } from '../support/runtime.ts';

const url = inject('url');
const wsUrl = inject('wsUrl');
const admin = inject('admin');
const key = (): string => randomBytes(12).toString('hex');

let token: string;
let db: Db;
const clients: LiveClient[] = [];

async function connect(): Promise<LiveClient> {
  const c = await openLiveClient(wsUrl, { token });
  clients.push(c);
  return c;
}

/** The next message that is not an event of another test (other files publish in the same instance). */
async function nextFor(c: LiveClient, eventKey?: string, timeoutMs = 10_000): Promise<any> {
  for (;;) {
    const m = await c.next(timeoutMs);
    if (m?.type !== 'event' || (eventKey !== undefined && m.event?.Key === eventKey)) return m;
  }
}

async function subscribe(c: LiveClient, topic: string): Promise<void> {
  c.send({ action: 'subscribe', topic });
  expect(await nextFor(c)).toEqual({ type: 'subscribed', topic });
}

/** Publishes a live-only event of the seeded instance straight into the runtime's table; its Key. */
async function publish(linked: string[] = []): Promise<string> {
  const w = liveEvent(admin.instanceKey, linked);
  await putLiveEvent(db, w, Math.floor(Date.now() / 1000));
  return w.event.key;
}

const all = () => `/${admin.instanceKey}/$`;

beforeAll(async () => {
  token = await adminToken(url, admin);
  db = createDb({ tableName: 'gatehouse', dynamodbEndpoint: inject('runtimeDynamoEndpoint'), region: 'us-east-1' });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  db?.raw.destroy();
});

describe('the fan-out\'s subscriber cache on the local runtime', () => {
  let watcher: LiveClient;

  beforeAll(async () => {
    // The first event makes the fan-out read the instance's subscribers; later ones use what it keeps.
    watcher = await connect();
    await subscribe(watcher, all());
    const warm = await publish();
    expect(await nextFor(watcher, warm)).toMatchObject({ type: 'event', topic: all() });
  });

  it('delivers to a new subscription the event published right after its subscribed answer, every time', async () => {
    for (let i = 0; i < 5; i++) {
      const c = await connect();
      const objectKey = key();
      const topic = `/${admin.instanceKey}/${objectKey}`;
      await subscribe(c, all());
      await subscribe(c, topic);

      const eventKey = await publish([objectKey]);

      const got = [await nextFor(c, eventKey), await nextFor(c, eventKey)].map((m) => m.topic).sort();
      expect(got).toEqual([all(), topic].sort());
    }
  });

  it('stops delivering a topic from the first event published after its unsubscribed answer, every time', async () => {
    const c = await connect();
    await subscribe(c, all());
    for (let i = 0; i < 3; i++) {
      const objectKey = key();
      const topic = `/${admin.instanceKey}/${objectKey}`;
      await subscribe(c, topic);
      c.send({ action: 'unsubscribe', topic });
      expect(await nextFor(c)).toEqual({ type: 'unsubscribed', topic });

      const eventKey = await publish([objectKey]);

      expect(await nextFor(c, eventKey)).toMatchObject({ type: 'event', topic: all() });
      // The instance topic's message and any for the object topic leave in the same batch.
      expect((await c.drain(300)).filter((m) => m?.type === 'event' && m.event?.Key === eventKey)).toEqual([]);
    }
  });
});
