/**
 * Access decisions on DynamoDB Local: `POST accessdecisions` (evaluated and recorded), the card
 * read command of the built-in MercuryCommands app at the event sink, the troubleshooting calls,
 * scope, and the use count of a card under parallel reads.
 */
import { deserialize, serialize, type Document } from 'bson';
import { beforeAll, describe, expect, it } from 'vitest';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

const T = (name: string) => `Acme.${name}, Acme`;
const bson = (doc: Document): string => Buffer.from(serialize(doc)).toString('base64');

let t: TestDb;
let api: Awaited<ReturnType<typeof setupApi>>['api'];
let root: Tenant;
let child: Tenant;
let sibling: Tenant;
let I: string;
let next = 910_000;
const freshCard = () => next++;

async function make(coll: string, body: Record<string, unknown>, folder = I, token = root.tokens.Administrator): Promise<any> {
  const res = await api.post(`/api/f/${folder}/${coll}`, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const connect = async (coll: string, key: string, relation: string, relatedKey: string, folder = I, token = root.tokens.Administrator) => {
  const res = await api.post(`/api/f/${folder}/${coll}/${key}/connections/${relation}`, { token, query: { relatedKey, isOneToOne: false } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};

const decide = (body: Record<string, unknown>, folder = I, token = root.tokens.ReadOnly) => api.post(`/api/f/${folder}/accessdecisions`, { token, body });

/** A Wednesday, 10:00 in Toronto (UTC−5), and 18:00 the same day. */
const IN_HOURS = '2026-11-25T15:00:00Z';
const AFTER_HOURS = '2026-11-25T23:00:00Z';

let weekdays: any;
let reader: any;
let door: any;
let controller: any;
let level: any;

/** A person holding one card, with the level `level` (unless `levels` says otherwise). */
async function holder(card: Record<string, unknown>, levels: string[] = [level.Key], folder = I): Promise<any> {
  const p = await make('people', { $type: T('PersonInfo'), CommonName: `Holder ${card.EncodedCardNumber}`, CardAssignments: [card] }, folder);
  for (const l of levels) await connect('people', p.Key, 'AccessLevel', l, folder);
  return p;
}

/** The events related to an object, newest first (lastevent, then the event). */
async function lastEventOf(key: string, token = root.tokens.ReadOnly): Promise<any> {
  const last = await api.post(`/api/f/${I}/lastevent`, { token, body: [key] });
  expect(last.status).toBe(200);
  if (last.body.length === 0) return undefined;
  const e = await api.get(`/api/f/${I}/events/${last.body[0].EventKey}`, { token });
  expect(e.status).toBe(200);
  return e.body;
}

beforeAll(async () => {
  t = await createTestDb();
  let deps;
  ({ api, deps, root } = await setupApi(t));
  I = root.instance.key;
  child = await seedTenant(t, deps, { parent: root.instance });
  sibling = await seedTenant(t, deps);
  weekdays = await make('schedules', {
    $type: T('ScheduleInfo'),
    CommonName: 'Weekdays 9-17',
    ScheduleDurations: [{ DayMask: 62, StartingAt: '09:00:00', Duration: '08:00:00' }],
  });
  controller = await make('controllers', { $type: T('Lp1502Info'), CommonName: 'Panel', TimeZone: 'America/Toronto' });
  door = await make('doors', { $type: T('DoorInfo'), CommonName: 'Front door' });
  reader = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Front reader' });
  await connect('readers', reader.Key, 'Controller', controller.Key);
  await connect('readers', reader.Key, 'Door', door.Key);
  level = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Staff' });
  await connect('accesslevels', level.Key, 'Reader', reader.Key);
  await connect('accesslevels', level.Key, 'Schedule', weekdays.Key);
});

describe('POST accessdecisions', () => {
  it('grants a card within its level\'s schedule, in the controller\'s zone, and names every object', async () => {
    const n = freshCard();
    const p = await holder({ EncodedCardNumber: n, DisplayCardNumber: `D${n}`, PinCode: '4711' });
    const r = await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      Granted: true,
      Reason: 'Granted',
      TimeZone: 'America/Toronto',
      LocalTime: '2026-11-25T10:00:00-05:00',
      StrikeSeconds: 5,
      Reader: { Key: reader.Key, CommonName: 'Front reader', Href: reader.Href },
      Door: { Key: door.Key, CommonName: 'Front door' },
      Controller: { Key: controller.Key },
      Person: { Key: p.Key, Href: p.Href },
      Card: { Key: p.CardAssignments[0].Key, DisplayCardNumber: `D${n}` },
      AccessLevel: { Key: level.Key, CommonName: 'Staff' },
      Schedule: { Key: weekdays.Key, CommonName: 'Weekdays 9-17' },
    });
    expect(new Date(r.body.At).toISOString()).toBe(IN_HOURS.replace('Z', '.000Z'));
    expect(r.body.Checks.map((c: any) => c.Step)).toEqual(['ReaderMode', 'Card', 'CardState', 'Pin', 'AccessLevel', 'Schedule']);
    expect(r.text).not.toContain('4711');
    // Warm (the reader, its level and schedule kept): the card index and the holder, and beside the
    // card index the reader's lockdowns and set mode (doors issue: one BatchGetItem), nothing else.
    const warm = await commandsOf(t, () => decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS }));
    expect(warm.result.body.Reason).toBe('Granted');
    expect([...warm.commands].sort()).toEqual(['BatchGetItem', 'GetItem', 'Query']);
    // Outside the schedule: denied with its reason; a number nobody holds: CardNotFound.
    const late = await decide({ ReaderKey: reader.Key, EncodedCardNumber: String(n), At: AFTER_HOURS });
    expect(late.body).toMatchObject({ Granted: false, Reason: 'OutsideSchedule', StrikeSeconds: null, Schedule: null });
    const none = await decide({ ReaderKey: reader.Key, EncodedCardNumber: freshCard(), At: IN_HOURS });
    expect(none.body).toMatchObject({ Granted: false, Reason: 'CardNotFound', Person: null, Card: null });
  });

  it('tells a number held under another facility code from an unknown one, and keeps 64-bit numbers exact', async () => {
    const big = '9223372036854775001';
    await holder({ EncodedCardNumber: big, FacilityCode: 21 });
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: big, FacilityCode: 21, At: IN_HOURS })).body.Reason).toBe('Granted');
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: big, FacilityCode: 22, At: IN_HOURS })).body.Reason).toBe('InvalidFacilityCode');
    // One digit less than the card: another number.
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: '9223372036854775000', At: IN_HOURS })).body.Reason).toBe('CardNotFound');
  });

  it('applies a change to a person\'s levels and to a card to the very next decision', async () => {
    const n = freshCard();
    const p = await holder({ EncodedCardNumber: n });
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS })).body.Reason).toBe('Granted');
    const del = await api.del(`/api/f/${I}/people/${p.Key}/connections/AccessLevel/${level.Key}`, { token: root.tokens.Operator });
    expect(del.status).toBe(204);
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS })).body.Reason).toBe('NoAccessAtReader');
    await connect('people', p.Key, 'AccessLevel', level.Key);
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS })).body.Reason).toBe('Granted');
    const put = await api.put(`${p.Href}/cards/${p.CardAssignments[0].Key}`, { token: root.tokens.Operator, body: { EncodedCardNumber: n, IsDisabled: true } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS })).body.Reason).toBe('CardDisabled');
  });

  it('grants a ScheduledAccessLevel within its window only (ActiveOn included, ExpiresOn excluded)', async () => {
    const n = freshCard();
    const p = await holder({ EncodedCardNumber: n }, []);
    const meta = Buffer.from(serialize({ ActiveOn: new Date('2026-11-25T15:00:00Z'), ExpiresOn: new Date('2026-11-25T16:00:00Z') })).toString('base64');
    const put = await api.put(`/api/f/${I}/people/${p.Key}/scheduledaccesslevelbatch`, {
      token: root.tokens.Operator,
      body: [{ Relation: 'ScheduledAccessLevel', LinkedObjectKey: level.Key, MetaDataBson: meta }],
    });
    expect(put.status, JSON.stringify(put.body)).toBeLessThan(300);
    const at = (iso: string) => decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: iso }).then((r) => r.body.Reason);
    expect(await at('2026-11-25T14:59:59Z')).toBe('NoAccessAtReader');
    expect(await at('2026-11-25T15:00:00Z')).toBe('Granted');
    expect(await at('2026-11-25T15:59:59Z')).toBe('Granted');
    expect(await at('2026-11-25T16:00:00Z')).toBe('NoAccessAtReader');
  });

  it('applies a change to a schedule, a holiday of the instance and a reader within a second', async () => {
    const n = freshCard();
    const s = await make('schedules', { $type: T('ScheduleInfo'), CommonName: 'Mornings', ScheduleDurations: [{ DayMask: 62, StartingAt: '09:00:00', Duration: '02:00:00', HolidayExceptions: 0 }] });
    const r = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Morning reader' });
    const l = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Mornings', AccessLevelEntries: [{ ReaderId: r.Key, ScheduleId: s.Key }] });
    await holder({ EncodedCardNumber: n }, [l.Key]);
    // 10:00 UTC on Wednesday 2026-12-02 (no controller, no instance zone: UTC).
    const read = () => decide({ ReaderKey: r.Key, EncodedCardNumber: n, At: '2026-12-02T10:00:00Z' }).then((x) => x.body);
    const later = () => new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await read()).Reason).toBe('Granted');
    // A holiday of type 1 that day: the DayMask windows do not apply, and this duration has no exception for it.
    await make('holidays', { $type: T('HolidayInfo'), CommonName: 'Founders day', HolidayDays: [{ Date: '2026-12-02', NumberOfDays: 1, HolidayTypes: 1 }] });
    await later();
    expect((await read()).Reason).toBe('OutsideSchedule');
    const now = await api.get(s.Href, { token: root.tokens.ReadOnly });
    const edit = await api.put(s.Href, { token: root.tokens.Administrator, body: { ...now.body, ScheduleDurations: [{ DayMask: 62, StartingAt: '09:00:00', Duration: '02:00:00', HolidayExceptions: 1 }] } });
    expect(edit.status, JSON.stringify(edit.body)).toBeLessThan(300);
    await later();
    expect((await read()).Reason).toBe('Granted');
    const rNow = await api.get(r.Href, { token: root.tokens.ReadOnly });
    expect((await api.put(r.Href, { token: root.tokens.Administrator, body: { ...rNow.body, AccessMethod: 6 } })).status).toBeLessThan(300);
    await later();
    expect((await read()).Reason).toBe('ReaderLockedDown');
  });

  it('grants at the pairs of AccessLevelEntries', async () => {
    const always = await make('schedules', { $type: T('ScheduleInfo'), CommonName: 'Always', IsAlways: true });
    const side = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Side reader' });
    const entries = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Side', AccessLevelEntries: [{ ReaderId: side.Key, ScheduleId: always.Key }] });
    const n = freshCard();
    await holder({ EncodedCardNumber: n }, [entries.Key]);
    const r = await decide({ ReaderKey: side.Key, EncodedCardNumber: n, At: AFTER_HOURS });
    expect(r.body).toMatchObject({ Granted: true, AccessLevel: { Key: entries.Key }, Schedule: { Key: always.Key }, TimeZone: 'UTC' });
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS })).body.Reason).toBe('NoAccessAtReader');
  });

  it('checks AccessLevelEntries on write and fills their names on read', async () => {
    const sibReader = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Theirs' }, sibling.instance.key, sibling.tokens.Administrator);
    for (const [entry, field] of [
      [{ ReaderId: 'nope', ScheduleId: weekdays.Key }, 'AccessLevelEntries[0].ReaderId'],
      [{ ReaderId: sibReader.Key, ScheduleId: weekdays.Key }, 'AccessLevelEntries[0].ReaderId'],
      [{ ReaderId: reader.Key, ScheduleId: reader.Key }, 'AccessLevelEntries[0].ScheduleId'],
      [{ ReaderId: reader.Key, ScheduleId: weekdays.Key, Extra: 1 }, 'AccessLevelEntries[0].Extra'],
    ] as const) {
      const r = await api.post(`/api/f/${I}/accesslevels`, { token: root.tokens.Administrator, body: { $type: T('AccessLevelInfo'), CommonName: `Bad ${field}`, AccessLevelEntries: [entry] } });
      expect(r.status, JSON.stringify(entry)).toBe(400);
      expect(r.body.Error).toBe('ValidationFailed');
      expect(r.body.Message).toContain(field);
    }
    const named = await make('accesslevels', {
      $type: T('AccessLevelInfo'),
      CommonName: 'Named',
      AccessLevelEntries: [{ ReaderId: reader.Key, ScheduleId: weekdays.Key, ReaderCommonName: 'sent, not kept' }],
    });
    expect(named.AccessLevelEntries).toEqual([{ ReaderId: reader.Key, ScheduleId: weekdays.Key, ReaderCommonName: 'Front reader', ScheduleCommonName: 'Weekdays 9-17' }]);
    const list = await api.get(`/api/f/${I}/accesslevels`, { token: root.tokens.ReadOnly, query: { pageSize: 1000 } });
    expect(list.body.find((l: any) => l.Key === named.Key).AccessLevelEntries[0].ScheduleCommonName).toBe('Weekdays 9-17');
  });

  it('refuses a bad body with 400 and records nothing', async () => {
    const n = freshCard();
    await holder({ EncodedCardNumber: n });
    const before = await lastEventOf(reader.Key);
    for (const body of [
      { ReaderKey: reader.Key, EncodedCardNumber: n, Extra: 1, Record: true },
      { ReaderKey: reader.Key, EncodedCardNumber: 12.5, Record: true },
      { ReaderKey: reader.Key, EncodedCardNumber: n, At: '2026-11-25T10:00:00', Record: true },
      { ReaderKey: reader.Key, EncodedCardNumber: n, Record: 'yes' },
      { ReaderKey: 'front', EncodedCardNumber: n, Record: true },
      { ReaderKey: reader.Key, Record: true },
    ]) {
      const r = await decide(body, I, root.tokens.Operator);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.Error).toBe('ValidationFailed');
    }
    expect((await lastEventOf(reader.Key))?.Key).toBe(before?.Key);
  });

  it('records a read for an Operator: publishes Access Granted with its BSON data, and refuses ReadOnly', async () => {
    const n = freshCard();
    const p = await holder({ EncodedCardNumber: n, DisplayCardNumber: 'Jane 1', PinCode: '9876' });
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, Record: true }, I, root.tokens.ReadOnly)).status).toBe(403);
    const r = await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, FacilityCode: null, At: IN_HOURS, Record: true }, I, root.tokens.Operator);
    expect(r.status).toBe(200);
    const e = await lastEventOf(p.Key);
    expect(e).toMatchObject({
      AppKey: '000000000000000000000021',
      EventTypeKey: '000000000000000000000022',
      EventTypeMoniker: { Namespace: 'MercuryService', Nickname: 'access-granted' },
      MessageShort: 'Access Granted',
      InFolderKey: I,
      Priority: 10,
    });
    expect(new Date(e.OccurredOn).toISOString()).toBe(new Date(IN_HOURS).toISOString());
    expect(e.MessageLong).toContain('Front reader');
    expect(e.ObjectLinks.map((l: any) => l.Relation).sort()).toEqual(['Controller', 'Door', 'Person', 'Reader']);
    const data = deserialize(Buffer.from(e.EventDataBsonBase64, 'base64'), { useBigInt64: true });
    expect(data).toMatchObject({
      Granted: true,
      Reason: 'Granted',
      Reader: { Key: reader.Key, CommonName: 'Front reader' },
      Person: { Key: p.Key },
      Door: { Key: door.Key, CommonName: 'Front door' },
      AccessLevel: { Key: level.Key, CommonName: 'Staff' },
      Schedule: { Key: weekdays.Key },
      EncodedCardNumber: BigInt(n),
      DisplayedCardNumber: 'Jane 1',
      MessageTime: '2026-11-25T10:00:00-05:00',
    });
    expect(data.MessageTimeUTC).toEqual(new Date(IN_HOURS));
    expect(JSON.stringify(e)).not.toContain('9876');
    // A denial is Access Denied, of a higher priority.
    await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: AFTER_HOURS, Record: true }, I, root.tokens.Operator);
    expect(await lastEventOf(reader.Key)).toMatchObject({ MessageShort: 'Access Denied', EventTypeKey: '000000000000000000000023', Priority: 20 });
  });

  it('grants exactly 5 of 20 parallel recorded reads of a card with 5 uses', async () => {
    const n = freshCard();
    const p = await holder({ EncodedCardNumber: n, OriginalUseCount: 5 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS, Record: true }, I, root.tokens.Operator)),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.body.Granted).length).toBe(5);
    expect(results.filter((r) => r.body.Reason === 'UseLimitReached').length).toBe(15);
    const after = await api.get(p.Href, { token: root.tokens.ReadOnly });
    expect(after.body.CardAssignments[0]).toMatchObject({ CurrentUseCount: 5, LastUsed: new Date(IN_HOURS).toISOString() });
    // Evaluating does not count.
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS })).body.Reason).toBe('UseLimitReached');
  });
});

describe('scope', () => {
  it('answers 403 for a folder outside the caller\'s scope and 404 for a reader not in the folder', async () => {
    const n = freshCard();
    await holder({ EncodedCardNumber: n });
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n }, I, sibling.tokens.Administrator)).status).toBe(403);
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n }, sibling.instance.key, sibling.tokens.Administrator)).status).toBe(404);
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n }, child.instance.key, child.tokens.Administrator)).status).toBe(404);
    expect((await decide({ ReaderKey: 'aaaaaaaaaaaaaaaaaaaaaaaa', EncodedCardNumber: n })).status).toBe(404);
    expect((await api.get(`/api/f/${I}/readers/${reader.Key}/whocanpass`, { token: sibling.tokens.ReadOnly })).status).toBe(403);
  });

  it('never finds the card of another tenant or of an instance below; the nearest instance\'s holder wins', async () => {
    const n = freshCard();
    // The sibling tenant and the child instance hold the number; the root does not.
    const sibLevel = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Sib' }, sibling.instance.key, sibling.tokens.Administrator);
    await make('people', { $type: T('PersonInfo'), CommonName: 'Sib', CardAssignments: [{ EncodedCardNumber: n }] }, sibling.instance.key, sibling.tokens.Administrator);
    const childPerson = await make('people', { $type: T('PersonInfo'), CommonName: 'Kid', CardAssignments: [{ EncodedCardNumber: n }] }, child.instance.key, child.tokens.Administrator);
    expect(sibLevel.Key).toBeDefined();
    expect((await decide({ ReaderKey: reader.Key, EncodedCardNumber: n, At: IN_HOURS })).body.Reason).toBe('CardNotFound');
    // A reader of the child instance finds the child's holder before the root's.
    const childReader = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Kid reader' }, child.instance.key, child.tokens.Administrator);
    await holder({ EncodedCardNumber: n });
    const r = await decide({ ReaderKey: childReader.Key, EncodedCardNumber: n, At: IN_HOURS }, child.instance.key, child.tokens.ReadOnly);
    expect(r.body).toMatchObject({ Reason: 'NoAccessAtReader', Person: { Key: childPerson.Key } });
    // The root's person is found from the child's reader when the child holds no such card.
    const m = freshCard();
    const rootPerson = await holder({ EncodedCardNumber: m });
    const up = await decide({ ReaderKey: childReader.Key, EncodedCardNumber: m, At: IN_HOURS }, child.instance.key, child.tokens.ReadOnly);
    expect(up.body).toMatchObject({ Reason: 'NoAccessAtReader', Person: { Key: rootPerson.Key } });
  });
});

describe('the card read command at the event sink', () => {
  const command = (related: unknown[], data: Document | null, occurredOn = IN_HOURS) => ({
    $type: 'EventMessagePosting',
    OccurredOn: occurredOn,
    AppKey: 'MercuryCommands',
    EventTypeMoniker: { Namespace: 'MercuryServiceCommands', Nickname: 'mercury:command-simulateCardRead' },
    RelatedObjects: related,
    EventDataBsonBase64: data ? bson(data) : null,
  });
  const sink = (body: unknown, token = root.tokens.Operator) => api.post(`/api/f/${I}/eventmessagesink`, { token, body });
  const readerLink = () => ({ Relation: 'Reader', LinkedObjectKey: reader.Key, CommonName: 'Front reader', Href: reader.Href });

  it('stores the command (without its PIN) and records the read at its OccurredOn', async () => {
    const n = freshCard();
    const p = await holder({ EncodedCardNumber: n, PinCode: '2468' });
    const posted = await sink(command([readerLink(), { Relation: 'CardFormat', LinkedObjectKey: 'bbbbbbbbbbbbbbbbbbbbbbbb' }], { EncodedCardNumber: n, PinCode: '2468', Reason: 'test' }));
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    expect(posted.body.AppKey).toBe('000000000000000000000011');
    expect(deserialize(Buffer.from(posted.body.EventDataBsonBase64, 'base64'))).toEqual({ EncodedCardNumber: n, Reason: 'test' });
    const e = await lastEventOf(p.Key);
    expect(e).toMatchObject({ MessageShort: 'Access Granted', AppKey: '000000000000000000000021' });
    expect(e.ObjectLinks).toContainEqual(expect.objectContaining({ Relation: 'Command', LinkedObjectKey: posted.body.Key }));
    expect(JSON.stringify(e)).not.toContain('2468');
  });

  it('answers 400 InvalidCommand without a reader and InvalidEventData without a card number, writing nothing', async () => {
    const before = await lastEventOf(reader.Key);
    const noReader = await sink(command([], { EncodedCardNumber: 1 }));
    expect(noReader.status).toBe(400);
    expect(noReader.body.Error).toBe('InvalidCommand');
    const noCard = await sink(command([readerLink()], { FacilityCode: 3 }));
    expect(noCard.status).toBe(400);
    expect(noCard.body.Error).toBe('InvalidEventData');
    expect((await lastEventOf(reader.Key))?.Key).toBe(before?.Key);
  });

  it('leaves an instance\'s own MercuryCommands app alone', async () => {
    const own = await make('apps', { $type: 'AppInfo', CommonName: 'Own commands', Monikers: [{ Namespace: 'Vendor', Nickname: 'MercuryCommands' }] }, child.instance.key, child.tokens.Administrator);
    const type = await api.put(`${own.Href}/eventtypes`, {
      token: child.tokens.Administrator,
      body: { $type: 'EventTypeInfo', CommonName: 'Read', Monikers: [{ Namespace: 'MercuryServiceCommands', Nickname: 'mercury:command-simulateCardRead' }] },
    });
    expect(type.status, JSON.stringify(type.body)).toBe(201);
    const childReader = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Own reader' }, child.instance.key, child.tokens.Administrator);
    const posted = await api.post(`/api/f/${child.instance.key}/eventmessagesink`, {
      token: child.tokens.Operator,
      body: command([{ Relation: 'Reader', LinkedObjectKey: childReader.Key }], { EncodedCardNumber: 5 }),
    });
    expect(posted.status).toBe(201);
    expect(posted.body.AppKey).toBe(own.Key);
    const last = await api.post(`/api/f/${child.instance.key}/lastevent`, { token: child.tokens.ReadOnly, body: [childReader.Key] });
    expect(last.body.map((s: any) => s.EventKey)).toEqual([posted.body.Key]);
  });
});

describe('troubleshooting', () => {
  it('lists who can pass a reader, page by page, and the readers a person can pass', async () => {
    const lobby = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Lobby reader' });
    const lobbyLevel = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: 'Lobby' });
    await connect('accesslevels', lobbyLevel.Key, 'Reader', lobby.Key);
    await connect('accesslevels', lobbyLevel.Key, 'Schedule', weekdays.Key);
    const people = [];
    for (let i = 0; i < 5; i++) people.push(await holder({ EncodedCardNumber: freshCard(), DisplayCardNumber: `L${i}` }, [lobbyLevel.Key]));
    // A disabled card does not pass.
    await holder({ EncodedCardNumber: freshCard(), IsDisabled: true }, [lobbyLevel.Key]);
    const page = (n: number, at = IN_HOURS) => api.get(`/api/f/${I}/readers/${lobby.Key}/whocanpass`, { token: root.tokens.ReadOnly, query: { at, page: n, pageSize: 3 } });
    const [p0, p1, p2] = [await page(0), await page(1), await page(2)];
    expect(p0.status).toBe(200);
    const keys = [...p0.body, ...p1.body, ...p2.body].map((r: any) => r.Person.Key);
    expect(keys.sort()).toEqual(people.map((p) => p.Key).sort());
    expect(p0.body[0]).toMatchObject({ AccessLevel: { Key: lobbyLevel.Key }, Schedule: { Key: weekdays.Key }, Card: { DisplayCardNumber: expect.stringMatching(/^L/) } });
    expect((await page(0, AFTER_HOURS)).body).toEqual([]);
    const readers = await api.get(`${people[0].Href}/accessiblereaders`, { token: root.tokens.ReadOnly, query: { at: IN_HOURS } });
    expect(readers.status).toBe(200);
    expect(readers.body).toEqual([{ Reader: expect.objectContaining({ Key: lobby.Key }), Door: null, AccessLevel: expect.objectContaining({ Key: lobbyLevel.Key }), Schedule: expect.objectContaining({ Key: weekdays.Key }) }]);
    expect((await api.get(`${people[0].Href}/accessiblereaders`, { token: sibling.tokens.ReadOnly })).status).toBe(403);
  });
});
