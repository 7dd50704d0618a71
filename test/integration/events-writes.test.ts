/**
 * How an event is written: its item and its pointers in one round trip without a transaction (a
 * publish: one BatchWriteItem; a stream consumer: a conditional PutItem beside the pointers'
 * PutItems), at the floor of the write units, and still right under retries, races and failures.
 * Faults are injected at the SDK client boundary (a middleware of the real client that fails
 * chosen requests, or holds items of a BatchWriteItem back as DynamoDB's UnprocessedItems);
 * everything else is DynamoDB Local.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { randomUUID } from 'node:crypto';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConditionFailed } from '#shared/errors.ts';
import { pointerItems, putEvent } from '#shared/db/events-repo.ts';
import { writeUnits } from '#shared/db/item-size.ts';
import { getItem } from '#shared/db/objects-repo.ts';
import { auditEventsFromStream } from '#shared/events/audit.ts';
import type { AuditDeps } from '#shared/events/audit-event.ts';
import { auditEventKey } from '#shared/events/audit-event.ts';
import { eventWrite } from '#shared/events/publish.ts';
import { waves } from '../../bench/stats.ts';
import { setupEvents, type Env } from './events-fixture.ts';

let e: Env;

beforeAll(async () => {
  e = await setupEvents();
});

interface Sent {
  readonly command: string;
  readonly pk: string;
  readonly startMs: number;
  endMs: number;
}

const sent: Sent[] = [];
let failWhen: ((command: string, pk: string) => boolean) | undefined;
/** Items (by PK) a BatchWriteItem leaves unprocessed, as DynamoDB does under load. */
let unprocessedWhen: ((pk: string) => boolean) | undefined;
let installed = false;

type Marshalled = { PutRequest?: { Item?: { PK?: { S?: string } } } };

/**
 * Takes the items `unprocessedWhen` picks out of a BatchWriteItem request before it is sent, and
 * hands them back in the answer's UnprocessedItems.
 */
async function holdBack(next: (a: any) => Promise<any>, args: any): Promise<any> {
  const req = args.request as { body: string; headers: Record<string, string> };
  const body = JSON.parse(req.body) as { RequestItems: Record<string, Marshalled[]> };
  const [table, requests] = Object.entries(body.RequestItems)[0]!;
  const held = requests.filter((r) => unprocessedWhen!(r.PutRequest?.Item?.PK?.S ?? ''));
  if (held.length === 0) return next(args);
  // The document client has already turned the answer's attribute values into plain ones.
  const plain = held.map((r) => ({ PutRequest: { Item: unmarshall(r.PutRequest!.Item as Record<string, AttributeValue>) } }));
  const kept = requests.filter((r) => !held.includes(r));
  // Nothing left to send: DynamoDB would have processed none of them.
  if (kept.length === 0) return { output: { UnprocessedItems: { [table]: plain }, $metadata: {} }, response: {} };
  body.RequestItems[table] = kept;
  req.body = JSON.stringify(body);
  if (req.headers['content-length'] !== undefined) req.headers['content-length'] = String(Buffer.byteLength(req.body));
  const out = await next(args);
  const output = out.output as { UnprocessedItems?: Record<string, unknown[]> };
  output.UnprocessedItems = { ...output.UnprocessedItems, [table]: [...(output.UnprocessedItems?.[table] ?? []), ...plain] };
  return out;
}

/**
 * Records every request's command, item key and time; fails those `failWhen` picks (a throttle)
 * and leaves unprocessed the batch items `unprocessedWhen` picks.
 */
function install() {
  if (installed) return;
  installed = true;
  e.t.db.raw.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context.commandName ?? '').replace(/Command$/, '');
      const input = args.input as { Item?: { PK?: { S?: string } }; Key?: { PK?: { S?: string } } };
      const pk = input.Item?.PK?.S ?? input.Key?.PK?.S ?? '';
      const s: Sent = { command, pk, startMs: performance.now(), endMs: 0 };
      sent.push(s);
      try {
        if (failWhen?.(command, pk)) {
          throw Object.assign(new Error(`injected failure of ${command} ${pk}`), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
        }
        if (command === 'BatchWriteItem' && unprocessedWhen) return await holdBack(next, args);
        return await next(args);
      } finally {
        s.endMs = performance.now();
      }
    },
    { step: 'build', name: 'testFaults' },
  );
}

afterEach(() => {
  failWhen = undefined;
  unprocessedWhen = undefined;
});

async function pointersOf(objectKey: string): Promise<Record<string, unknown>[]> {
  const out = await e.t.db.doc.send(
    new QueryCommand({ TableName: e.t.db.tableName, KeyConditionExpression: 'PK = :pk', ExpressionAttributeValues: { ':pk': `EP#${objectKey}` } }),
  );
  return out.Items ?? [];
}

const eventItem = (key: string) => getItem(e.t.db, `O#${key}`, 'A', true);

async function threePeople() {
  const app = await e.app();
  const type = await e.eventType(app);
  const people = await Promise.all([1, 2, 3].map(() => e.object('people', 'PersonInfo')));
  const related = people.map((p) => ({ Relation: 'Person', LinkedObjectKey: p.Key, CommonName: p.CommonName }));
  return { app, type, people, related };
}

describe('publishing an event without a transaction', () => {
  it('writes the event and its 3 pointers with one BatchWriteItem, at the floor of the write units', async () => {
    install();
    const { app, type, people, related } = await threePeople();
    const body = e.posting(app.Key, type, { RelatedObjects: related });
    await e.published(body); // warms the resolution caches
    const c0 = e.t.calls.length;
    const s0 = sent.length;
    const ev = await e.published(body);
    const calls = e.t.calls.slice(c0);
    expect(calls.map((c) => c.command)).toEqual(['BatchWriteItem']);
    expect(waves(sent.slice(s0))).toBe(1);
    // The floor: each item written once, one unit per started KB on the table and on each index it is in.
    const items = [(await eventItem(ev.Key))!, ...(await Promise.all(people.map(async (p) => (await pointersOf(p.Key)).find((i) => i.EventKey === ev.Key)!)))];
    const floor = items.reduce((s, i) => s + writeUnits(i), 0);
    expect(floor).toBe(5);
    expect(calls.reduce((s, c) => s + c.write, 0)).toBe(floor);
    // The event reads back as it was answered.
    expect((await e.api.get(ev.Href, { token: e.token })).body).toEqual(ev);
  });

  it('an event without related objects is one conditional PutItem', async () => {
    const app = await e.app();
    const type = await e.eventType(app);
    const body = e.posting(app.Key, type);
    await e.published(body);
    const warm = await e.measure(() => e.published(body));
    expect(warm.commands).toEqual(['PutItem']);
    expect((await e.api.get(warm.result.Href, { token: e.token })).body).toEqual(warm.result);
  });

  it('a pointer DynamoDB keeps leaving unprocessed leaves neither the event nor any pointer; the client\'s retry stores it once', async () => {
    install();
    const { app, type, people, related } = await threePeople();
    const body = e.posting(app.Key, type, { RelatedObjects: related });
    await e.published(e.posting(app.Key, type)); // warms the app and type
    unprocessedWhen = (pk) => pk === `EP#${people[1]!.Key}`;
    const r = await e.publish(body);
    expect(r.status).toBe(503);
    unprocessedWhen = undefined;
    for (const p of people) expect(await pointersOf(p.Key)).toEqual([]);
    const timeline = await e.api.get(`/api/f/${e.root}/events`, { token: e.token, query: { forKeys: people[0]!.Key } });
    expect(timeline.body).toEqual([]);

    const retried = await e.published(body);
    for (const p of people) expect((await pointersOf(p.Key)).map((i) => i.EventKey)).toEqual([retried.Key]);
    const listed = await e.api.get(`/api/f/${e.root}/events`, { token: e.token, query: { forKeys: people.map((p) => p.Key).join(',') } });
    expect(listed.body.map((x: any) => x.Key)).toEqual([retried.Key]);
  });

  it('a pointer left unprocessed once is sent again: the publish succeeds with every pointer', async () => {
    install();
    const { app, type, people, related } = await threePeople();
    let held = 0;
    unprocessedWhen = (pk) => pk === `EP#${people[2]!.Key}` && held++ === 0;
    const ev = await e.published(e.posting(app.Key, type, { RelatedObjects: related }));
    expect(held).toBe(2);
    for (const p of people) expect((await pointersOf(p.Key)).map((i) => i.EventKey)).toEqual([ev.Key]);
  });

  it('a failed BatchWriteItem answers 503 and leaves nothing', async () => {
    install();
    const { app, type, people, related } = await threePeople();
    await e.published(e.posting(app.Key, type));
    failWhen = (command) => command === 'BatchWriteItem';
    expect((await e.publish(e.posting(app.Key, type, { RelatedObjects: related }))).status).toBe(503);
    failWhen = undefined;
    for (const p of people) expect(await pointersOf(p.Key)).toEqual([]);
  });
});

describe('a stream consumer\'s write (idempotent): conditional PutItem beside the pointers\' PutItems', () => {
  async function auditLike(round: number) {
    const people = await Promise.all([1, 2].map(() => e.object('people', 'PersonInfo')));
    const w = eventWrite({
      key: `0123456789abcdef0123bb0${round}`,
      placement: { folder: e.root, path: [e.root], instances: [e.root] },
      appKey: 'dddddddddddddddddddddddd',
      eventTypeKey: 'eeeeeeeeeeeeeeeeeeeeeeee',
      eventTypeMoniker: { Namespace: 'Vendor', Nickname: 'Audit' },
      occurredOn: new Date('2026-02-02T00:00:00.000Z'),
      publishedOn: new Date('2026-02-02T00:00:01.000Z'),
      priority: 0,
      requiresAcknowledgement: false,
      messageLong: null,
      messageShort: 'audit',
      objectLinks: people.map((p) => ({ $type: 'ObjectLinkItem', Href: p.Href, LinkedObjectKey: p.Key, CommonName: p.CommonName, Relation: 'Object', MetaDataBson: null })),
      eventDataBsonBase64: null,
      retentionDays: 30,
    });
    return { people, w };
  }

  it('sends the event and its pointers at once', async () => {
    install();
    const { people, w } = await auditLike(1);
    const s0 = sent.length;
    const { result, commands } = await e.measure(() => putEvent(e.t.db, w, true));
    expect(result).toBe(true);
    expect(commands).toEqual(['PutItem', 'PutItem', 'PutItem']);
    expect(waves(sent.slice(s0))).toBe(1);
    for (const p of people) expect((await pointersOf(p.Key)).map((i) => i.EventKey)).toEqual([w.event.key]);
  });

  it('a pointer that fails twice removes the event and the pointers; once, it is written again', async () => {
    install();
    const a = await auditLike(2);
    failWhen = (command, pk) => command === 'PutItem' && pk === `EP#${a.people[1]!.Key}`;
    await expect(putEvent(e.t.db, a.w, true)).rejects.toThrow();
    failWhen = undefined;
    expect(await eventItem(a.w.event.key)).toBeUndefined();
    for (const p of a.people) expect(await pointersOf(p.Key)).toEqual([]);

    const b = await auditLike(3);
    let failures = 0;
    failWhen = (command, pk) => command === 'PutItem' && pk === `EP#${b.people[0]!.Key}` && failures++ === 0;
    expect(await putEvent(e.t.db, b.w, true)).toBe(true);
    expect(failures).toBe(2);
    for (const p of b.people) expect((await pointersOf(p.Key)).map((i) => i.EventKey)).toEqual([b.w.event.key]);
  });

  it('an event write that fails removes the pointers sent beside it', async () => {
    install();
    const { people, w } = await auditLike(4);
    failWhen = (command, pk) => command === 'PutItem' && pk.startsWith('O#');
    await expect(putEvent(e.t.db, w, true)).rejects.toThrow();
    failWhen = undefined;
    for (const p of people) expect(await pointersOf(p.Key)).toEqual([]);
  });
});

describe('retries never store an event twice', () => {
  let seq = 0;
  function record(item: Record<string, unknown>, at: number): DynamoDBRecord {
    return {
      eventID: randomUUID(),
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      eventVersion: '1.1',
      awsRegion: 'local',
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(at / 1000),
        Keys: marshall({ PK: item.PK, SK: item.SK }) as never,
        NewImage: marshall(item, { removeUndefinedValues: true }) as never,
        SequenceNumber: String(++seq).padStart(21, '0'),
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    };
  }

  it('a stream batch delivered again later (another PublishedOn) keeps the first event and its pointers as they were', async () => {
    const p = await e.object('people', 'PersonInfo');
    const rec = record((await eventItem(p.Key))!, Date.now());
    const first = new Date('2026-03-01T00:00:00.000Z');
    const deps = (now: Date): AuditDeps => ({ db: e.t.db, config: e.env.deps.config, now: () => now, logger: e.env.deps.logger });
    expect((await auditEventsFromStream([rec], deps(first))).batchItemFailures).toEqual([]);
    expect((await auditEventsFromStream([rec], deps(new Date('2026-03-01T00:05:00.000Z')))).batchItemFailures).toEqual([]);
    const key = auditEventKey({ at: rec.dynamodb!.ApproximateCreationDateTime! * 1000, eventId: rec.eventID! });
    const pointers = await pointersOf(p.Key);
    expect(pointers.map((i) => i.EventKey)).toEqual([key]);
    expect(pointers[0]!.PublishedOn).toBe(first.toISOString());
    const stored = (await e.api.get(`/api/f/${e.root}/events/${key}`, { token: e.token })).body;
    expect(stored.PublishedOn).toBe(first.toISOString());
    expect(pointers[0]!.ttl).toBe((await eventItem(key))!.ttl);
  });

  it('a retry of the same key relating other objects leaves only the stored event\'s pointers', async () => {
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => e.object('people', 'PersonInfo')));
    const link = (o: any) => ({ $type: 'ObjectLinkItem', Href: o.Href, LinkedObjectKey: o.Key, CommonName: o.CommonName, Relation: 'Person', MetaDataBson: null });
    const base = {
      key: '0123456789abcdef0123aaaa',
      placement: { folder: e.root, path: [e.root], instances: [e.root] },
      appKey: 'dddddddddddddddddddddddd',
      eventTypeKey: 'eeeeeeeeeeeeeeeeeeeeeeee',
      eventTypeMoniker: { Namespace: 'Vendor', Nickname: 'Retry' },
      occurredOn: new Date('2026-02-01T00:00:00.000Z'),
      priority: 1,
      requiresAcknowledgement: false,
      messageLong: null,
      messageShort: 'retry',
      eventDataBsonBase64: null,
      retentionDays: 30,
    };
    const w1 = eventWrite({ ...base, publishedOn: new Date('2026-02-01T00:00:01.000Z'), objectLinks: [link(a), link(b)] });
    const w2 = eventWrite({ ...base, publishedOn: new Date('2026-02-01T00:00:09.000Z'), objectLinks: [link(b), link(c)] });
    expect(await putEvent(e.t.db, w1, true)).toBe(true);
    // The very same write again (an unknown outcome retried): stored once, answered as stored.
    expect(await putEvent(e.t.db, w1, true)).toBe(true);
    expect(await putEvent(e.t.db, w2, true)).toBe(false);
    // A key taken by an event without related objects is refused without `idempotent`.
    const lone = eventWrite({ ...base, key: '0123456789abcdef0123cccc', publishedOn: new Date(), objectLinks: [] });
    expect(await putEvent(e.t.db, lone)).toBe(true);
    await expect(putEvent(e.t.db, { ...lone, summary: { ...lone.summary, PublishedOn: 'later' }, event: { ...lone.event, doc: { ...lone.event.doc, PublishedOn: 'later' } } })).rejects.toBeInstanceOf(ConditionFailed);
    expect((await pointersOf(a.Key)).map((i) => i.EventKey)).toEqual([base.key]);
    expect(await pointersOf(b.Key)).toEqual(pointerItems(w1).filter((i) => i.ObjectKey === b.Key));
    expect(await pointersOf(c.Key)).toEqual([]);
  });
});

describe('lastevent under racing publishes', () => {
  it('keeps the newest OccurredOn whatever the order the writes land in', async () => {
    const app = await e.app();
    const type = await e.eventType(app);
    const p = await e.object('people', 'PersonInfo');
    const at = (iso: string) => e.posting(app.Key, type, { OccurredOn: iso, RelatedObjects: [{ Relation: 'Person', LinkedObjectKey: p.Key }] });
    const last = async () => (await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, body: [p.Key] })).body[0].EventKey;

    const newer = await e.published(at('2026-05-02T00:00:00Z'));
    await e.published(at('2026-05-01T00:00:00Z')); // older, written later
    expect(await last()).toBe(newer.Key);

    for (let round = 0; round < 4; round++) {
      const month = String(6 + round).padStart(2, '0');
      const stamps = ['01', '03', '02'].map((day) => `2026-${month}-${day}T00:00:00Z`);
      const written = await Promise.all((round % 2 ? [...stamps].reverse() : stamps).map((d) => e.published(at(d))));
      const newest = written.reduce((x, y) => (Date.parse(y.OccurredOn) > Date.parse(x.OccurredOn) ? y : x));
      expect(await last()).toBe(newest.Key);
    }
  });
});
