/**
 * The live event feed on the local runtime, as a WebSocket client sees it: the handshake's
 * authentication, the message protocol, API Gateway's limits, and events travelling from a table
 * write through the stream poller, the fan-out and the Management API to the client.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '#shared/db/client.ts';
import { putLiveEvent } from '#shared/db/events-repo.ts';
import { renderEvent } from '#shared/events/event-render.ts';
import { liveEvent } from '../support/live-events.ts';
import { adminToken, HandshakeRefused, openLiveClient, type LiveClient } from '../support/runtime.ts';
import { documentedFetch } from '../support/documented-fetch.ts';

const url = inject('url');
const wsUrl = inject('wsUrl');
const admin = inject('admin');
const key = (): string => randomBytes(12).toString('hex');

let token: string;
let db: Db;
const clients: LiveClient[] = [];

async function connect(opts: Parameters<typeof openLiveClient>[1] = { token }): Promise<LiveClient> {
  const c = await openLiveClient(wsUrl, opts);
  clients.push(c);
  return c;
}

/**
 * The next message that is not an event of another test: other e2e files create objects in the
 * same instance, and their audit events reach every `/<instance>/$` subscriber.
 */
async function nextFor(c: LiveClient, eventKey?: string, timeoutMs = 10_000): Promise<any> {
  for (;;) {
    const m = await c.next(timeoutMs);
    if (m?.type !== 'event' || (eventKey !== undefined && m.event?.Key === eventKey)) return m;
  }
}

/** The events of `eventKey` that arrive within `ms`. */
async function moreOf(c: LiveClient, eventKey: string, ms = 300): Promise<any[]> {
  return (await c.drain(ms)).filter((m) => m?.type !== 'event' || m.event?.Key === eventKey);
}

/** Publishes a live-only event of the seeded instance straight into the table. */
async function publish(linked: string[] = []): Promise<Record<string, unknown>> {
  const w = liveEvent(admin.instanceKey, linked);
  await putLiveEvent(db, w, Math.floor(Date.now() / 1000));
  // Subscribers receive the event rendered as the API returns it.
  return renderEvent(w.event, 'Gatehouse.Model');
}

beforeAll(async () => {
  token = await adminToken(url, admin);
  db = createDb({ tableName: 'gatehouse', dynamodbEndpoint: inject('runtimeDynamoEndpoint'), region: 'us-east-1' });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  db?.raw.destroy();
});

describe('WebSocket handshake', () => {
  it('rejects a connection without a token with 401', async () => {
    await expect(openLiveClient(wsUrl)).rejects.toEqual(new HandshakeRefused(401));
  });

  it('rejects a connection with an invalid token with 401', async () => {
    await expect(openLiveClient(wsUrl, { token: `${token.slice(0, -4)}AAAA` })).rejects.toEqual(new HandshakeRefused(401));
  });

  it('rejects an upgrade on another path with 404', async () => {
    await expect(openLiveClient(`${url.replace('http', 'ws')}/other`, { token })).rejects.toEqual(new HandshakeRefused(404));
  });

  it('accepts the token in an Authorization header', async () => {
    const c = await connect({ headers: { Authorization: `Bearer ${token}` } });

    c.send({ action: 'ping' });

    expect(await c.next()).toEqual({ type: 'pong' });
  });
});

describe('live event protocol', () => {
  it('answers ping with pong', async () => {
    const c = await connect();

    c.send({ action: 'ping' });

    expect(await c.next()).toEqual({ type: 'pong' });
  });

  it('answers malformed messages and topics with errors', async () => {
    const c = await connect();

    c.send('{not json');
    expect(await c.next()).toEqual({ type: 'error', error: 'InvalidMessage', message: expect.any(String) });
    c.send({ action: 'dance' });
    expect(await c.next()).toEqual({ type: 'error', error: 'InvalidMessage', message: expect.any(String) });
    c.send({ action: 'subscribe', topic: '/not-a-key/$' });
    expect(await c.next()).toEqual({ type: 'error', topic: '/not-a-key/$', error: 'InvalidTopic', message: expect.any(String) });
  });

  it('rejects a topic outside the caller\'s instance with Forbidden', async () => {
    const c = await connect();
    const topic = `/${key()}/$`;

    c.send({ action: 'subscribe', topic });

    expect(await c.next()).toEqual({ type: 'error', topic, error: 'Forbidden', message: expect.any(String) });
  });

  it('delivers a new event to instance and object subscribers once each', async () => {
    const c = await connect();
    const other = await connect();
    const objectKey = key();
    const all = `/${admin.instanceKey}/$`;
    const one = `/${admin.instanceKey}/${objectKey}`;
    c.send({ action: 'subscribe', topic: all });
    expect(await nextFor(c)).toEqual({ type: 'subscribed', topic: all });
    c.send({ action: 'subscribe', topic: one });
    expect(await nextFor(c)).toEqual({ type: 'subscribed', topic: one });
    other.send({ action: 'subscribe', topic: `/${admin.instanceKey}/${key()}` });
    expect(await other.next()).toMatchObject({ type: 'subscribed' });

    const event = await publish([objectKey]);

    const got = [await nextFor(c, event.Key as string), await nextFor(c, event.Key as string)];
    expect(got).toEqual(
      expect.arrayContaining([
        { type: 'event', topic: all, event },
        { type: 'event', topic: one, event },
      ]),
    );
    expect(await moreOf(c, event.Key as string)).toEqual([]);
    expect(await other.drain(0)).toEqual([]);
  });

  it('stops delivering a topic after unsubscribe', async () => {
    const c = await connect();
    const objectKey = key();
    const all = `/${admin.instanceKey}/$`;
    const one = `/${admin.instanceKey}/${objectKey}`;
    for (const topic of [all, one]) {
      c.send({ action: 'subscribe', topic });
      expect(await nextFor(c)).toEqual({ type: 'subscribed', topic });
    }
    c.send({ action: 'unsubscribe', topic: one });
    expect(await nextFor(c)).toEqual({ type: 'unsubscribed', topic: one });

    const event = await publish([objectKey]);

    expect(await nextFor(c, event.Key as string)).toEqual({ type: 'event', topic: all, event });
    expect(await moreOf(c, event.Key as string)).toEqual([]);
  });
});

describe('events through the whole platform', () => {
  it('delivers the audit event of an object created over HTTP to its subscribers', async () => {
    const c = await connect();
    const all = `/${admin.instanceKey}/$`;
    c.send({ action: 'subscribe', topic: all });
    expect(await nextFor(c)).toEqual({ type: 'subscribed', topic: all });

    const res = await documentedFetch(`${url}/api/f/${admin.instanceKey}/people`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ $type: 'Gatehouse.Model.PersonInfo, Gatehouse.Model', CommonName: 'Ada Live', GivenName: 'Ada', Surname: 'Live', InFolderKey: admin.instanceKey }),
    });
    expect(res.status).toBe(201);
    const person = (await res.json()) as { Key: string };

    // The person's write reaches the audit trail through the stream; the audit event reaches
    // the client through the stream again.
    let got: any;
    do got = await c.next(15_000);
    while (!got.event?.ObjectLinks?.some((l: { LinkedObjectKey?: string }) => l.LinkedObjectKey === person.Key));
    expect(got).toMatchObject({ type: 'event', topic: all, event: { Key: expect.any(String), ObjectLinks: expect.any(Array) } });
  });
});

describe('API Gateway WebSocket limits', () => {
  it('closes the connection on a binary frame with 1003', async () => {
    const c = await connect();

    c.ws.send(Buffer.from([1, 2, 3]), { binary: true });

    expect((await c.closed).code).toBe(1003);
  });

  it('closes the connection on a message over 128 KB with 1009', async () => {
    const c = await connect();

    c.send(JSON.stringify({ action: 'ping', pad: 'x'.repeat(128 * 1024) }));

    expect((await c.closed).code).toBe(1009);
  });
});
