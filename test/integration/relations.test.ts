import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

let t: TestDb;
let api: Awaited<ReturnType<typeof setupApi>>['api'];
let root: Tenant;
let child: Tenant;
let sibling: Tenant;
let I: string;

const T = (name: string) => `Acme.${name}, Acme`;

async function make(coll: string, body: Record<string, unknown>, folder = I, token = root.tokens.Administrator): Promise<string> {
  const res = await api.post(`/api/f/${folder}/${coll}`, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.Key as string;
}

const connect = (coll: string, key: string, relation: string, relatedKey: string, token = root.tokens.Operator, folder = I) =>
  api.post(`/api/f/${folder}/${coll}/${key}/connections/${relation}`, { token, query: { relatedKey, isOneToOne: false } });

const links = async (coll: string, key: string) =>
  ((await api.get(`/api/f/${I}/${coll}/${key}`, { token: root.tokens.ReadOnly })).body.ObjectLinks as any[]).filter((l) => l.Relation);

beforeAll(async () => {
  t = await createTestDb();
  let deps;
  ({ api, deps, root } = await setupApi(t));
  I = root.instance.key;
  child = await seedTenant(t, deps, { parent: root.instance });
  sibling = await seedTenant(t, deps);
});

describe('relations', () => {
  it('connects every relation kind and lists connections and references', async () => {
    const person = await make('people', { $type: T('PersonInfo'), CommonName: 'Pat' });
    const level = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Lobby' });
    const badge = await make('badgetypes', { $type: T('BadgeTypeInfo'), CommonName: 'Staff' });
    const schedule = await make('schedules', { $type: T('ScheduleInfo'), CommonName: 'Office hours' });
    const reader = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'R1' });
    const controller = await make('controllers', { $type: T('Lp1502Info'), CommonName: 'C1' });
    const door = await make('doors', { $type: T('DoorInfo'), CommonName: 'Front' });
    const input = await make('inputs', { $type: T('AscInputInfo'), CommonName: 'In1' });

    for (const [coll, key, rel, to] of [
      ['people', person, 'AccessLevel', level],
      ['people', person, 'BadgeType', badge],
      ['accesslevels', level, 'Schedule', schedule],
      ['accesslevels', level, 'Reader', reader],
      ['readers', reader, 'Controller', controller],
      ['inputs', input, 'Controller', controller],
      ['readers', reader, 'Door', door],
    ] as const) {
      const res = await connect(coll, key, rel, to);
      expect(res.status, `${coll} ${rel}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.ObjectLinks).toContainEqual(expect.objectContaining({ Relation: rel, LinkedObjectKey: to, $type: 'Gatehouse.Model.ObjectLinkItem, Gatehouse.Model' }));
    }
    const conns = await api.get(`/api/f/${I}/people/${person}/connections`, { token: root.tokens.ReadOnly });
    expect(conns.status).toBe(200);
    expect(conns.body.map((o: any) => o.Key).sort()).toEqual([level, badge].sort());
    expect(conns.body[0].$type).toMatch(/Info, Gatehouse.Model$/);
    const refs = await api.get(`/api/f/${I}/controllers/${controller}/references`, { token: root.tokens.ReadOnly });
    expect(refs.body.map((o: any) => o.Key).sort()).toEqual([reader, input].sort());
    const l = await links('readers', reader);
    expect(l.find((x) => x.Relation === 'Door')).toMatchObject({ LinkedObjectKey: door, CommonName: 'Front', Href: `/api/f/${I}/doors/${door}` });
  });

  it('replaces the target of a one-to-one relation and is idempotent', async () => {
    const person = await make('people', { $type: T('PersonInfo'), CommonName: 'One' });
    const a = await make('badgetypes', { $type: T('BadgeTypeInfo'), CommonName: 'A1' });
    const b = await make('badgetypes', { $type: T('BadgeTypeInfo'), CommonName: 'B1' });
    await connect('people', person, 'BadgeType', a);
    await connect('people', person, 'BadgeType', b);
    await connect('people', person, 'BadgeType', b);
    expect((await links('people', person)).map((x) => x.LinkedObjectKey)).toEqual([b]);
    const refsA = await api.get(`/api/f/${I}/badgetypes/${a}/references`, { token: root.tokens.ReadOnly });
    expect(refsA.body).toEqual([]);
  });

  it('rejects wrong types, missing and foreign targets', async () => {
    const person = await make('people', { $type: T('PersonInfo'), CommonName: 'Wrong' });
    const door = await make('doors', { $type: T('DoorInfo'), CommonName: 'D9' });
    const wrongTarget = await connect('people', person, 'AccessLevel', door);
    expect(wrongTarget.status).toBe(400);
    expect(wrongTarget.body.Error).toBe('InvalidRelation');
    const wrongSource = await connect('doors', door, 'Controller', person);
    expect([400, 404]).toContain(wrongSource.status); // doors have no relation routes
    expect((await connect('people', person, 'Nonsense', door)).body.Error).toBe('InvalidRelation');
    expect((await connect('people', person, 'AccessLevel', 'ffffffffffffffffffffffff')).status).toBe(404);
    const foreign = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Theirs' }, sibling.instance.key, sibling.tokens.Administrator);
    const cross = await connect('people', person, 'AccessLevel', foreign);
    expect(cross.status).toBe(403);
    expect(JSON.stringify(cross.body)).not.toContain('Theirs');
    expect((await connect('people', person, 'AccessLevel', door, root.tokens.ReadOnly)).status).toBe(403);
  });

  it('keeps links correct when the target is renamed or deleted', async () => {
    const person = await make('people', { $type: T('PersonInfo'), CommonName: 'Keeper' });
    const level = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Old name' });
    await connect('people', person, 'AccessLevel', level);
    const current = (await api.get(`/api/f/${I}/accesslevels/${level}`, { token: root.tokens.ReadOnly })).body;
    const put = await api.put(`/api/f/${I}/accesslevels/${level}`, { token: root.tokens.Operator, body: { ...current, CommonName: 'New name' } });
    expect([200, 204]).toContain(put.status);
    expect((await links('people', person))[0]).toMatchObject({ LinkedObjectKey: level, CommonName: 'New name' });
    expect((await api.del(`/api/f/${I}/accesslevels/${level}`, { token: root.tokens.Operator })).status).toBe(204);
    expect(await links('people', person)).toEqual([]);
    const conns = await api.get(`/api/f/${I}/people/${person}/connections`, { token: root.tokens.ReadOnly });
    expect(conns.body).toEqual([]);
  });

  it('disconnects, and deleting the source removes its connections', async () => {
    const person = await make('people', { $type: T('PersonInfo'), CommonName: 'Gone' });
    const level = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Stay' });
    await connect('people', person, 'AccessLevel', level);
    const del = await api.del(`/api/f/${I}/people/${person}/connections/AccessLevel/${level}`, { token: root.tokens.Operator });
    expect(del.status).toBe(204);
    expect(await links('people', person)).toEqual([]);
    await connect('people', person, 'AccessLevel', level);
    expect((await api.del(`/api/f/${I}/people/${person}`, { token: root.tokens.Operator })).status).toBe(204);
    const refs = await api.get(`/api/f/${I}/accesslevels/${level}/references`, { token: root.tokens.ReadOnly });
    expect(refs.body).toEqual([]);
  });

  it('connects access levels with the PUT field clients use, adding to those connected', async () => {
    const person = await make('people', { $type: T('PersonInfo'), CommonName: 'Putter' });
    const a = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'PA' });
    const b = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'PB' });
    for (const k of [a, b]) {
      const res = await api.put(`/api/f/${I}/people/${person}/accesslevels`, { token: root.tokens.Operator, body: JSON.stringify(`/api/f/${I}/accesslevels/${k}`) });
      expect(res.status).toBe(204);
    }
    expect((await links('people', person)).map((x) => x.LinkedObjectKey).sort()).toEqual([a, b].sort());
  });

  it('applies relation-kind ObjectLinks sent with POST and PUT, keeping others as sent', async () => {
    const level = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Linked' });
    const person = await make('people', {
      $type: T('PersonInfo'), CommonName: 'Sender',
      ObjectLinks: [
        { $type: T('ObjectLinkItem'), Relation: 'AccessLevel', LinkedObjectKey: level },
        { $type: T('ObjectLinkItem'), Relation: 'InInstance', LinkedObjectKey: I, CommonName: 'custom' },
      ],
    });
    const refs = await api.get(`/api/f/${I}/accesslevels/${level}/references`, { token: root.tokens.ReadOnly });
    expect(refs.body.map((o: any) => o.Key)).toEqual([person]);
    // The create answered with the stored, canonical link (its name and Href filled in).
    const created = (await api.get(`/api/f/${I}/people/${person}`, { token: root.tokens.ReadOnly })).body;
    expect(created.ConcurrencyVersion).toBe(1);
    expect(created.ObjectLinks).toContainEqual(expect.objectContaining({ Relation: 'AccessLevel', LinkedObjectKey: level, CommonName: 'Linked', Href: `/api/f/${I}/accesslevels/${level}` }));
    const got = (await api.get(`/api/f/${I}/people/${person}`, { token: root.tokens.ReadOnly })).body;
    expect(got.ObjectLinks).toContainEqual(expect.objectContaining({ Relation: 'InInstance', CommonName: 'custom' }));
    const put = await api.put(`/api/f/${I}/people/${person}`, { token: root.tokens.Operator, body: { ...got, ObjectLinks: got.ObjectLinks.filter((l: any) => l.Relation !== 'AccessLevel') } });
    expect([200, 204]).toContain(put.status);
    expect((await api.get(`/api/f/${I}/accesslevels/${level}/references`, { token: root.tokens.ReadOnly })).body).toEqual([]);
  });

  it('refuses a bad relation link sent with a POST or PUT and writes nothing', async () => {
    const door = await make('doors', { $type: T('DoorInfo'), CommonName: 'Not a level' });
    const before = (await api.get(`/api/f/${I}/people`, { token: root.tokens.ReadOnly, query: { pageSize: 1000 } })).body.length;
    const bad = await api.post(`/api/f/${I}/people`, {
      token: root.tokens.Operator,
      body: { $type: T('PersonInfo'), CommonName: 'Half', ObjectLinks: [{ Relation: 'AccessLevel', LinkedObjectKey: door }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.Error).toBe('InvalidRelation');
    const missing = await api.post(`/api/f/${I}/people`, {
      token: root.tokens.Operator,
      body: { $type: T('PersonInfo'), CommonName: 'Half', ObjectLinks: [{ Relation: 'AccessLevel', LinkedObjectKey: 'ffffffffffffffffffffffff' }] },
    });
    expect(missing.status).toBe(404);
    expect((await api.get(`/api/f/${I}/people`, { token: root.tokens.ReadOnly, query: { pageSize: 1000 } })).body.length).toBe(before);
    const person = await make('people', { $type: T('PersonInfo'), CommonName: 'Whole' });
    const cur = (await api.get(`/api/f/${I}/people/${person}`, { token: root.tokens.ReadOnly })).body;
    const put = await api.put(`/api/f/${I}/people/${person}`, {
      token: root.tokens.Operator,
      body: { ...cur, GivenName: 'changed', ObjectLinks: [{ Relation: 'BadgeType', LinkedObjectKey: door }] },
    });
    expect(put.status).toBe(400);
    const after = (await api.get(`/api/f/${I}/people/${person}`, { token: root.tokens.ReadOnly })).body;
    expect(after.GivenName).toBeUndefined();
    expect(after.ConcurrencyVersion).toBe(cur.ConcurrencyVersion);
  });

  it('refuses a target outside the source instance, so no link shows another tenant', async () => {
    const level = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Parent level' });
    const kid = await make('people', { $type: T('PersonInfo'), CommonName: 'Kid' }, child.instance.key, root.tokens.Operator);
    const res = await connect('people', kid, 'AccessLevel', level, root.tokens.Operator, child.instance.key);
    expect(res.status).toBe(403);
    const asChild = await api.get(`/api/f/${child.instance.key}/people/${kid}`, { token: child.tokens.ReadOnly });
    expect(JSON.stringify(asChild.body)).not.toContain('Parent level');
    // Downwards is fine: the child's level lies below the person's instance, so every reader of
    // the person can see it.
    const childLevel = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Child level' }, child.instance.key, root.tokens.Operator);
    const parentPerson = await make('people', { $type: T('PersonInfo'), CommonName: 'Parent person' });
    expect((await connect('people', parentPerson, 'AccessLevel', childLevel)).status).toBe(200);
  });
});
