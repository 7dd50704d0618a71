/** One event, its links, lastevent, and acknowledgements. */
import { beforeAll, describe, expect, it } from 'vitest';
import { seedTenant, uniqueName } from '../support/tokens.ts';
import { setupEvents, tag, type Env } from './events-fixture.ts';

let e: Env;
let app: any;
let plain: any;
let alarm: any;

beforeAll(async () => {
  e = await setupEvents();
  app = await e.app();
  plain = await e.eventType(app, { MessageTemplateShort: 'plain' });
  alarm = await e.eventType(app, { RequiresAcknowledgement: true, Priority: 7 });
});

const related = (...objects: any[]) => objects.map((o) => ({ Relation: 'Object', LinkedObjectKey: o.Key, CommonName: o.CommonName }));

describe('one event', () => {
  it('reads an event by its Href, and answers 404 for an unknown key, 403 outside the scope', async () => {
    const ev = await e.published(e.posting(app.Key, plain));
    const got = await e.api.get(ev.Href, { token: e.env.root.tokens.ReadOnly });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(ev);
    expect((await e.api.get(`/api/f/${e.root}/events/0123456789abcdef01234567`, { token: e.token })).status).toBe(404);
    const stranger = await seedTenant(e.t, e.env.deps, { name: uniqueName('Stranger') });
    expect((await e.api.get(ev.Href, { token: stranger.tokens.Administrator })).status).toBe(403);
    expect((await e.api.get(`/api/f/${stranger.instance.key}/events/${ev.Key}`, { token: stranger.tokens.Administrator })).status).toBe(404);
  });

  it('lists its related objects that exist and are in scope as connections', async () => {
    const person = await e.object('people', 'PersonInfo');
    const reader = await e.object('readers', 'VendorReaderInfo');
    const child = await seedTenant(e.t, e.env.deps, { parent: e.env.root.instance });
    const childPerson = await e.object('people', 'PersonInfo', {}, child.instance.key);
    // The root publishes into the child's sink, relating objects of the child and of the root.
    const ev = await e.published(
      e.posting(app.Key, plain, {
        RelatedObjects: [...related(childPerson, person, reader), { Relation: 'Gone', LinkedObjectKey: '0123456789abcdef01234567' }],
      }),
      child.instance.key,
    );
    const r = await e.api.get(`${ev.Href}/connections`, { token: e.token });
    expect(r.status).toBe(200);
    const read = (o: any) => e.api.get(o.Href, { token: e.token }).then((x) => x.body);
    expect(r.body).toEqual([await read(childPerson), await read(person), await read(reader)]);
    // The child sees its own object only: the root's are outside its scope.
    const own = await e.api.get(`${ev.Href}/connections`, { token: child.tokens.ReadOnly });
    expect(own.body).toEqual([await read(childPerson)]);
  });

  it('serves the other standard links of an event; takeownership is 405', async () => {
    const ev = await e.published(e.posting(app.Key, plain, { Metadata: [{ Key: 'k', Values: 'v' }], Monikers: [{ Namespace: 'a', Nickname: 'b' }] }));
    const get = (link: string) => e.api.get(`${ev.Href}/${link}`, { token: e.token });
    expect((await get('meta')).body).toEqual(ev.Metadata);
    expect((await get('monikers')).body).toEqual(ev.Monikers);
    expect((await get('commonname')).body).toBe('');
    for (const l of ['images', 'notes', 'references']) expect((await get(l)).body, l).toEqual([]);
    expect((await get('takeownership')).status).toBe(405);
    expect((await get('other')).status).toBe(404);
    expect((await e.api.get(`/api/f/${e.root}/events/0123456789abcdef01234567/meta`, { token: e.token })).status).toBe(404);
  });
});

describe('lastevent', () => {
  it('answers the most recent event of each key (GET with a body, and POST) as EventMessageSummaryItems', async () => {
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => e.object('people', 'PersonInfo')));
    await e.published(e.posting(app.Key, plain, { OccurredOn: '2024-01-01T00:00:00Z', RelatedObjects: related(a, b) }));
    const newest = await e.published(e.posting(app.Key, alarm, { OccurredOn: '2024-03-01T00:00:00Z', RelatedObjects: related(a) }));
    const older = await e.published(e.posting(app.Key, plain, { OccurredOn: '2024-02-01T00:00:00Z', RelatedObjects: related(a, b) }));

    const viaGet = await e.api.get(`/api/f/${e.root}/lastevent`, { token: e.env.root.tokens.ReadOnly, body: [a.Key, b.Key, c.Key] });
    expect(viaGet.status).toBe(200);
    expect(viaGet.body).toEqual([
      {
        $type: tag('EventMessageSummaryItem'),
        ObjectKey: a.Key,
        EventKey: newest.Key,
        EventTypeKey: alarm.Key,
        AppKey: app.Key,
        OccurredOn: newest.OccurredOn,
        PublishedOn: newest.PublishedOn,
        Priority: 7,
        MessageShort: null,
      },
      {
        $type: tag('EventMessageSummaryItem'),
        ObjectKey: b.Key,
        EventKey: older.Key,
        EventTypeKey: plain.Key,
        AppKey: app.Key,
        OccurredOn: older.OccurredOn,
        PublishedOn: older.PublishedOn,
        Priority: 5,
        MessageShort: 'plain',
      },
    ]);
    const viaPost = await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, body: [a.Key, b.Key, c.Key] });
    expect(viaPost.body).toEqual(viaGet.body);
  });

  it('keeps only events at or after since', async () => {
    const [a, b] = await Promise.all([1, 2].map(() => e.object('people', 'PersonInfo')));
    const ea = await e.published(e.posting(app.Key, plain, { OccurredOn: '2024-06-01T00:00:00Z', RelatedObjects: related(a) }));
    await e.published(e.posting(app.Key, plain, { OccurredOn: '2024-05-01T00:00:00Z', RelatedObjects: related(b) }));
    const r = await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, query: { since: '2024-06-01T00:00:00Z' }, body: [a.Key, b.Key] });
    expect(r.body.map((s: any) => s.EventKey)).toEqual([ea.Key]);
    expect((await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, query: { since: 'later' }, body: [a.Key] })).status).toBe(400);
  });

  it('ignores keys whose events lie outside the caller\'s scope and rejects a body that is not an array', async () => {
    const stranger = await seedTenant(e.t, e.env.deps, { name: uniqueName('Stranger') });
    const p = await e.object('people', 'PersonInfo');
    await e.published(e.posting(app.Key, plain, { RelatedObjects: related(p) }));
    const r = await e.api.post(`/api/f/${stranger.instance.key}/lastevent`, { token: stranger.tokens.Administrator, body: [p.Key, 'junk'] });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
    expect((await e.api.post(`/api/f/${e.root}/lastevent`, { token: stranger.tokens.Administrator, body: [p.Key] })).status).toBe(403);
    expect((await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, body: { keys: [p.Key] } })).status).toBe(400);
  });

  it('costs one Query (Limit 1) per key, in parallel', async () => {
    const people = await Promise.all([1, 2, 3, 4].map(() => e.object('people', 'PersonInfo')));
    await e.published(e.posting(app.Key, plain, { RelatedObjects: related(...people) }));
    const m = await e.measure(() => e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, body: people.map((p) => p.Key) }));
    expect(m.result.body).toHaveLength(4);
    expect(m.commands).toEqual(['Query', 'Query', 'Query', 'Query']);
  });
});

describe('acknowledgements', () => {
  it('acknowledges an event that requires it (201 with the updated event; the server sets who and when)', async () => {
    const ev = await e.published(e.posting(app.Key, alarm));
    const before = Date.now();
    const r = await e.api.post(`${ev.Href}/acknowledgements`, {
      token: e.token,
      body: { $type: tag('AlarmAcknowledgementItem'), Comment: 'On it', AcknowledgedBy: 'someone else', AcknowledgedOn: '2000-01-01T00:00:00Z' },
    });
    expect(r.status).toBe(201);
    expect(r.body.Key).toBe(ev.Key);
    expect(r.body.AlarmAcknowledgements).toHaveLength(1);
    const ack = r.body.AlarmAcknowledgements[0];
    expect(ack).toMatchObject({ $type: tag('AlarmAcknowledgementItem'), Comment: 'On it', AcknowledgedBy: e.env.root.users.Operator.doc.CommonName });
    expect(Date.parse(ack.AcknowledgedOn)).toBeGreaterThanOrEqual(before - 1);
    expect((await e.api.get(ev.Href, { token: e.token })).body).toEqual(r.body);
  });

  it('keeps every one of parallel acknowledgements', async () => {
    const ev = await e.published(e.posting(app.Key, alarm));
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => e.api.post(`${ev.Href}/acknowledgements`, { token: e.token, body: { Comment: `ack ${i}` } })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const stored = (await e.api.get(ev.Href, { token: e.token })).body.AlarmAcknowledgements.map((a: any) => a.Comment).sort();
    expect(stored).toEqual(['ack 1', 'ack 2', 'ack 3', 'ack 4', 'ack 5']);
  });

  it('refuses events that do not require acknowledgement (409), ReadOnly callers (403), bad bodies (400) and unknown events (404)', async () => {
    const ev = await e.published(e.posting(app.Key, plain));
    const no = await e.api.post(`${ev.Href}/acknowledgements`, { token: e.token, body: { Comment: 'x' } });
    expect([no.status, no.body.Error]).toEqual([409, 'AcknowledgementNotRequired']);
    const needs = await e.published(e.posting(app.Key, alarm));
    expect((await e.api.post(`${needs.Href}/acknowledgements`, { token: e.env.root.tokens.ReadOnly, body: { Comment: 'x' } })).status).toBe(403);
    expect((await e.api.post(`${needs.Href}/acknowledgements`, { token: e.token, body: { $type: 'NoteInfo', Comment: 'x' } })).status).toBe(400);
    expect((await e.api.post(`${needs.Href}/acknowledgements`, { token: e.token, body: { Comment: 5 } })).status).toBe(400);
    expect((await e.api.post(`/api/f/${e.root}/events/0123456789abcdef01234567/acknowledgements`, { token: e.token, body: {} })).status).toBe(404);
  });
});
