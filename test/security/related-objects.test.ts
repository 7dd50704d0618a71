/**
 * Issue #34, finding 5 (and finding 9's oversized publish): one tenant's postings against
 * another's objects. Two sibling child instances A and B of the root, as the isolation matrix
 * builds them. A may not relate B's objects (403, nothing written); B's `lastevent` answers B's
 * newest event whatever was published outside B's scope (pointers stored before the rule
 * included); an `OccurredOn` more than a day ahead is 400; a publish whose event would not fit
 * in one item is a 400 like an oversized object, with nothing written.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { putEvent } from '#shared/db/events-repo.ts';
import { queryFolderEvents, queryPointers } from '#shared/db/event-reads.ts';
import { eventWrite } from '#shared/events/publish.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';
import { seedTenant, type Tenant } from '../support/tokens.ts';
import { bson, setupEvents, type Env } from '../integration/events-fixture.ts';

let e: Env;
let A: Tenant;
let B: Tenant;
let app: any;
let type: any;

beforeAll(async () => {
  e = await setupEvents();
  A = await seedTenant(e.t, e.env.deps, { parent: e.env.root.instance });
  B = await seedTenant(e.t, e.env.deps, { parent: e.env.root.instance });
  // The root's app: every instance below the root may publish with it.
  app = await e.app();
  type = await e.eventType(app);
}, 120_000);

const DAY_MS = 86_400_000;
const person = (tenant: Tenant) => e.object('people', 'PersonInfo', {}, tenant.instance.key);
const relating = (...objects: any[]) => objects.map((o) => ({ Relation: 'Person', LinkedObjectKey: o.Key, CommonName: o.CommonName }));
const publishAs = (tenant: Tenant, fields: Record<string, unknown>) => e.publish(e.posting(app.Key, type, fields), tenant.instance.key, tenant.tokens.Operator);
const lastEvent = (tenant: Tenant, keys: string[]) => e.api.post(`/api/f/${tenant.instance.key}/lastevent`, { token: tenant.tokens.ReadOnly, body: keys });

/** What is stored for a folder and an object: the folder's timeline and the object's pointers. */
async function stored(folder: string, objectKey: string) {
  const [events, pointers] = await Promise.all([queryFolderEvents(e.t.db, folder, {}, 1000), queryPointers(e.t.db, objectKey, {}, 1000)]);
  return { events: events.items.map((x) => x.key).sort(), pointers: pointers.items.map((p) => p.EventKey).sort() };
}

describe('related objects are scoped to the publisher', () => {
  it('refuses a posting of A that relates B\'s object, by key or by Href (403, nothing written)', async () => {
    const [mine, theirs] = await Promise.all([person(A), person(B)]);
    const before = await stored(A.instance.key, theirs.Key);
    const byKey = await publishAs(A, { RelatedObjects: relating(mine, theirs) });
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(403);
    expect(byKey.body).toEqual({ Error: 'Forbidden', Message: expect.stringContaining('RelatedObjects[1]') });
    const byHref = await publishAs(A, { RelatedObjects: [{ Relation: 'Person', Href: theirs.Href }] });
    expect(byHref.status).toBe(403);
    const upper = await publishAs(A, { RelatedObjects: [{ Relation: 'Person', LinkedObjectKey: theirs.Key.toUpperCase() }] });
    expect(upper.status).toBe(403);
    expect(await stored(A.instance.key, theirs.Key)).toEqual(before);
    expect((await queryPointers(e.t.db, mine.Key, {}, 10)).items).toEqual([]);
  });

  it('still lets A relate its own objects, and the parent relate both children\'s', async () => {
    const [mine, theirs] = await Promise.all([person(A), person(B)]);
    expect((await publishAs(A, { RelatedObjects: relating(mine) })).status).toBe(201);
    const byParent = await e.publish(e.posting(app.Key, type, { RelatedObjects: relating(mine, theirs) }));
    expect(byParent.status).toBe(201);
    expect(byParent.body.ObjectLinks.map((l: any) => l.Href)).toEqual([mine.Href, theirs.Href]);
  });

  it('keeps the link of a key that names no object, as sent, but writes no pointer under it', async () => {
    // Keys are time-ordered: a key free now may be another tenant's object's later.
    const unknown = newKey();
    const r = await publishAs(A, { RelatedObjects: [{ Relation: 'Elsewhere', LinkedObjectKey: unknown, Href: '/as/sent' }] });
    expect(r.status).toBe(201);
    expect(r.body.ObjectLinks).toEqual([expect.objectContaining({ LinkedObjectKey: unknown, Href: '/as/sent' })]);
    expect((await queryPointers(e.t.db, unknown, {}, 10)).items).toEqual([]);
  });
});

describe('lastevent answers the newest event of the caller\'s scope', () => {
  it('is not hidden by pointers of A stored before postings were scoped, even dated 2099', async () => {
    const theirs = await person(B);
    const first = await publishAs(B, { RelatedObjects: relating(theirs) });
    expect(first.status).toBe(201);
    // What A's posting wrote before the rule: A's events with a pointer under B's key.
    for (let i = 0; i < 5; i++) {
      const w = eventWrite({
        key: newKey(),
        placement: placeIn(A.instance),
        appKey: app.Key,
        eventTypeKey: type.Key,
        eventTypeMoniker: type.Monikers[0],
        occurredOn: new Date(`2099-12-31T23:59:5${i}Z`),
        publishedOn: new Date(),
        priority: 0,
        requiresAcknowledgement: false,
        messageLong: null,
        messageShort: 'A was here',
        objectLinks: [{ $type: 'ObjectLinkItem', LinkedObjectKey: theirs.Key, Relation: 'Person' }],
        eventDataBsonBase64: null,
        retentionDays: 365,
      });
      await putEvent(e.t.db, w);
    }
    const r = await lastEvent(B, [theirs.Key]);
    expect(r.status).toBe(200);
    expect(r.body.map((s: any) => s.EventKey)).toEqual([first.body.Key]);

    const again = await publishAs(B, { RelatedObjects: relating(theirs) });
    expect((await lastEvent(B, [theirs.Key])).body.map((s: any) => s.EventKey)).toEqual([again.body.Key]);
    // A sees its own events only, never B's.
    expect((await lastEvent(A, [theirs.Key])).body.map((s: any) => s.MessageShort)).toEqual(['A was here']);
  });

  it('is not hidden by a later event an instance above published outside the caller\'s scope; two Queries at most', async () => {
    const theirs = await person(B);
    const own = await publishAs(B, { RelatedObjects: relating(theirs) });
    expect(own.status).toBe(201);
    // The root's own sink: its events are outside B's scope.
    const above = await e.published(e.posting(app.Key, type, { OccurredOn: new Date(Date.now() + DAY_MS / 2).toISOString(), RelatedObjects: relating(theirs) }));
    const m = await e.measure(() => lastEvent(B, [theirs.Key]));
    expect(m.result.body.map((s: any) => s.EventKey)).toEqual([own.body.Key]);
    expect(m.commands).toEqual(['Query', 'Query']);
    // The root's scope holds both: its own newest one.
    const r = await e.api.post(`/api/f/${e.root}/lastevent`, { token: e.token, body: [theirs.Key] });
    expect(r.body.map((s: any) => s.EventKey)).toEqual([above.Key]);
  });
});

describe('OccurredOn at most a day ahead', () => {
  it('refuses an OccurredOn more than a day after the server\'s time (400), accepts one just within', async () => {
    const mine = await person(A);
    const before = await stored(A.instance.key, mine.Key);
    for (const OccurredOn of ['2099-12-31T23:59:59Z', new Date(Date.now() + DAY_MS + 60_000).toISOString()]) {
      const r = await publishAs(A, { OccurredOn, RelatedObjects: relating(mine) });
      expect([r.status, r.body], OccurredOn).toEqual([400, { Error: 'ValidationFailed', Message: expect.stringContaining('OccurredOn') }]);
    }
    expect(await stored(A.instance.key, mine.Key)).toEqual(before);
    const within = await publishAs(A, { OccurredOn: new Date(Date.now() + DAY_MS - 60_000).toISOString(), RelatedObjects: relating(mine) });
    expect(within.status).toBe(201);
  });
});

describe('an event too large for one item', () => {
  const expectRefused = async (fields: Record<string, unknown>, body: Record<string, unknown> = e.posting(app.Key, type, fields)) => {
    const mine = await person(A);
    const before = await stored(A.instance.key, mine.Key);
    const posting = { ...body, RelatedObjects: relating(mine) };
    expect(Buffer.byteLength(JSON.stringify(posting))).toBeLessThan(e.env.deps.config.maxBodyBytes);
    const r = await e.publish(posting, A.instance.key, A.tokens.Operator);
    expect([r.status, r.body]).toEqual([400, { Error: 'ValidationFailed', Message: expect.stringContaining('too large') }]);
    expect(await stored(A.instance.key, mine.Key)).toEqual(before);
  };

  it('refuses event data and Metadata that together pass what one item holds (400 ValidationFailed, as an object), nothing written', async () => {
    // Each within its own limit (event data, a Metadata value): together past the item's.
    const Metadata = [1, 2, 3].map((i) => ({ Key: `k${i}`, Values: 'm'.repeat(60_000) }));
    await expectRefused({ EventDataBsonBase64: bson({ Blob: 'x'.repeat(250_000) }), Metadata });
  });

  it('refuses a MessageLong whose filled template passes it, nothing written', async () => {
    const big = await e.eventType(app, { MessageTemplateLong: '{Chunk}'.repeat(8) });
    await expectRefused({}, e.posting(app.Key, big, { EventDataBsonBase64: bson({ Chunk: 'y'.repeat(60_000) }) }));
  });
});
