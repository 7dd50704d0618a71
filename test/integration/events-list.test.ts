/** The events list: order, paging, every query parameter, scope and cost. */
import { beforeAll, describe, expect, it } from 'vitest';
import { transact } from '#shared/db/object-writes.ts';
import { putConnection } from '#shared/db/relations-repo.ts';
import { seedTenant, uniqueName } from '../support/tokens.ts';
import { bson, setupEvents, type Env } from './events-fixture.ts';

let e: Env;
let app: any;
let low: any;
let high: any;
let acked: any;

beforeAll(async () => {
  e = await setupEvents();
  app = await e.app();
  low = await e.eventType(app, { Priority: 1, MessageTemplateShort: 'low {N}' });
  high = await e.eventType(app, { Priority: 8, MessageTemplateShort: 'high {N}' });
  acked = await e.eventType(app, { Priority: 5, RequiresAcknowledgement: true, MessageTemplateShort: 'alarm {N}' });
});

/** A new folder under the root, so each test lists only its own events. */
async function folder(parent = e.root): Promise<string> {
  const r = await e.api.post(`/api/f/${parent}/folders`, { token: e.token, body: { $type: 'FolderInfo', CommonName: uniqueName('f') } });
  expect(r.status).toBe(201);
  return r.body.Key;
}

async function pub(sink: string, fields: { type?: any; at?: string; n?: number; related?: string[] } = {}): Promise<any> {
  return e.published(
    e.posting(app.Key, fields.type ?? low, {
      ...(fields.at ? { OccurredOn: fields.at } : {}),
      EventDataBsonBase64: bson({ N: fields.n ?? 0 }),
      RelatedObjects: (fields.related ?? []).map((k) => ({ Relation: 'Object', LinkedObjectKey: k })),
    }),
    sink,
  );
}

const list = (f: string, query: Record<string, any> = {}, token = e.token) => e.api.get(`/api/f/${f}/events`, { token, query });
const keys = async (f: string, query: Record<string, any> = {}) => {
  const r = await list(f, query);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.map((x: any) => x.Key);
};

describe('order and paging', () => {
  it('lists newest OccurredOn first, ties by Key (newest first), whatever the publishing order', async () => {
    const f = await folder();
    const b = await pub(f, { at: '2024-03-01T10:00:00Z' });
    const a = await pub(f, { at: '2024-03-02T10:00:00Z' });
    const t1 = await pub(f, { at: '2024-03-01T12:00:00Z' });
    const t2 = await pub(f, { at: '2024-03-01T12:00:00Z' });
    expect(await keys(f)).toEqual([a.Key, t2.Key, t1.Key, b.Key]);
  });

  it('pages with page and pageSize (default 20) and ends with an empty page', async () => {
    const f = await folder();
    const made: string[] = [];
    for (let i = 0; i < 25; i++) made.push((await pub(f, { at: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString() })).Key);
    const newest = [...made].reverse();
    expect(await keys(f)).toEqual(newest.slice(0, 20));
    expect(await keys(f, { page: 1 })).toEqual(newest.slice(20));
    const walked: string[] = [];
    for (let page = 0; ; page++) {
      const k = await keys(f, { page, pageSize: 7 });
      if (k.length === 0) break;
      walked.push(...k);
    }
    expect(walked).toEqual(newest);
    expect(await keys(f, { page: 3, pageSize: 10 })).toEqual([]);
    expect((await list(f, { pageSize: 1001 })).status).toBe(400);
    expect((await list(f, { page: -1 })).status).toBe(400);
  });

  it('keeps its place when events are published while a client walks the pages', async () => {
    const f = await folder();
    const made: string[] = [];
    for (let i = 0; i < 6; i++) made.push((await pub(f, { at: new Date(Date.UTC(2024, 1, 1, 0, i)).toISOString() })).Key);
    const first = await keys(f, { pageSize: 3 });
    await pub(f, { at: '2024-02-02T00:00:00Z' }); // newer than all: would shift an offset-based page
    const second = await keys(f, { page: 1, pageSize: 3 });
    expect([...first, ...second]).toEqual([...made].reverse());
  });
});

describe('query parameters', () => {
  it('includeSubFolders lists the sub-folders\' events too, recursively', async () => {
    const f = await folder();
    const sub = await folder(f);
    const subsub = await folder(sub);
    const top = await pub(f, { at: '2024-04-01T00:00:00Z' });
    const inSub = await pub(sub, { at: '2024-04-02T00:00:00Z' });
    const deep = await pub(subsub, { at: '2024-04-03T00:00:00Z' });
    expect(await keys(f)).toEqual([top.Key]);
    expect(await keys(f, { includeSubFolders: true })).toEqual([deep.Key, inSub.Key, top.Key]);
    expect(await keys(sub, { includeSubFolders: 'true' })).toEqual([deep.Key, inSub.Key]);
  });

  it('spanScope lists child instances\' events too (their sub-folders with includeSubFolders); includeSharedInstances changes nothing', async () => {
    const parent = await seedTenant(e.t, e.env.deps, { parent: e.env.root.instance });
    const child = await seedTenant(e.t, e.env.deps, { parent: parent.instance });
    const p = parent.instance.key;
    const c = child.instance.key;
    const childFolder = await folder(c);
    const own = await pub(p, { at: '2024-05-01T00:00:00Z' });
    const inChild = await pub(c, { at: '2024-05-02T00:00:00Z' });
    const inChildFolder = await pub(childFolder, { at: '2024-05-03T00:00:00Z' });
    expect(await keys(p)).toEqual([own.Key]);
    expect(await keys(p, { spanScope: true })).toEqual([inChild.Key, own.Key]);
    expect(await keys(p, { spanScope: true, includeSubFolders: true })).toEqual([inChildFolder.Key, inChild.Key, own.Key]);
    expect(await keys(p, { includeSharedInstances: true })).toEqual([own.Key]);
    expect((await list(p, { includeSharedInstances: 'maybe' })).status).toBe(400);
    // The child instance's own users see their events, not their parent's.
    expect((await list(c, {}, child.tokens.ReadOnly)).body.map((x: any) => x.Key)).toEqual([inChild.Key]);
    expect((await list(p, {}, child.tokens.ReadOnly)).status).toBe(403);
  });

  it('requiresAck lists only events that require acknowledgement and are not acknowledged', async () => {
    const f = await folder();
    const a1 = await pub(f, { type: acked, at: '2024-06-01T00:00:00Z' });
    const a2 = await pub(f, { type: acked, at: '2024-06-02T00:00:00Z' });
    await pub(f, { type: low, at: '2024-06-03T00:00:00Z' });
    expect(await keys(f, { requiresAck: true })).toEqual([a2.Key, a1.Key]);
    expect((await e.api.post(`${a2.Href}/acknowledgements`, { token: e.token, body: { Comment: 'seen' } })).status).toBe(201);
    expect(await keys(f, { requiresAck: true })).toEqual([a1.Key]);
    expect(await keys(f, { requiresAck: false })).toHaveLength(3);
  });

  it('startingOn and endingOn select OccurredOn in [startingOn, endingOn)', async () => {
    const f = await folder();
    const at = ['2024-07-01T00:00:00Z', '2024-07-02T00:00:00Z', '2024-07-03T00:00:00Z', '2024-07-04T00:00:00Z'];
    const ev = [];
    for (const x of at) ev.push(await pub(f, { at: x }));
    expect(await keys(f, { startingOn: '2024-07-02T00:00:00Z', endingOn: '2024-07-04T00:00:00Z' })).toEqual([ev[2].Key, ev[1].Key]);
    expect(await keys(f, { startingOn: '2024-07-03T00:00:00Z' })).toEqual([ev[3].Key, ev[2].Key]);
    expect(await keys(f, { endingOn: '2024-07-02T00:00:00Z' })).toEqual([ev[0].Key]);
    expect(await keys(f, { startingOn: '2024-07-03T00:00:00Z', endingOn: '2024-07-03T00:00:00Z' })).toEqual([]);
    expect((await list(f, { startingOn: 'soon' })).status).toBe(400);
  });

  it('timeWindowStarting and timeWindowEnding select a UTC time of day, wrapping over midnight', async () => {
    const f = await folder();
    const at = (h: number) => `2024-08-0${1 + (h % 3)}T${String(h).padStart(2, '0')}:30:00Z`;
    const ev: Record<number, string> = {};
    for (const h of [1, 8, 12, 22]) ev[h] = (await pub(f, { at: at(h) })).Key;
    const sorted = (ks: number[]) => ks.map((h) => ev[h]).sort();
    expect((await keys(f, { timeWindowStarting: '08:00:00', timeWindowEnding: '13:00:00' })).sort()).toEqual(sorted([8, 12]));
    expect((await keys(f, { timeWindowStarting: '22:00:00', timeWindowEnding: '02:00:00' })).sort()).toEqual(sorted([1, 22]));
    expect((await keys(f, { timeWindowStarting: '12:30:00' })).sort()).toEqual(sorted([12, 22]));
    expect((await keys(f, { timeWindowEnding: '08:30:00' })).sort()).toEqual(sorted([1]));
    expect((await list(f, { timeWindowStarting: '25:00:00' })).status).toBe(400);
  });

  it('priorityThreshold selects Priority >= threshold; 0 means all', async () => {
    const f = await folder();
    const l = await pub(f, { type: low, at: '2024-09-01T00:00:00Z' });
    const m = await pub(f, { type: acked, at: '2024-09-02T00:00:00Z' });
    const h = await pub(f, { type: high, at: '2024-09-03T00:00:00Z' });
    expect(await keys(f, { priorityThreshold: 5 })).toEqual([h.Key, m.Key]);
    expect(await keys(f, { priorityThreshold: 8 })).toEqual([h.Key]);
    expect(await keys(f, { priorityThreshold: 0 })).toEqual([h.Key, m.Key, l.Key]);
    expect((await list(f, { priorityThreshold: 'x' })).status).toBe(400);
  });

  it('forKeys selects events related to any key, forAllKeys to all; repeated or comma-separated', async () => {
    const f = await folder();
    const [x, y, z] = await Promise.all([1, 2, 3].map(() => e.object('people', 'PersonInfo')));
    const ex = await pub(f, { at: '2024-10-01T00:00:00Z', related: [x.Key] });
    const exy = await pub(f, { at: '2024-10-02T00:00:00Z', related: [x.Key, y.Key] });
    const ez = await pub(f, { at: '2024-10-03T00:00:00Z', related: [z.Key] });
    await pub(f, { at: '2024-10-04T00:00:00Z' });
    expect(await keys(f, { forKeys: x.Key })).toEqual([exy.Key, ex.Key]);
    expect(await keys(f, { forKeys: [y.Key, z.Key] })).toEqual([ez.Key, exy.Key]);
    expect(await keys(f, { forKeys: `${y.Key},${z.Key}` })).toEqual([ez.Key, exy.Key]);
    expect(await keys(f, { forAllKeys: `${x.Key},${y.Key}` })).toEqual([exy.Key]);
    expect(await keys(f, { forAllKeys: [x.Key, z.Key] })).toEqual([]);
    expect(await keys(f, { forKeys: x.Key.toUpperCase(), startingOn: '2024-10-02T00:00:00Z' })).toEqual([exy.Key]);
    // Events of those objects in other folders are not listed here.
    const g = await folder();
    await pub(g, { at: '2024-10-05T00:00:00Z', related: [x.Key] });
    expect(await keys(f, { forKeys: x.Key })).toEqual([exy.Key, ex.Key]);
    expect((await list(f, { forKeys: 'not-a-key' })).status).toBe(400);
  });

  it('sinceKey selects events published after that event', async () => {
    const f = await folder();
    const first = await pub(f, { at: '2024-11-05T00:00:00Z' });
    const second = await pub(f, { at: '2024-11-01T00:00:00Z' });
    const third = await pub(f, { at: '2024-11-03T00:00:00Z' });
    expect(await keys(f, { sinceKey: first.Key })).toEqual([third.Key, second.Key]);
    expect(await keys(f, { sinceKey: third.Key })).toEqual([]);
    expect((await list(f, { sinceKey: 'nope' })).status).toBe(400);
  });

  it('query filters with the search query syntax and refuses unsafe operators', async () => {
    const f = await folder();
    const a = await pub(f, { type: high, n: 1, at: '2024-12-01T00:00:00Z' });
    const b = await pub(f, { type: low, n: 2, at: '2024-12-02T00:00:00Z' });
    expect(await keys(f, { query: JSON.stringify({ MessageShort: 'high 1' }) })).toEqual([a.Key]);
    expect(await keys(f, { query: "{Priority: {$lt: 5}}" })).toEqual([b.Key]);
    expect(await keys(f, { query: `{EventTypeKey: {$in: ['${high.Key}', '${low.Key}']}}` })).toEqual([b.Key, a.Key]);
    expect(await keys(f, { query: "{OccurredOn: {$gte: ISODate('2024-12-02T00:00:00Z')}}" })).toEqual([b.Key]);
    expect(await keys(f, { query: "{_t: 'EventMessageData', MessageShort: {$regex: '^low'}}" })).toEqual([b.Key]);
    const unsafe = await list(f, { query: "{$where: 'sleep(1000)'}" });
    expect([unsafe.status, unsafe.body.Error]).toEqual([400, 'InvalidQuery']);
  });

  it('forPeopleInAccessLevels selects events related to people connected to those access levels', async () => {
    const f = await folder();
    const level = await e.object('accesslevels', 'AccessLevelInfo');
    const [inside, outside] = await Promise.all([1, 2].map(() => e.object('people', 'PersonInfo')));
    await transact(e.t.db, [putConnection(e.t.db, { from: inside.Key, relation: 'AccessLevel', to: level.Key })]);
    const ei = await pub(f, { at: '2025-01-01T00:00:00Z', related: [inside.Key] });
    await pub(f, { at: '2025-01-02T00:00:00Z', related: [outside.Key] });
    await pub(f, { at: '2025-01-03T00:00:00Z' });
    expect(await keys(f, { forPeopleInAccessLevels: level.Key })).toEqual([ei.Key]);
    const empty = await e.object('accesslevels', 'AccessLevelInfo');
    expect(await keys(f, { forPeopleInAccessLevels: empty.Key })).toEqual([]);
  });

  it('forPeopleInAccessLevels counts a scheduled access level only while its window holds', async () => {
    const f = await folder();
    const level = await e.object('accesslevels', 'AccessLevelInfo');
    const [current, ended, open] = await Promise.all([1, 2, 3].map(() => e.object('people', 'PersonInfo')));
    const window = { current: { ActiveOn: '2000-01-01T00:00:00Z', ExpiresOn: '2999-01-01T00:00:00Z' }, ended: { ExpiresOn: '2001-01-01T00:00:00Z' }, open: {} };
    for (const [p, body] of [[current, window.current], [ended, window.ended], [open, window.open]] as const) {
      const r = await e.api.put(`${p.Href}/connections/ScheduledAccessLevel?isOneToOne=False&relatedKey=${level.Key}&addAsTag=false`, { token: e.token, body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const ec = await pub(f, { at: '2025-01-01T00:00:00Z', related: [current.Key] });
    await pub(f, { at: '2025-01-02T00:00:00Z', related: [ended.Key] });
    const eo = await pub(f, { at: '2025-01-03T00:00:00Z', related: [open.Key] });
    expect(await keys(f, { forPeopleInAccessLevels: level.Key })).toEqual([eo.Key, ec.Key]);
  });

  it('combines parameters', async () => {
    const f = await folder();
    const p = await e.object('people', 'PersonInfo');
    await pub(f, { type: high, at: '2025-02-01T09:00:00Z', related: [p.Key] });
    const hit = await pub(f, { type: high, at: '2025-02-02T09:00:00Z', related: [p.Key] });
    await pub(f, { type: low, at: '2025-02-03T09:00:00Z', related: [p.Key] });
    await pub(f, { type: high, at: '2025-02-04T18:00:00Z', related: [p.Key] });
    const q = { forKeys: p.Key, priorityThreshold: 5, startingOn: '2025-02-02T00:00:00Z', timeWindowStarting: '08:00', timeWindowEnding: '10:00' };
    expect(await keys(f, q)).toEqual([hit.Key]);
  });
});

describe('scope and cost', () => {
  it('answers 403 for a folder outside the caller\'s scope and 404 for an unknown key in scope', async () => {
    const stranger = await seedTenant(e.t, e.env.deps, { name: uniqueName('Stranger') });
    expect((await list(e.root, {}, stranger.tokens.Administrator)).status).toBe(403);
    expect((await list('0123456789abcdef01234567')).status).toBe(403);
    const p = await e.object('people', 'PersonInfo');
    expect((await list(p.Key)).status).toBe(404);
  });

  it('reads a page with one bounded Query, and the next page with one more', async () => {
    const f = await folder();
    for (let i = 0; i < 25; i++) await pub(f, { at: new Date(Date.UTC(2023, 0, 1, i)).toISOString() });
    await list(f, { pageSize: 10 }); // the folder's placement is read once
    const first = await e.measure(() => list(f, { pageSize: 10 }));
    expect(first.result.body).toHaveLength(10);
    expect(first.commands).toEqual(['Query']);
    const second = await e.measure(() => list(f, { pageSize: 10, page: 1 }));
    expect(second.result.body).toHaveLength(10);
    expect(second.commands).toEqual(['Query']);
    const ranged = await e.measure(() => list(f, { pageSize: 10, startingOn: '2023-01-01T20:00:00Z' }));
    expect(ranged.result.body).toHaveLength(5);
    expect(ranged.commands).toEqual(['Query']);
  });

  it('reads only the pointers of the objects named by forKeys, not the folder\'s timeline', async () => {
    const f = await folder();
    const p = await e.object('people', 'PersonInfo');
    for (let i = 0; i < 30; i++) await pub(f, { at: new Date(Date.UTC(2022, 0, 1, i % 24, i)).toISOString(), related: i % 10 === 0 ? [p.Key] : [] });
    await list(f);
    const m = await e.measure(() => list(f, { forKeys: p.Key }));
    expect(m.result.body).toHaveLength(3);
    expect(m.commands).toEqual(['Query', 'BatchGetItem']);
  });
});
