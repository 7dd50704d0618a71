/** Publishing to the event message sink: the stored event, app and type resolution, templates, bad postings, cost. */
import { beforeAll, describe, expect, it } from 'vitest';
import { getItem } from '#shared/db/objects-repo.ts';
import { clearResolveCaches } from '#shared/events/resolve.ts';
import { seedTenant, uniqueName } from '../support/tokens.ts';
import { bson, setupEvents, tag, type Env } from './events-fixture.ts';

let e: Env;

beforeAll(async () => {
  e = await setupEvents();
});

const EVENT_FIELDS = [
  '$type',
  'AlarmAcknowledgements',
  'AppKey',
  'ClientDeviceId',
  'EventDataBsonBase64',
  'EventTypeKey',
  'EventTypeMoniker',
  'Href',
  'InFolderKey',
  'Key',
  'Links',
  'MessageLong',
  'MessageShort',
  'Metadata',
  'Monikers',
  'ObjectLinks',
  'OccurredOn',
  'Priority',
  'PublishedOn',
  'RelatedObjects',
  'RequiresAcknowledgement',
  'Tags',
];

describe('publishing', () => {
  it('stores an EventMessageData with every spec field, taking Priority and acknowledgement from the type (201)', async () => {
    const app = await e.app();
    const type = await e.eventType(app, { Priority: 9, RequiresAcknowledgement: true });
    const person = await e.object('people', 'PersonInfo');
    const reader = await e.object('readers', 'VendorReaderInfo');
    const data = bson({ Card: 1234 });
    const before = Date.now();

    const r = await e.publish(
      e.posting(app.Key, type, {
        OccurredOn: '2024-05-01T14:30:00+02:00',
        EventDataBsonBase64: data,
        RelatedObjects: [
          { Relation: 'Person', LinkedObjectKey: person.Key, CommonName: 'As sent', Href: null },
          { $type: 'ObjectLinkItem', Relation: 'Reader', LinkedObjectKey: reader.Key, CommonName: 'Front', Href: `/api/f/${e.root}/peripherals/${reader.Key}` },
          { Relation: 'Elsewhere', LinkedObjectKey: '0123456789abcdef01234567', CommonName: 'Unknown', Href: '/as/sent' },
        ],
      }),
    );

    expect(r.status).toBe(201);
    const ev = r.body;
    expect(Object.keys(ev).sort()).toEqual([...EVENT_FIELDS].sort());
    expect(ev).toMatchObject({
      $type: tag('EventMessageData'),
      AlarmAcknowledgements: [],
      AppKey: app.Key,
      EventTypeKey: type.Key,
      EventDataBsonBase64: data,
      InFolderKey: e.root,
      OccurredOn: '2024-05-01T12:30:00.000Z',
      Priority: 9,
      RequiresAcknowledgement: true,
      Metadata: [],
      Monikers: [],
      Tags: [],
      ClientDeviceId: null,
    });
    expect(ev.Key).toMatch(/^[0-9a-f]{24}$/);
    expect(ev.Href).toBe(`/api/f/${e.root}/events/${ev.Key}`);
    expect(Date.parse(ev.PublishedOn)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(ev.PublishedOn)).toBeLessThanOrEqual(Date.now());
    expect(ev.Links.map((l: any) => l.Anchor.Href)).toEqual(['meta', 'monikers', 'commonname', 'images', 'takeownership', 'connections', 'references', 'notes']);
    expect(ev.ObjectLinks).toEqual([
      { $type: tag('ObjectLinkItem'), Href: person.Href, LinkedObjectKey: person.Key, CommonName: 'As sent', Relation: 'Person', MetaDataBson: null },
      { $type: tag('ObjectLinkItem'), Href: reader.Href, LinkedObjectKey: reader.Key, CommonName: 'Front', Relation: 'Reader', MetaDataBson: null },
      { $type: tag('ObjectLinkItem'), Href: '/as/sent', LinkedObjectKey: '0123456789abcdef01234567', CommonName: 'Unknown', Relation: 'Elsewhere', MetaDataBson: null },
    ]);
    // The posting's names come back: its moniker, and its related objects as stored.
    expect(ev.EventTypeMoniker).toEqual({ $type: tag('MonikerItem'), Namespace: type.Monikers[0].Namespace, Nickname: type.Monikers[0].Nickname });
    expect(ev.RelatedObjects).toEqual(ev.ObjectLinks);
    expect((await e.api.get(ev.Href, { token: e.token })).body).toEqual(ev);
  });

  it('keeps the optional EventMessageData fields a posting carries (ClientDeviceId, Metadata, Monikers, Tags)', async () => {
    const app = await e.app();
    const type = await e.eventType(app);
    const ev = await e.published(
      e.posting(app.Key, type, { ClientDeviceId: 'dev-1', Tags: ['a'], Metadata: [{ Key: 'k', Values: '1' }], Monikers: [{ Namespace: 'n', Nickname: 'm' }], Other: 'dropped' }),
    );
    expect(ev).toMatchObject({ ClientDeviceId: 'dev-1', Tags: ['a'] });
    expect(ev.Metadata).toEqual([{ $type: tag('MetadataItem'), Key: 'k', Values: '1' }]);
    expect(ev.Monikers).toEqual([{ $type: tag('MonikerItem'), Namespace: 'n', Nickname: 'm' }]);
    expect(ev.Other).toBeUndefined();
  });

  it('stores the event with a TTL of PublishedOn + GATEHOUSE_EVENT_RETENTION_DAYS, its pointers too', async () => {
    const app = await e.app();
    const type = await e.eventType(app);
    const person = await e.object('people', 'PersonInfo');
    const ev = await e.published(e.posting(app.Key, type, { RelatedObjects: [{ Relation: 'Person', LinkedObjectKey: person.Key }] }));
    const expected = Math.floor(Date.parse(ev.PublishedOn) / 1000) + e.env.deps.config.eventRetentionDays * 86_400;
    expect(e.env.deps.config.eventRetentionDays).toBe(365);
    expect((await getItem(e.t.db, `O#${ev.Key}`, 'A'))?.ttl).toBe(expected);
    expect((await getItem(e.t.db, `EP#${person.Key}`, `${ev.OccurredOn}#${ev.Key}`))?.ttl).toBe(expected);
  });

  it('names the app by key or by moniker nickname, nearest instance first, ancestors included', async () => {
    const child = await seedTenant(e.t, e.env.deps, { parent: e.env.root.instance });
    const c = child.instance.key;
    const shared = uniqueName('Shared');
    const rootApp = await e.app(e.root, [shared, uniqueName('RootOnly')]);
    const childApp = await e.app(c, [shared]);
    const rootType = await e.eventType(rootApp, { Monikers: [{ Namespace: 'V', Nickname: 'T' }] });
    const childType = await e.eventType(childApp, { Monikers: [{ Namespace: 'V', Nickname: 'T' }] });

    const inChild = await e.published(e.posting(shared, childType), c, child.tokens.Operator);
    expect([inChild.AppKey, inChild.EventTypeKey, inChild.InFolderKey]).toEqual([childApp.Key, childType.Key, c]);
    const fromAncestor = await e.published(e.posting(rootApp.Monikers[1].Nickname, rootType), c, child.tokens.Operator);
    expect(fromAncestor.AppKey).toBe(rootApp.Key);
    const byKey = await e.published(e.posting(rootApp.Key.toUpperCase(), rootType), c, child.tokens.Operator);
    expect(byKey.AppKey).toBe(rootApp.Key);
    const atRoot = await e.published(e.posting(shared, rootType));
    expect(atRoot.AppKey).toBe(rootApp.Key);

    // A child instance's app is not visible from its parent.
    const down = await e.publish(e.posting(childApp.Key, childType));
    expect([down.status, down.body.Error]).toEqual([404, 'AppNotFound']);
  });

  it("finds no app by the key of another tenant's app or of an object that is not an app (404), cached or not", async () => {
    const stranger = await seedTenant(e.t, e.env.deps, { name: uniqueName('Stranger') });
    const theirApp = await e.app(stranger.instance.key, [uniqueName('Theirs')], stranger.tokens.Administrator);
    const theirType = await e.eventType(theirApp, {}, stranger.tokens.Administrator);
    // Their own publish caches the app by key in this environment; it must not count here.
    expect((await e.publish(e.posting(theirApp.Key, theirType), stranger.instance.key, stranger.tokens.Operator)).status).toBe(201);
    const mine = await e.eventType(await e.app());
    const person = await e.object('people', 'PersonInfo');
    for (const appKey of [theirApp.Key, person.Key]) {
      for (const cold of [true, false]) {
        if (cold) clearResolveCaches();
        const r = await e.publish(e.posting(appKey, mine));
        expect([appKey === person.Key ? 'person' : 'their app', cold, r.status, r.body.Error]).toEqual([appKey === person.Key ? 'person' : 'their app', cold, 404, 'AppNotFound']);
      }
    }
  });

  it("follows an app's writes at once in the environment that made them: a removed nickname or a deleted app is 404 AppNotFound", async () => {
    const [before, after] = [uniqueName('Before'), uniqueName('After')];
    const app = await e.app(e.root, [before]);
    const type = await e.eventType(app);
    // Warm publishes cache the app by nickname (the instance's app list) and by key.
    expect((await e.published(e.posting(before, type))).AppKey).toBe(app.Key);
    expect((await e.published(e.posting(app.Key, type))).AppKey).toBe(app.Key);

    const renamed = await e.api.put(app.Href, { token: e.token, body: { ...app, Monikers: [{ Namespace: 'Vendor', Nickname: after }] } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    const gone = await e.publish(e.posting(before, type));
    expect([gone.status, gone.body.Error]).toEqual([404, 'AppNotFound']);
    expect((await e.published(e.posting(after, type))).AppKey).toBe(app.Key);

    const removed = await e.api.del(app.Href, { token: e.token });
    expect(removed.status, JSON.stringify(removed.body)).toBe(204);
    for (const name of [after, app.Key]) {
      const r = await e.publish(e.posting(name, type));
      expect([name, r.status, r.body.Error]).toEqual([name, 404, 'AppNotFound']);
    }
  });

  it('finds the event type by a Nickname alone when the posting leaves the Namespace out', async () => {
    const app = await e.app();
    const type = await e.eventType(app, { Monikers: [{ Namespace: 'Some.Namespace', Nickname: 'OnlyOne' }] });
    const ev = await e.published(e.posting(app.Key, type, { EventTypeMoniker: { Nickname: 'OnlyOne' } }));
    expect(ev.EventTypeKey).toBe(type.Key);
  });

  it('fills the message templates from the event data (dotted paths) and the related objects\' CommonNames', async () => {
    const app = await e.app();
    const type = await e.eventType(app, {
      MessageTemplateLong: '{Person} used card {Card.Number} at {Reader} ({When}) {Missing} {Reader.Name}',
      MessageTemplateShort: 'Card {Card.Number}: {Person}',
    });
    const ev = await e.published(
      e.posting(app.Key, type, {
        EventDataBsonBase64: bson({ Card: { Number: 42 }, When: new Date('2024-01-02T03:04:05Z'), Person: 'From data' }),
        RelatedObjects: [
          { Relation: 'Reader', LinkedObjectKey: '0123456789abcdef01234567', CommonName: 'Front door' },
          { Relation: 'Person', LinkedObjectKey: '0123456789abcdef01234568', CommonName: 'Related person' },
        ],
      }),
    );
    expect(ev.MessageLong).toBe('From data used card 42 at Front door (2024-01-02T03:04:05.000Z) {Missing} {Reader.Name}');
    expect(ev.MessageShort).toBe('Card 42: From data');
    const none = await e.published(e.posting(app.Key, await e.eventType(app)));
    expect([none.MessageLong, none.MessageShort]).toEqual([null, null]);
  });

  it('delivers a NonLogging type\'s events live only: 202 with the event, never stored nor listed', async () => {
    const app = await e.app();
    const type = await e.eventType(app, { NonLogging: true, MessageTemplateShort: 'live' });
    const person = await e.object('people', 'PersonInfo');
    const r = await e.publish(e.posting(app.Key, type, { RelatedObjects: [{ Relation: 'Person', LinkedObjectKey: person.Key }] }));
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ $type: tag('EventMessageData'), EventTypeKey: type.Key, MessageShort: 'live' });
    const live = await getItem(e.t.db, `LIVE#${r.body.Key}`, 'A');
    expect(live).toMatchObject({ Key: r.body.Key, Coll: 'events', Instances: [e.root] });
    expect(JSON.parse(live!.Doc as string).EventTypeKey).toBe(type.Key);
    expect((await e.api.get(r.body.Href, { token: e.token })).status).toBe(404);
    const listed = await e.api.get(`/api/f/${e.root}/events`, { token: e.token, query: { forKeys: person.Key } });
    expect(listed.body).toEqual([]);
    const last = await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, body: [person.Key] });
    expect(last.body).toEqual([]);
  });
});

describe('bad postings', () => {
  let app: any;
  let type: any;
  beforeAll(async () => {
    app = await e.app();
    type = await e.eventType(app);
  });

  const expectError = async (body: unknown, status: number, code: string) => {
    const r = await e.publish(body);
    expect([r.status, r.body?.Error], JSON.stringify(r.body)).toEqual([status, code]);
  };

  it('rejects an unknown app (404 AppNotFound) and an unknown event type (404 EventTypeNotFound)', async () => {
    await expectError(e.posting('NoSuchApp', type), 404, 'AppNotFound');
    await expectError(e.posting('0123456789abcdef01234567', type), 404, 'AppNotFound');
    await expectError(e.posting(app.Key, type, { EventTypeMoniker: { Namespace: 'Vendor', Nickname: 'Nope' } }), 404, 'EventTypeNotFound');
    await expectError(e.posting(app.Key, type, { EventTypeMoniker: { Namespace: 'Other', Nickname: type.Monikers[0].Nickname } }), 404, 'EventTypeNotFound');
  });

  it('rejects an OccurredOn that is not ISO 8601 with a zone (400)', async () => {
    for (const OccurredOn of ['2024-05-01T10:00:00', 'yesterday', '2024-13-45T10:00:00Z', 12345, null]) {
      const r = await e.publish(e.posting(app.Key, type, { OccurredOn }));
      expect(r.status, String(OccurredOn)).toBe(400);
    }
  });

  it('rejects EventDataBsonBase64 that is not base64 of a BSON document (400 InvalidEventData)', async () => {
    await expectError(e.posting(app.Key, type, { EventDataBsonBase64: 'not base64!' }), 400, 'InvalidEventData');
    await expectError(e.posting(app.Key, type, { EventDataBsonBase64: Buffer.from('hello world, not bson').toString('base64') }), 400, 'InvalidEventData');
  });

  it('reads a posting without $type as an EventMessagePosting, and rejects another type (400 WrongType)', async () => {
    const { $type: _t, ...untyped } = e.posting(app.Key, type);
    const res = await e.publish(untyped);
    expect(res.status).toBe(201);
    expect(res.body.EventTypeKey).toBe(type.Key);
    await expectError({ ...untyped, $type: 'PersonInfo' }, 400, 'WrongType');
    await expectError(e.posting(app.Key, type, { RelatedObjects: 'x' }), 400, 'ValidationFailed');
  });

  it('refuses ReadOnly publishers and sinks outside the caller\'s scope (403)', async () => {
    expect((await e.publish(e.posting(app.Key, type), e.root, e.env.root.tokens.ReadOnly)).status).toBe(403);
    const stranger = await seedTenant(e.t, e.env.deps, { name: uniqueName('Stranger') });
    expect((await e.publish(e.posting(app.Key, type), e.root, stranger.tokens.Administrator)).status).toBe(403);
    expect((await e.api.post(`/api/f/${e.root}/eventmessagesink`, { body: e.posting(app.Key, type) })).status).toBe(401);
  });
});

describe('publishing cost', () => {
  it('a warm publish is exactly one DynamoDB request: the BatchWriteItem of the event and its pointers', async () => {
    const app = await e.app();
    const type = await e.eventType(app);
    const people = await Promise.all([1, 2, 3].map(() => e.object('people', 'PersonInfo')));
    const body = e.posting(app.Monikers[0].Nickname, type, {
      RelatedObjects: people.map((p) => ({ Relation: 'Person', LinkedObjectKey: p.Key, CommonName: p.CommonName })),
    });
    const cold = await e.measure(() => e.publish(body));
    expect(cold.result.status).toBe(201);
    expect(cold.commands.length).toBeLessThanOrEqual(6);

    const warm = await e.measure(() => e.publish(body));
    expect(warm.result.status).toBe(201);
    expect(warm.commands).toEqual(['BatchWriteItem']);

    // The event and one pointer per related object were written.
    const last = await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, body: people.map((p) => p.Key) });
    expect(last.body.map((s: any) => s.EventKey)).toEqual(people.map(() => warm.result.body.Key));

    // Cold (nothing resolved in this environment yet): what is read by key goes out as one
    // BatchGetItem (the sink and the related objects; by app key, the app and the moniker's
    // claim too), then only the reads that need an answer.
    clearResolveCaches();
    const byNickname = await e.measure(() => e.publish(body));
    expect(byNickname.result.status).toBe(201);
    expect(byNickname.commands).toEqual(['BatchGetItem', 'Query', 'GetItem', 'Query', 'BatchWriteItem']);
    clearResolveCaches();
    const byKey = await e.measure(() => e.publish({ ...body, AppKey: app.Key }));
    expect(byKey.result.status).toBe(201);
    expect(byKey.commands).toEqual(['BatchGetItem', 'Query', 'BatchWriteItem']);
    expect([byKey.result.body.AppKey, byKey.result.body.EventTypeKey]).toEqual([app.Key, type.Key]);
    expect(byKey.result.body.ObjectLinks.map((l: any) => l.Href)).toEqual(people.map((p) => p.Href));
  });
});
