/**
 * Events end to end on the local runtime: an app and an event type made over HTTP, a WebSocket
 * subscriber, 1000 events published from parallel clients, each received exactly once and each
 * readable through the events list. Also the GET-with-body calls over a real socket.
 */
import { randomBytes } from 'node:crypto';
import { serialize } from 'bson';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { documentedRequest } from '../support/documented-fetch.ts';
import { adminToken, openLiveClient, type LiveClient } from '../support/runtime.ts';

const url = inject('url');
const wsUrl = inject('wsUrl');
const admin = inject('admin');
const NS = 'Gatehouse.Model';

let token: string;
const clients: LiveClient[] = [];

interface Answer {
  readonly status: number;
  readonly body: any;
}

/** `node:http`, so GET can carry a body (fetch refuses it). */
async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await documentedRequest(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: res.text ? JSON.parse(res.text) : undefined };
}

async function ok(method: string, path: string, body: unknown, status: number): Promise<any> {
  const r = await call(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

const unique = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  token = await adminToken(url, admin);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

describe('events on the local runtime', () => {
  it('delivers 1000 events published by parallel clients to a subscriber exactly once, and lists every one', async () => {
    const inst = admin.instanceKey;
    const nickname = unique('LoadApp');
    const app = await ok('POST', `/api/f/${inst}/apps`, { $type: `${NS}.AppInfo, ${NS}`, CommonName: unique('app'), Monikers: [{ Namespace: 'E2E', Nickname: nickname }] }, 201);
    const type = await ok(
      'PUT',
      `${app.Href}/eventtypes`,
      { $type: `${NS}.EventTypeInfo, ${NS}`, CommonName: 'Load', Monikers: [{ Namespace: 'E2E', Nickname: 'Load' }], Priority: 3, MessageTemplateShort: 'event {N}' },
      201,
    );
    const folder = await ok('POST', `/api/f/${inst}/folders`, { $type: 'FolderInfo', CommonName: unique('load') }, 201);

    const ws = await openLiveClient(wsUrl, { token });
    clients.push(ws);
    ws.send({ action: 'subscribe', topic: `/${inst}/$` });
    expect(await ws.next(10_000)).toEqual({ type: 'subscribed', topic: `/${inst}/$` });

    // Receive in the background while publishing.
    const received = new Map<string, number>();
    let stray = 0;
    const receiving = (async () => {
      for (;;) {
        let m: any;
        try {
          m = await ws.next(20_000);
        } catch {
          return;
        }
        if (m?.type !== 'event') {
          stray++;
          continue;
        }
        if (m.event?.EventTypeKey !== type.Key) continue; // audit events of other tests' objects
        expect(m.topic).toBe(`/${inst}/$`);
        received.set(m.event.Key, (received.get(m.event.Key) ?? 0) + 1);
        if (received.size === 1000 && [...received.values()].every((n) => n === 1)) return;
      }
    })();

    const TOTAL = 1000;
    const CLIENTS = 20;
    const published: string[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = c; i < TOTAL; i += CLIENTS) {
          const ev = await ok(
            'POST',
            `/api/f/${folder.Key}/eventmessagesink`,
            {
              $type: `${NS}.EventMessagePosting, ${NS}`,
              OccurredOn: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
              AppKey: nickname,
              EventTypeMoniker: { Namespace: 'E2E', Nickname: 'Load' },
              RelatedObjects: [],
              EventDataBsonBase64: Buffer.from(serialize({ N: i })).toString('base64'),
            },
            201,
          );
          published.push(ev.Key);
        }
      }),
    );
    expect(new Set(published).size).toBe(TOTAL);
    await receiving;
    // Nothing arrives twice, even a little later.
    for (const m of await ws.drain(1500)) {
      if (m?.type === 'event' && m.event?.EventTypeKey === type.Key) received.set(m.event.Key, (received.get(m.event.Key) ?? 0) + 1);
    }
    expect(stray).toBe(0);
    expect(received.size).toBe(TOTAL);
    expect([...received.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(new Set(received.keys())).toEqual(new Set(published));

    const listed = await ok('GET', `/api/f/${folder.Key}/events?pageSize=1000`, undefined, 200);
    expect(listed).toHaveLength(TOTAL);
    expect(new Set(listed.map((x: any) => x.Key))).toEqual(new Set(published));
    expect(listed.map((x: any) => x.OccurredOn)).toEqual([...listed.map((x: any) => x.OccurredOn)].sort().reverse());
    expect(await ok('GET', `/api/f/${folder.Key}/events?pageSize=1000&page=1`, undefined, 200)).toEqual([]);
    // DynamoDB Local on disk serialises writes (~40 ms each here): 1000 publishes take most of a minute.
  }, 300_000);

  it('accepts the spec\'s GET-with-body calls over a real socket: event type update and lastevent', async () => {
    const inst = admin.instanceKey;
    const app = await ok('POST', `/api/f/${inst}/apps`, { $type: 'AppInfo', CommonName: unique('app'), Monikers: [{ Namespace: 'E2E', Nickname: unique('A') }] }, 201);
    const type = await ok('PUT', `${app.Href}/eventtypes`, { $type: 'EventTypeInfo', Monikers: [{ Namespace: 'E2E', Nickname: 'T' }], Priority: 1 }, 201);
    expect((await call('GET', type.Href, { ...type, Priority: 4 })).status).toBe(204);
    expect((await ok('GET', type.Href, undefined, 200)).Priority).toBe(4);

    const person = await ok('POST', `/api/f/${inst}/people`, { $type: 'PersonInfo', GivenName: 'E2E' }, 201);
    const ev = await ok(
      'POST',
      `/api/f/${inst}/eventmessagesink`,
      {
        $type: 'EventMessagePosting',
        OccurredOn: new Date().toISOString(),
        AppKey: app.Key,
        EventTypeMoniker: { Namespace: 'E2E', Nickname: 'T' },
        RelatedObjects: [{ Relation: 'Person', LinkedObjectKey: person.Key }],
      },
      201,
    );
    const last = await ok('GET', `/api/f/${inst}/lastevent?since=2000-01-01T00:00:00Z`, [person.Key], 200);
    expect(last).toEqual([expect.objectContaining({ ObjectKey: person.Key, EventKey: ev.Key, Priority: 4 })]);
  });
});
