/**
 * Alarm definitions on the built-in event types (builtin-apps.ts): "Access Denied" of the
 * `MercuryService` app is linked from an alarm definition of a child instance like any event type,
 * and a recorded denied read in that instance raises an alarm (an event that requires
 * acknowledgement); the alarm of a sibling instance does not fire there. On DynamoDB Local.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

const T = (name: string) => `Acme.${name}, Acme`;

/** The fixed keys of builtin-apps.ts. */
const SERVICE_APP = '000000000000000000000021';
const GRANTED = '000000000000000000000022';
const DENIED = '000000000000000000000023';
const LOCKDOWN_STARTED = '000000000000000000000027';

let t: TestDb;
let api: Awaited<ReturnType<typeof setupApi>>['api'];
let root: Tenant;
let child: Tenant;
let sibling: Tenant;
let next = 970_000;

const IN_HOURS = '2026-11-25T15:00:00Z';

async function make(tenant: Tenant, coll: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(`/api/f/${tenant.instance.key}/${coll}`, { token: tenant.tokens.Administrator, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function connect(tenant: Tenant, coll: string, key: string, relation: string, relatedKey: string): Promise<void> {
  const res = await api.post(`/api/f/${tenant.instance.key}/${coll}/${key}/connections/${relation}`, {
    token: tenant.tokens.Administrator,
    query: { relatedKey, isOneToOne: false },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** A reader of `tenant` with an always-open level, and a card holder of it. */
async function site(tenant: Tenant): Promise<{ reader: any; card: number }> {
  const always = await make(tenant, 'schedules', { $type: T('ScheduleInfo'), CommonName: 'Always', IsAlways: true });
  const reader = await make(tenant, 'readers', { $type: T('VendorReaderInfo'), CommonName: 'Gate' });
  const level = await make(tenant, 'accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'All' });
  await connect(tenant, 'accesslevels', level.Key, 'Reader', reader.Key);
  await connect(tenant, 'accesslevels', level.Key, 'Schedule', always.Key);
  const card = next++;
  const p = await make(tenant, 'people', { $type: T('PersonInfo'), CommonName: `Holder ${card}`, CardAssignments: [{ EncodedCardNumber: card }] });
  await connect(tenant, 'people', p.Key, 'AccessLevel', level.Key);
  return { reader, card };
}

/** Records a card read and answers its result event. */
async function read(tenant: Tenant, reader: any, card: number): Promise<any> {
  const r = await api.post(`/api/f/${tenant.instance.key}/accessdecisions`, {
    token: tenant.tokens.Operator,
    body: { ReaderKey: reader.Key, EncodedCardNumber: card, At: IN_HOURS, Record: true },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const last = await api.post(`/api/f/${tenant.instance.key}/lastevent`, { token: tenant.tokens.ReadOnly, body: [reader.Key] });
  expect(last.status).toBe(200);
  const e = await api.get(`/api/f/${tenant.instance.key}/events/${last.body[0].EventKey}`, { token: tenant.tokens.ReadOnly });
  expect(e.status).toBe(200);
  return e.body;
}

const typeHref = (key: string) => `/api/f/${root.instance.key}/apps/${SERVICE_APP}/eventtypes/${key}`;

/** An alarm definition of `tenant` holding the built-in event types `keys`. */
async function alarmOn(tenant: Tenant, ...keys: string[]): Promise<any> {
  const a = await make(tenant, 'alarmdefinitions', { $type: T('AlarmDefinitionInfo'), CommonName: `Alarm ${next++}` });
  for (const k of keys) {
    const put = await api.put(`${a.Href}/collections/eventtypes`, { token: tenant.tokens.Operator, body: JSON.stringify(typeHref(k)) });
    expect(put.status, JSON.stringify(put.body)).toBe(204);
  }
  return a;
}

const alarmsOf = async (tenant: Tenant): Promise<string[]> => {
  const r = await api.get(`/api/f/${tenant.instance.key}/events`, { token: tenant.tokens.ReadOnly, query: { requiresAck: true } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.map((e: any) => e.Key);
};

beforeAll(async () => {
  t = await createTestDb();
  let deps;
  ({ api, deps, root } = await setupApi(t));
  child = await seedTenant(t, deps, { parent: root.instance });
  sibling = await seedTenant(t, deps, { parent: root.instance });
});

describe('alarm definitions on the built-in event types', () => {
  it('raises an alarm on a denied read in the alarm\'s instance only, and it is acknowledged as any alarm', async () => {
    const here = await site(child);
    const there = await site(sibling);
    // Before any alarm definition: a denied read is an ordinary event.
    expect((await read(child, here.reader, next++)).RequiresAcknowledgement).toBe(false);

    const alarm = await alarmOn(child, DENIED, LOCKDOWN_STARTED);
    // The sibling's alarm holds "Access Granted": it must not fire in the child.
    await alarmOn(sibling, GRANTED);

    const denied = await read(child, here.reader, next++);
    expect(denied).toMatchObject({ MessageShort: 'Access Denied', EventTypeKey: DENIED, RequiresAcknowledgement: true });
    const granted = await read(child, here.reader, here.card);
    expect(granted).toMatchObject({ MessageShort: 'Access Granted', RequiresAcknowledgement: false });
    // The child's alarm on Access Denied does not fire in the sibling; the sibling's on Granted does.
    expect((await read(sibling, there.reader, next++)).RequiresAcknowledgement).toBe(false);
    const siblingGranted = await read(sibling, there.reader, there.card);
    expect(siblingGranted.RequiresAcknowledgement).toBe(true);

    // Listed where alarms are listed, and acknowledged as any alarm.
    expect(await alarmsOf(child)).toEqual([denied.Key]);
    const ack = await api.post(`/api/f/${child.instance.key}/events/${denied.Key}/acknowledgements`, { token: child.tokens.Operator, body: { Comment: 'seen' } });
    expect(ack.status, JSON.stringify(ack.body)).toBe(201);
    expect(await alarmsOf(child)).toEqual([]);
    expect((await api.post(`/api/f/${child.instance.key}/events/${granted.Key}/acknowledgements`, { token: child.tokens.Operator, body: {} })).status).toBe(409);

    // The alarm lists its built-in members; removing one stops the alarm.
    const members = await api.get(`${alarm.Href}/collections/eventtypes`, { token: child.tokens.ReadOnly });
    expect(members.status).toBe(200);
    expect(members.body.map((m: any) => [m.Key, m.CommonName])).toEqual([
      [DENIED, 'Access Denied'],
      [LOCKDOWN_STARTED, 'Lockdown Started'],
    ]);
    // Shown in the caller's instance (each installation's root holds them): the Href answers the caller.
    const own = `/api/f/${child.instance.key}/apps/${SERVICE_APP}/eventtypes/${DENIED}`;
    expect(members.body[0].Href).toBe(own);
    const got = await api.get(own, { token: child.tokens.ReadOnly });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body).toEqual(members.body[0]);
    expect((await api.del(`${alarm.Href}/collections/eventtypes/${DENIED}`, { token: child.tokens.Operator })).status).toBe(204);
    expect((await read(child, here.reader, next++)).RequiresAcknowledgement).toBe(false);
  });

  it('raises alarms on the door events and on postings of a built-in type, in the alarm\'s instance chain', async () => {
    const LOCKDOWN_ENDED = '000000000000000000000026';
    const wing = await make(child, 'folders', { $type: T('FolderInfo'), CommonName: `Wing ${next++}` });
    const ended = async (folder: any): Promise<any> => {
      expect((await api.post(`/api/f/${folder.Key}/lockdown`, { token: child.tokens.Operator, body: { Reason: 'Drill' } })).status).toBe(201);
      expect((await api.del(`/api/f/${folder.Key}/lockdown`, { token: child.tokens.Administrator })).status).toBe(200);
      const last = await api.post(`/api/f/${child.instance.key}/lastevent`, { token: child.tokens.ReadOnly, body: [folder.Key] });
      return (await api.get(`/api/f/${child.instance.key}/events/${last.body[0].EventKey}`, { token: child.tokens.ReadOnly })).body;
    };
    expect(await ended(wing)).toMatchObject({ MessageShort: 'Lockdown Ended', RequiresAcknowledgement: false });
    // An alarm definition of the root instance holds Lockdown Ended: it fires in the child below it.
    await alarmOn(root, LOCKDOWN_ENDED);
    expect(await ended(wing)).toMatchObject({ MessageShort: 'Lockdown Ended', EventTypeKey: LOCKDOWN_ENDED, RequiresAcknowledgement: true });

    // A posting of "Access Denied" itself (an edge controller's own decision) is held to the same alarms.
    const alarm = await alarmOn(sibling, DENIED);
    const post = (tenant: Tenant) =>
      api.post(`/api/f/${tenant.instance.key}/eventmessagesink`, {
        token: tenant.tokens.Operator,
        body: { $type: 'EventMessagePosting', OccurredOn: IN_HOURS, AppKey: 'MercuryService', EventTypeMoniker: { Namespace: 'MercuryService', Nickname: 'access-denied' } },
      });
    const inSibling = await post(sibling);
    expect(inSibling.status, JSON.stringify(inSibling.body)).toBe(201);
    expect(inSibling.body).toMatchObject({ EventTypeKey: DENIED, RequiresAcknowledgement: true });
    expect((await api.del(`${alarm.Href}/collections/eventtypes/${DENIED}`, { token: sibling.tokens.Operator })).status).toBe(204);
    expect((await post(sibling)).body.RequiresAcknowledgement).toBe(false);
  });

  it('lists the built-in types under their app, finds them by moniker, and refuses to change them (405)', async () => {
    const app = `/api/f/${child.instance.key}/apps/${SERVICE_APP}`;
    const list = await api.get(`${app}/eventtypes`, { token: child.tokens.ReadOnly });
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.map((x: any) => x.CommonName)).toContain('Access Denied');
    const found = await api.get(`${app}/eventtypes`, { token: child.tokens.ReadOnly, query: { namespace: 'MercuryService', nickname: 'access-denied' } });
    expect([found.status, found.body.Key]).toEqual([200, DENIED]);
    const add = await api.put(`${app}/eventtypes`, { token: child.tokens.Administrator, body: { $type: 'EventTypeInfo', CommonName: 'Mine' } });
    expect([add.status, add.body.Error]).toEqual([405, 'MethodNotAllowed']);
    expect((await api.del(`${app}/eventtypes/${DENIED}`, { token: child.tokens.Administrator })).status).toBe(405);
    // A folder outside the caller's scope stays 403.
    expect((await api.get(`/api/f/${sibling.instance.key}/apps/${SERVICE_APP}/eventtypes/${DENIED}`, { token: child.tokens.ReadOnly })).status).toBe(403);
  });

  it('refuses a built-in type key under another app (404) and ReadOnly (403)', async () => {
    const a = await make(child, 'alarmdefinitions', { $type: T('AlarmDefinitionInfo'), CommonName: `Alarm ${next++}` });
    const wrongApp = await api.put(`${a.Href}/collections/eventtypes`, {
      token: child.tokens.Operator,
      body: JSON.stringify(`/api/f/${root.instance.key}/apps/000000000000000000000011/eventtypes/${DENIED}`),
    });
    expect([wrongApp.status, wrongApp.body.Error]).toEqual([404, 'EventTypeNotFound']);
    const ro = await api.put(`${a.Href}/collections/eventtypes`, { token: child.tokens.ReadOnly, body: JSON.stringify(typeHref(DENIED)) });
    expect(ro.status).toBe(403);
  });
});
