/**
 * The audit trail: object changes read from the table stream become events of the system app.
 * Records are built from the real items (as Lambda delivers them), and in one test read from
 * DynamoDB Local's own stream.
 */
import { randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { deserialize } from 'bson';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '#shared/db/client.ts';
import { getItem } from '#shared/db/objects-repo.ts';
import { createStreamReader } from '#shared/db/stream-reader.ts';
import { SYSTEM_APP_KEY, auditEventsFromStream } from '#shared/events/audit.ts';
import type { AuditDeps } from '#shared/events/audit-event.ts';
import { SYSTEM_EVENT_TYPES, auditEventKey } from '#shared/events/audit-event.ts';
import { seedTenant } from '../support/tokens.ts';
import { setupEvents, tag, type Env } from './events-fixture.ts';

let e: Env;
let deps: AuditDeps;
let seq = 0;

beforeAll(async () => {
  e = await setupEvents();
  deps = { db: e.t.db, config: e.env.deps.config, now: () => new Date(), logger: e.env.deps.logger };
});

/** The raw object item of a key. */
const itemOf = async (key: string) => (await getItem(e.t.db, `O#${key}`, 'A', true))!;

/** A stream record as Lambda delivers it (epoch-seconds time, marshalled images). */
function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', images: { old?: Record<string, unknown>; new?: Record<string, unknown> }, at = Date.now()): DynamoDBRecord {
  const image = images.new ?? images.old!;
  return {
    eventID: randomUUID(),
    eventName,
    eventSource: 'aws:dynamodb',
    eventVersion: '1.1',
    awsRegion: 'local',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(at / 1000),
      Keys: marshall({ PK: image.PK, SK: image.SK }) as never,
      ...(images.new ? { NewImage: marshall(images.new, { removeUndefinedValues: true }) as never } : {}),
      ...(images.old ? { OldImage: marshall(images.old, { removeUndefinedValues: true }) as never } : {}),
      SequenceNumber: String(++seq).padStart(21, '0'),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

const eventsOf = async (folder: string, objectKey: string) =>
  (await e.api.get(`/api/f/${folder}/events`, { token: e.token, query: { forKeys: objectKey } })).body as any[];

describe('audit events of object changes', () => {
  it('records a create, an update and a delete as events of the system app, related to the object', async () => {
    const p = await e.object('people', 'PersonInfo', { CommonName: 'Audited Person' });
    const created = await itemOf(p.Key);
    expect((await e.api.put(p.Href, { token: e.token, body: { ...p, GivenName: 'Changed' } })).status).toBe(200);
    const updated = await itemOf(p.Key);
    expect((await e.api.del(p.Href, { token: e.token })).status).toBe(204);
    const t0 = Date.UTC(2025, 0, 1, 12, 0, 0);
    const records = [
      record('INSERT', { new: created }, t0),
      record('MODIFY', { old: created, new: updated }, t0 + 1000),
      record('REMOVE', { old: updated }, t0 + 2000),
    ];

    const out = await auditEventsFromStream(records, deps);

    expect(out.batchItemFailures).toEqual([]);
    const events = await eventsOf(e.root, p.Key);
    expect(events.map((x) => x.EventTypeKey)).toEqual([SYSTEM_EVENT_TYPES.deleted.Key, SYSTEM_EVENT_TYPES.updated.Key, SYSTEM_EVENT_TYPES.created.Key]);
    const [deleted, changed, made] = events;
    expect(made).toMatchObject({
      $type: tag('EventMessageData'),
      AppKey: SYSTEM_APP_KEY,
      InFolderKey: e.root,
      OccurredOn: new Date(t0).toISOString(),
      Priority: 0,
      RequiresAcknowledgement: false,
      MessageShort: 'PersonInfo Audited Person created',
      MessageLong: `PersonInfo "Audited Person" (${p.Key}) was created in folder ${e.root}.`,
      ObjectLinks: [{ $type: tag('ObjectLinkItem'), Href: p.Href, LinkedObjectKey: p.Key, CommonName: 'Audited Person', Relation: 'Object', MetaDataBson: null }],
    });
    expect(made.Key).toBe(auditEventKey({ at: t0, eventId: records[0]!.eventID! }));
    expect(deserialize(Buffer.from(made.EventDataBsonBase64, 'base64'))).toMatchObject({ Change: 'ObjectCreated', ObjectKey: p.Key, Collection: 'people', Type: 'PersonInfo', ConcurrencyVersion: 1 });
    expect(changed.MessageLong).toBe(`PersonInfo "Audited Person" (${p.Key}) was updated to version 2.`);
    expect(deleted.MessageShort).toBe('PersonInfo Audited Person deleted');
    const last = await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, body: [p.Key] });
    expect(last.body[0].EventKey).toBe(deleted.Key);
  });

  it('writes nothing twice when a batch is delivered again', async () => {
    const p = await e.object('people', 'PersonInfo');
    const records = [record('INSERT', { new: await itemOf(p.Key) })];
    await auditEventsFromStream(records, deps);
    const again = await auditEventsFromStream(records, deps);
    expect(again.batchItemFailures).toEqual([]);
    expect(await eventsOf(e.root, p.Key)).toHaveLength(1);
  });

  it('places the event in the changed object\'s folder: a sub-folder, the parent of an instance, the folder of an event type\'s app', async () => {
    const folder = await e.object('folders', 'FolderInfo');
    const inFolder = await e.object('people', 'PersonInfo', {}, folder.Key);
    const child = await seedTenant(e.t, e.env.deps, { parent: e.env.root.instance });
    const app = await e.app();
    const type = await e.eventType(app);
    await auditEventsFromStream(
      [
        record('INSERT', { new: await itemOf(inFolder.Key) }),
        record('INSERT', { new: await itemOf(child.instance.key) }),
        record('INSERT', { new: await itemOf(type.Key) }),
      ],
      deps,
    );
    expect((await eventsOf(folder.Key, inFolder.Key)).map((x) => x.InFolderKey)).toEqual([folder.Key]);
    const instanceEvents = await eventsOf(e.root, child.instance.key);
    expect(instanceEvents.map((x) => x.ObjectLinks[0].Href)).toEqual([`/api/f/${child.instance.key}`]);
    const typeEvents = await eventsOf(e.root, type.Key);
    expect(typeEvents.map((x) => x.ObjectLinks[0].Href)).toEqual([type.Href]);
  });

  it('ignores events, claims, pointers and unchanged modifications', async () => {
    const app = await e.app();
    const type = await e.eventType(app);
    const p = await e.object('people', 'PersonInfo');
    const ev = await e.published(e.posting(app.Key, type, { RelatedObjects: [{ Relation: 'Person', LinkedObjectKey: p.Key }] }));
    const eventItem = await itemOf(ev.Key);
    const pointer = (await getItem(e.t.db, `EP#${p.Key}`, `${ev.OccurredOn}#${ev.Key}`))!;
    const claim = { PK: 'U#x#card#1', SK: 'U', Owner: p.Key };
    const person = await itemOf(p.Key);
    const before = await eventsOf(e.root, p.Key);

    const out = await auditEventsFromStream(
      [record('INSERT', { new: eventItem }), record('INSERT', { new: pointer }), record('INSERT', { new: claim }), record('MODIFY', { old: person, new: { ...person } })],
      deps,
    );

    expect(out.batchItemFailures).toEqual([]);
    expect(await eventsOf(e.root, p.Key)).toEqual(before);
  });

  it('audits the changes read from the table\'s own stream', async () => {
    const reader = createStreamReader(e.t.config);
    const p = await e.object('people', 'PersonInfo', { CommonName: 'From the stream' });
    const arn = (await reader.latestStreamArn())!;
    const records: DynamoDBRecord[] = [];
    for (const shard of await reader.shards(arn)) {
      let it = await reader.iterator(arn, shard.shardId, { type: 'TRIM_HORIZON' });
      for (let i = 0; it && i < 50; i++) {
        const page = await reader.records(it, 1000);
        records.push(...page.records);
        if (page.records.length === 0) break;
        it = page.next;
      }
    }
    reader.destroy();
    expect(records.length).toBeGreaterThan(0);

    const out = await auditEventsFromStream(records, deps);

    expect(out.batchItemFailures).toEqual([]);
    const events = await eventsOf(e.root, p.Key);
    expect(events.map((x) => x.MessageShort)).toEqual(['PersonInfo From the stream created']);
  });

  it('removes a deleted alarm definition\'s links and a deleted app\'s event types', async () => {
    const app = await e.app();
    const type = await e.eventType(app, { Monikers: [{ Namespace: 'C', Nickname: 'Cascade' }] });
    const alarm = await e.object('alarmdefinitions', 'AlarmDefinitionInfo');
    await e.api.put(`${alarm.Href}/collections/eventtypes`, { token: e.token, body: JSON.stringify(type.Href) });
    const alarmItem = await itemOf(alarm.Key);
    expect((await e.api.del(alarm.Href, { token: e.token })).status).toBe(204);
    await auditEventsFromStream([record('REMOVE', { old: alarmItem })], deps);
    expect(await getItem(e.t.db, `O#${type.Key}`, `ALARM#${alarm.Key}`)).toBeUndefined();

    const appItem = await itemOf(app.Key);
    expect((await e.api.del(app.Href, { token: e.token })).status).toBe(204);
    await auditEventsFromStream([record('REMOVE', { old: appItem })], deps);
    expect(await getItem(e.t.db, `O#${type.Key}`, 'A')).toBeUndefined();
    expect(await getItem(e.t.db, `U#${app.Key}#moniker#C\u0000Cascade`, 'U')).toBeUndefined();
  });

  it('reports the records it could not write, for the event source mapping to retry', async () => {
    const p = await e.object('people', 'PersonInfo');
    const broken: AuditDeps = { ...deps, db: createDb({ ...e.t.config, tableName: 'no-such-table' }) };
    const records = [record('INSERT', { new: await itemOf(p.Key) })];
    const out = await auditEventsFromStream(records, broken);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: records[0]!.dynamodb!.SequenceNumber }]);
  });
});
