/**
 * Scheduled access levels (relation ScheduledAccessLevel) through the real people and access
 * families over DynamoDB Local: the batch PUT, PUT/POST connect with a window, the person's links
 * with their MetaDataBson, the list of one relation, and what deletes and PUTs of the person do.
 */
import { deserialize, serialize } from 'bson';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectionsFrom } from '#shared/db/relations-repo.ts';
import { MAX_SCHEDULED_BATCH } from '#shared/relations/calls.ts';
import { MAX_LINK_CHANGES } from '#shared/relations/relation-links.ts';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

let t: TestDb;
let api: Awaited<ReturnType<typeof setupApi>>['api'];
let root: Tenant;
let sibling: Tenant;
let I: string;

const T = (name: string) => `Acme.${name}, Acme`;
const REL = 'ScheduledAccessLevel';

/** MetaDataBson as clients build it: base64 of BSON with JS Dates (or null). */
const meta = (doc: Record<string, unknown>): string => Buffer.from(serialize(doc)).toString('base64');
const windowOf = (b64: string) => deserialize(Buffer.from(b64, 'base64'));

const activeOn = new Date('2026-01-01T08:00:00.000Z');
const expiresOn = new Date('2026-12-31T17:00:00.000Z');

async function make(coll: string, body: Record<string, unknown>, folder = I, token = root.tokens.Administrator): Promise<string> {
  const res = await api.post(`/api/f/${folder}/${coll}`, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.Key as string;
}

const person = (name: string) => make('people', { $type: T('PersonInfo'), CommonName: `${name} ${Math.random()}` });
const level = (name: string) => make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: `${name} ${Math.random()}` });

const batch = (p: string, body: unknown, token = root.tokens.Operator) =>
  api.put(`/api/f/${I}/people/${p}/scheduledaccesslevelbatch`, { token, body });

const item = (key: string, metaData: unknown = meta({ ActiveOn: activeOn, ExpiresOn: expiresOn })) => ({
  $type: T('ObjectLinkItem'),
  Relation: REL,
  LinkedObjectKey: key,
  MetaDataBson: metaData,
});

const getPerson = async (p: string) => (await api.get(`/api/f/${I}/people/${p}`, { token: root.tokens.ReadOnly })).body;
const scheduledLinks = async (p: string) => ((await getPerson(p)).ObjectLinks as any[]).filter((l) => l.Relation === REL);
const listed = async (p: string, relation = REL) =>
  ((await api.get(`/api/f/${I}/people/${p}/connections/${relation}`, { token: root.tokens.ReadOnly })).body as any[]).map((o) => o.Key).sort();

beforeAll(async () => {
  t = await createTestDb();
  let deps;
  ({ api, deps, root } = await setupApi(t));
  I = root.instance.key;
  sibling = await seedTenant(t, deps);
  // The token's status is cached after its first use: the measured calls read only their own items.
  expect((await api.get('/api', { token: root.tokens.Operator })).status).toBe(200);
});

describe('scheduledaccesslevelbatch', () => {
  it('sets the scheduled levels with BSON-dated windows in one transaction, shown as MetaDataBson and listed by relation', async () => {
    const p = await person('Batch');
    const [a, b] = await Promise.all([level('A'), level('B')]);

    const res = await commandsOf(t, () => batch(p, [item(a), item(b, meta({ ActiveOn: null, ExpiresOn: expiresOn }))]));

    expect(res.result.status, JSON.stringify(res.result.body)).toBe(204);
    // The person (GetItem), the targets (one BatchGetItem), its connections (Query), one transaction.
    expect(res.commands).toEqual(['GetItem', 'BatchGetItem', 'Query', 'TransactWriteItems']);
    const links = await scheduledLinks(p);
    expect(links.map((l) => l.LinkedObjectKey).sort()).toEqual([a, b].sort());
    const la = links.find((l) => l.LinkedObjectKey === a);
    expect(la).toMatchObject({ $type: 'Gatehouse.Model.ObjectLinkItem, Gatehouse.Model', Href: `/api/f/${I}/accesslevels/${a}` });
    expect(windowOf(la.MetaDataBson)).toEqual({ ActiveOn: activeOn, ExpiresOn: expiresOn });
    expect(windowOf(links.find((l) => l.LinkedObjectKey === b).MetaDataBson)).toEqual({ ActiveOn: null, ExpiresOn: expiresOn });
    expect(await listed(p)).toEqual([a, b].sort());
    const stored = await connectionsFrom(t.db, p, REL);
    expect(stored.find((c) => c.to === a)).toMatchObject({ activeOn: activeOn.toISOString(), expiresOn: expiresOn.toISOString() });
    expect(stored.find((c) => c.to === b)).toMatchObject({ activeOn: null, expiresOn: expiresOn.toISOString() });
  });

  it('replaces exactly the scheduled set, leaves other relations alone, and changes nothing for an identical batch', async () => {
    const p = await person('Replace');
    const [a, b, c, plain] = await Promise.all([level('RA'), level('RB'), level('RC'), level('Plain')]);
    const plainRes = await api.put(`/api/f/${I}/people/${p}/accesslevels`, { token: root.tokens.Operator, body: JSON.stringify(`/api/f/${I}/accesslevels/${plain}`) });
    expect(plainRes.status).toBe(204);
    expect((await batch(p, [item(a), item(b)])).status).toBe(204);
    const v1 = (await getPerson(p)).ConcurrencyVersion;

    expect((await batch(p, [item(b), item(a)])).status).toBe(204);
    expect((await getPerson(p)).ConcurrencyVersion).toBe(v1);

    const later = meta({ ActiveOn: new Date('2027-01-01T00:00:00Z'), ExpiresOn: null });
    expect((await batch(p, [item(b, later), item(c)])).status).toBe(204);

    const after = await getPerson(p);
    expect(after.ConcurrencyVersion).toBe(v1 + 1);
    expect(await listed(p)).toEqual([b, c].sort());
    expect(await listed(p, 'AccessLevel')).toEqual([plain]);
    expect(windowOf(after.ObjectLinks.find((l: any) => l.LinkedObjectKey === b).MetaDataBson)).toEqual({ ActiveOn: new Date('2027-01-01T00:00:00Z'), ExpiresOn: null });
    expect((await connectionsFrom(t.db, p, REL)).find((x) => x.to === b)).toMatchObject({ activeOn: '2027-01-01T00:00:00.000Z', expiresOn: null });
    // The updated link kept its place; the new one came last.
    expect(after.ObjectLinks.filter((l: any) => l.Relation === REL).map((l: any) => l.LinkedObjectKey)).toEqual([b, c]);

    expect((await batch(p, [])).status).toBe(204);
    expect(await listed(p)).toEqual([]);
    expect(await listed(p, 'AccessLevel')).toEqual([plain]);
  });

  it('rejects a target outside the scope, unknown or of the wrong collection, and writes nothing', async () => {
    const p = await person('Refused');
    const ok = await level('Fine');
    const foreign = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Theirs' }, sibling.instance.key, sibling.tokens.Administrator);
    const door = await make('doors', { $type: T('DoorInfo'), CommonName: `Door ${Math.random()}` });
    const before = await getPerson(p);

    const cross = await batch(p, [item(ok), item(foreign)]);
    const unknown = await batch(p, [item(ok), item('ffffffffffffffffffffffff')]);
    const wrong = await batch(p, [item(ok), item(door)]);

    expect(cross.status).toBe(403);
    expect(JSON.stringify(cross.body)).not.toContain('Theirs');
    expect(unknown.status).toBe(404);
    expect([wrong.status, wrong.body.Error]).toEqual([400, 'InvalidRelation']);
    expect(await getPerson(p)).toEqual(before);
    expect(await connectionsFrom(t.db, p)).toEqual([]);
    expect((await batch(p, [item(ok)], root.tokens.ReadOnly)).status).toBe(403);
    // Another tenant can neither write nor read the person's scheduled levels.
    expect((await batch(p, [item(ok)], sibling.tokens.Administrator)).status).toBe(403);
    const peek = await api.get(`/api/f/${I}/people/${p}/connections/${REL}`, { token: sibling.tokens.Administrator });
    expect(peek.status).toBe(403);
    const connectAsStranger = await api.put(`/api/f/${I}/people/${p}/connections/${REL}?relatedKey=${ok}`, { token: sibling.tokens.Administrator, body: {} });
    expect(connectAsStranger.status).toBe(403);
    expect(await getPerson(p)).toEqual(before);
  });

  it('rejects malformed MetaDataBson and windows with 400 and a stable code', async () => {
    const p = await person('Malformed');
    const a = await level('M');
    const huge = meta({ ActiveOn: activeOn, Padding: 'x'.repeat(2000) });
    for (const [metaData, code] of [
      ['not base64!', 'InvalidMetaData'],
      [Buffer.from('not bson at all').toString('base64'), 'InvalidMetaData'],
      [meta({ ActiveOn: activeOn, ExpiresOn: expiresOn, Extra: 1 }), 'InvalidMetaData'],
      [meta({ ActiveOn: 42 }), 'InvalidMetaData'],
      [meta({ ActiveOn: 'yesterday' }), 'InvalidMetaData'],
      [huge, 'InvalidMetaData'],
      [{ ActiveOn: activeOn.toISOString() }, 'InvalidMetaData'],
      [meta({ ActiveOn: expiresOn, ExpiresOn: activeOn }), 'InvalidWindow'],
    ] as const) {
      const res = await batch(p, [item(a, metaData)]);
      expect([res.status, res.body.Error], String(metaData).slice(0, 40)).toEqual([400, code]);
      expect(res.body.Message).toMatch(/^\[0\] /);
    }
    expect((await batch(p, { Relation: REL })).body.Error).toBe('ValidationFailed');
    expect((await batch(p, Array.from({ length: MAX_SCHEDULED_BATCH + 1 }, () => ({ Relation: REL, LinkedObjectKey: a })))).body.Error).toBe('ValidationFailed');
    expect((await batch(p, [{ ...item(a), Relation: 'AccessLevel' }])).body.Error).toBe('InvalidRelation');
    expect((await batch(p, [item(a), item(a, null)])).body.Error).toBe('InvalidRelation');
    expect(await connectionsFrom(t.db, p)).toEqual([]);
  });

  it('accepts windows as ISO strings in the BSON, as byte arrays, and null or no MetaDataBson as an open window', async () => {
    const p = await person('Forms');
    const [a, b, c] = await Promise.all([level('FA'), level('FB'), level('FC')]);
    const bytes = [...serialize({ ActiveOn: activeOn, ExpiresOn: null })];
    const res = await batch(p, [item(a, meta({ ActiveOn: '2026-01-01T08:00:00Z', ExpiresOn: '2026-12-31T17:00:00+00:00' })), item(b, bytes), { Relation: REL, LinkedObjectKey: c.toUpperCase() }]);
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    const links = await scheduledLinks(p);
    const w = (k: string) => windowOf(links.find((l) => l.LinkedObjectKey === k).MetaDataBson);
    expect([w(a), w(b), w(c)]).toEqual([
      { ActiveOn: activeOn, ExpiresOn: expiresOn },
      { ActiveOn: activeOn, ExpiresOn: null },
      { ActiveOn: null, ExpiresOn: null },
    ]);
  });

  it(`refuses more than ${MAX_LINK_CHANGES} changes in one batch and writes nothing`, async () => {
    const p = await person('Many');
    const levels = await Promise.all(Array.from({ length: MAX_LINK_CHANGES + 1 }, (_, i) => level(`Many${i}`)));
    const res = await batch(p, levels.map((k) => item(k)));
    expect([res.status, res.body.Error]).toEqual([400, 'InvalidRelation']);
    expect(res.body.Message).toContain(String(MAX_LINK_CHANGES));
    expect(await connectionsFrom(t.db, p)).toEqual([]);
    expect((await batch(p, levels.slice(0, MAX_LINK_CHANGES).map((k) => item(k)))).status).toBe(204);
    expect((await listed(p)).length).toBe(MAX_LINK_CHANGES);
  });
});

describe('connect with a window', () => {
  const connectPath = (p: string) => `/api/f/${I}/people/${p}/connections/${REL}`;

  it('connects with PUT ?isOneToOne=False&relatedKey=&addAsTag=false and a JSON window, read back as BSON dates', async () => {
    const p = await person('Put');
    const [a, b] = await Promise.all([level('PA'), level('PB')]);

    const res = await commandsOf(t, () =>
      api.put(`${connectPath(p)}?isOneToOne=False&relatedKey=${a}&addAsTag=false`, {
        token: root.tokens.Operator,
        body: { ActiveOn: activeOn.toISOString(), ExpiresOn: expiresOn.toISOString() },
      }),
    );

    expect(res.result.status, JSON.stringify(res.result.body)).toBe(200);
    expect(res.commands).toEqual(['GetItem', 'GetItem', 'Query', 'TransactWriteItems', 'GetItem']);
    const link = res.result.body.ObjectLinks.find((l: any) => l.Relation === REL);
    expect(link).toMatchObject({ LinkedObjectKey: a, Href: `/api/f/${I}/accesslevels/${a}` });
    expect(windowOf(link.MetaDataBson)).toEqual({ ActiveOn: activeOn, ExpiresOn: expiresOn });

    // isOneToOne=True does not make the relation one-to-one: the table decides.
    const post = await api.post(`${connectPath(p)}?isOneToOne=True&relatedKey=${b}`, { token: root.tokens.Operator, body: { ActiveOn: '2026-03-01T00:00:00', ExpiresOn: null } });
    expect(post.status).toBe(200);
    expect(await listed(p)).toEqual([a, b].sort());
    expect(windowOf(post.body.ObjectLinks.find((l: any) => l.LinkedObjectKey === b).MetaDataBson)).toEqual({ ActiveOn: new Date('2026-03-01T00:00:00Z'), ExpiresOn: null });
  });

  it('updates the window of a connected level, changes nothing when it is the same, and opens it without a body', async () => {
    const p = await person('Again');
    const a = await level('AG');
    const put = (body?: unknown) => api.put(`${connectPath(p)}?relatedKey=${a}&isOneToOne=false`, { token: root.tokens.Operator, ...(body === undefined ? {} : { body }) });
    expect((await put({ ActiveOn: activeOn.toISOString() })).status).toBe(200);
    const v = (await getPerson(p)).ConcurrencyVersion;
    expect((await put({ ActiveOn: activeOn.toISOString(), ExpiresOn: null })).body.ConcurrencyVersion).toBe(v);
    const changed = await put({ ExpiresOn: expiresOn.toISOString() });
    expect(changed.body.ConcurrencyVersion).toBe(v + 1);
    expect(windowOf((await scheduledLinks(p))[0].MetaDataBson)).toEqual({ ActiveOn: null, ExpiresOn: expiresOn });
    expect((await put()).status).toBe(200);
    expect(windowOf((await scheduledLinks(p))[0].MetaDataBson)).toEqual({ ActiveOn: null, ExpiresOn: null });
    expect(await scheduledLinks(p)).toHaveLength(1);
  });

  it('rejects a bad window, unknown fields and a body for other relation kinds; ignores an empty one', async () => {
    const p = await person('BadBody');
    const a = await level('BB');
    const put = (relation: string, body: unknown, extra = '') =>
      api.put(`/api/f/${I}/people/${p}/connections/${relation}?relatedKey=${a}${extra}`, { token: root.tokens.Operator, body });
    expect((await put(REL, { ActiveOn: expiresOn.toISOString(), ExpiresOn: activeOn.toISOString() })).body.Error).toBe('InvalidWindow');
    expect((await put(REL, { ActiveOn: 'soon' })).body.Error).toBe('ValidationFailed');
    expect((await put(REL, { activeon: activeOn.toISOString() })).body.Error).toBe('ValidationFailed');
    expect((await put(REL, [activeOn.toISOString()])).body.Error).toBe('ValidationFailed');
    expect((await put(REL, {}, '&addAsTag=maybe')).body.Error).toBe('InvalidParameter');
    expect(await connectionsFrom(t.db, p)).toEqual([]);
    expect((await put('AccessLevel', { ActiveOn: activeOn.toISOString() })).body.Error).toBe('ValidationFailed');
    expect((await put('AccessLevel', {})).status).toBe(200);
    expect(await listed(p, 'AccessLevel')).toEqual([a]);
    const unknown = await api.get(`/api/f/${I}/people/${p}/connections/Nonsense`, { token: root.tokens.ReadOnly });
    expect([unknown.status, unknown.body.Error]).toEqual([400, 'InvalidRelation']);
  });
});

describe('around the person and the level', () => {
  it('keeps windows through a GET and PUT of the person, and takes a new one from a link\'s MetaDataBson', async () => {
    const p = await person('Whole');
    const a = await level('WA');
    expect((await batch(p, [item(a)])).status).toBe(204);
    const got = await getPerson(p);

    const same = await api.put(`/api/f/${I}/people/${p}`, { token: root.tokens.Operator, body: { ...got, GivenName: 'Kept' } });
    expect(same.status).toBe(200);
    expect((await connectionsFrom(t.db, p, REL))[0]).toMatchObject({ activeOn: activeOn.toISOString(), expiresOn: expiresOn.toISOString() });
    expect(same.body.ObjectLinks.find((l: any) => l.Relation === REL).MetaDataBson).toBe(got.ObjectLinks.find((l: any) => l.Relation === REL).MetaDataBson);

    const newWindow = meta({ ActiveOn: null, ExpiresOn: new Date('2030-01-01T00:00:00Z') });
    const links = same.body.ObjectLinks.map((l: any) => (l.Relation === REL ? { ...l, MetaDataBson: newWindow } : l));
    const moved = await api.put(`/api/f/${I}/people/${p}`, { token: root.tokens.Operator, body: { ...same.body, ObjectLinks: links } });
    expect(moved.status).toBe(200);
    expect((await connectionsFrom(t.db, p, REL))[0]).toMatchObject({ activeOn: null, expiresOn: '2030-01-01T00:00:00.000Z' });
    expect(windowOf((await scheduledLinks(p))[0].MetaDataBson)).toEqual({ ActiveOn: null, ExpiresOn: new Date('2030-01-01T00:00:00Z') });

    const bad = await api.put(`/api/f/${I}/people/${p}`, { token: root.tokens.Operator, body: { ...moved.body, ObjectLinks: [{ Relation: REL, LinkedObjectKey: a, MetaDataBson: 'bad!' }] } });
    expect([bad.status, bad.body.Error]).toEqual([400, 'InvalidMetaData']);
    expect((await getPerson(p)).ConcurrencyVersion).toBe(moved.body.ConcurrencyVersion);
  });

  it('lists a level whose window has ended or not started', async () => {
    const p = await person('Windows');
    const [past, future] = await Promise.all([level('Past'), level('Future')]);
    const res = await batch(p, [
      item(past, meta({ ActiveOn: new Date('2000-01-01T00:00:00Z'), ExpiresOn: new Date('2000-12-31T00:00:00Z') })),
      item(future, meta({ ActiveOn: new Date('2999-01-01T00:00:00Z'), ExpiresOn: null })),
    ]);
    expect(res.status).toBe(204);
    expect(await listed(p)).toEqual([past, future].sort());
  });

  it('carries a rename to the scheduled link, window kept, and removes links and connections when the level is deleted', async () => {
    const p = await person('Deleted');
    const [gone, kept] = await Promise.all([level('Gone'), level('Kept')]);
    expect((await batch(p, [item(gone), item(kept)])).status).toBe(204);
    const before = (await scheduledLinks(p)).find((l) => l.LinkedObjectKey === kept);
    const current = (await api.get(`/api/f/${I}/accesslevels/${kept}`, { token: root.tokens.ReadOnly })).body;
    const renamed = await api.put(`/api/f/${I}/accesslevels/${kept}`, { token: root.tokens.Operator, body: { ...current, CommonName: `Renamed ${Math.random()}` } });
    expect([200, 204]).toContain(renamed.status);
    const after = (await scheduledLinks(p)).find((l) => l.LinkedObjectKey === kept);
    expect(after).toEqual({ ...before, CommonName: expect.stringMatching(/^Renamed /) });

    expect((await api.del(`/api/f/${I}/accesslevels/${gone}`, { token: root.tokens.Operator })).status).toBe(204);

    expect((await scheduledLinks(p)).map((l) => l.LinkedObjectKey)).toEqual([kept]);
    expect((await connectionsFrom(t.db, p, REL)).map((c) => c.to)).toEqual([kept]);
    expect(await listed(p)).toEqual([kept]);
  });
});
