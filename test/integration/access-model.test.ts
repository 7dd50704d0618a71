/**
 * The access model as written (issue 36): schedules, holidays, time zones, reader modes and the
 * card fields a decision reads are validated on write (400 ValidationFailed naming the field);
 * a card's PIN is never in an answer; its use count and last use are the server's.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { getObject } from '#shared/db/objects-repo.ts';
import { createObject } from '#shared/db/object-writes.ts';
import { cardClaim } from '#shared/model/claims.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi, uniqueName } from '../support/tokens.ts';

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let root: string;
let op: string;
let admin: string;
let next = 910_000;
const freshCard = () => next++;

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  root = env.root.instance.key;
  op = env.root.tokens.Operator;
  admin = env.root.tokens.Administrator;
});

const post = (collection: string, body: Record<string, unknown>, token = op) => env.api.post(`/api/f/${root}/${collection}`, { token, body });

/** Expects a 400 ValidationFailed whose message names `field`. */
function expectInvalid(res: { status: number; body: any }, field: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.Error).toBe('ValidationFailed');
  expect(res.body.Message).toContain(field);
}

const WEEKDAYS = { DayMask: 62, StartingAt: '09:00:00', Duration: '08:00:00' };

describe('schedules', () => {
  it('accepts ScheduleDurations as the original service writes them, .NET day spans included, and keeps them as sent', async () => {
    const durations = [WEEKDAYS, { DayMask: 65, StartingAt: '22:00:00', Duration: '1.00:00:00', HolidayExceptions: 3, Holiday: null }];
    const r = await post('schedules', { $type: 'ScheduleInfo', CommonName: uniqueName('Office'), IsAlways: false, ScheduleDurations: durations });
    expect(r.status).toBe(201);
    expect(r.body.ScheduleDurations).toEqual(durations);
  });

  it.each([
    ['DayMask', { ...WEEKDAYS, DayMask: 128 }],
    ['DayMask', { StartingAt: '09:00:00', Duration: '08:00:00' }],
    ['StartingAt', { ...WEEKDAYS, StartingAt: '24:00:00' }],
    ['StartingAt', { ...WEEKDAYS, StartingAt: '9am' }],
    ['Duration', { ...WEEKDAYS, Duration: '00:00:00' }],
    ['Duration', { ...WEEKDAYS, Duration: '1.00:00:01' }],
    ['HolidayExceptions', { ...WEEKDAYS, HolidayExceptions: 256 }],
  ])('rejects a ScheduleDurationItem with a bad %s', async (field, item) => {
    const r = await post('schedules', { $type: 'ScheduleInfo', CommonName: uniqueName('Bad'), ScheduleDurations: [WEEKDAYS, item] });
    expectInvalid(r, `ScheduleDurations[1].${field}`);
  });

  it('rejects an IsAlways that is not a boolean', async () => {
    expectInvalid(await post('schedules', { $type: 'ScheduleInfo', CommonName: uniqueName('Bad'), IsAlways: 'yes' }), 'IsAlways');
  });
});

describe('holidays', () => {
  it('accepts HolidayDays and rejects a date that does not exist, a length or types out of range', async () => {
    const days = [{ Date: '2026-12-25', NumberOfDays: 2, HolidayTypes: 1 }, { Date: '2027-01-01', HolidayTypes: 255 }];
    const ok = await post('holidays', { $type: 'HolidayInfo', CommonName: uniqueName('Xmas'), HolidayDays: days });
    expect(ok.status).toBe(201);
    expect(ok.body.HolidayDays).toEqual(days);
    const bad = (day: Record<string, unknown>) => post('holidays', { $type: 'HolidayInfo', CommonName: uniqueName('Bad'), HolidayDays: [day] });
    expectInvalid(await bad({ Date: '2026-02-30', HolidayTypes: 1 }), 'HolidayDays[0].Date');
    expectInvalid(await bad({ Date: '2026-12-25T00:00:00Z', HolidayTypes: 1 }), 'HolidayDays[0].Date');
    expectInvalid(await bad({ Date: '2026-12-25', NumberOfDays: 0, HolidayTypes: 1 }), 'HolidayDays[0].NumberOfDays');
    expectInvalid(await bad({ Date: '2026-12-25', NumberOfDays: 367, HolidayTypes: 1 }), 'HolidayDays[0].NumberOfDays');
    expectInvalid(await bad({ Date: '2026-12-25', HolidayTypes: 0 }), 'HolidayDays[0].HolidayTypes');
    expectInvalid(await bad({ Date: '2026-12-25' }), 'HolidayDays[0].HolidayTypes');
  });
});

describe('time zones', () => {
  it('accepts an IANA zone on a controller of any type and rejects what Intl does not know', async () => {
    for (const $type of ['Lp1502Info', 'Vendor.Mercury.MercuryControllerInfo, Vendor.Mercury']) {
      const ok = await post('controllers', { $type, CommonName: uniqueName('Panel'), TimeZone: 'America/Toronto' });
      expect(ok.status).toBe(201);
      expect(ok.body.TimeZone).toBe('America/Toronto');
      for (const zone of ['EST5EDT,M3.2.0/2,M11.1.0/2', 'Mars/Olympus', '+01:00', 5]) {
        expectInvalid(await post('controllers', { $type, CommonName: uniqueName('Panel'), TimeZone: zone }), 'TimeZone');
      }
    }
  });

  it('accepts an IANA zone on an instance and rejects another', async () => {
    const ok = await post('instances', { $type: 'InstanceInfo', CommonName: uniqueName('Branch'), TimeZone: 'Australia/Lord_Howe' }, admin);
    expect(ok.status).toBe(201);
    expect(ok.body.TimeZone).toBe('Australia/Lord_Howe');
    expectInvalid(await post('instances', { $type: 'InstanceInfo', CommonName: uniqueName('Branch'), TimeZone: 'Somewhere/Else' }, admin), 'TimeZone');
  });
});

describe('readers', () => {
  it('accepts the access methods 0, 2, 5 and 6 and non-negative strike times on a reader of any type', async () => {
    for (const $type of ['VendorReaderInfo', 'Vendor.Mercury.MercuryReaderInfo, Vendor.Mercury']) {
      for (const AccessMethod of [0, 2, 5, 6]) {
        const r = await post('readers', { $type, CommonName: uniqueName('Door'), AccessMethod, NormalGrantAccessTime: 0, ExtendedGrantAccessTime: 30 });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        expect(r.body.AccessMethod).toBe(AccessMethod);
      }
    }
  });

  it.each([
    ['AccessMethod', 1],
    ['AccessMethod', 3],
    ['AccessMethod', 7],
    ['AccessMethod', '2'],
    ['NormalGrantAccessTime', -1],
    ['NormalGrantAccessTime', 2.5],
    ['ExtendedGrantAccessTime', 'long'],
  ])('rejects a reader whose %s is %j', async (field, value) => {
    for (const $type of ['VendorReaderInfo', 'Vendor.Mercury.MercuryReaderInfo, Vendor.Mercury']) {
      expectInvalid(await post('readers', { $type, CommonName: uniqueName('Door'), [field]: value }), field);
    }
  });
});

const card = (n: number, extra: Record<string, unknown> = {}) => ({ EncodedCardNumber: n, DisplayCardNumber: String(n), ...extra });
const person = (cards: unknown[]) => ({ $type: 'PersonInfo', CommonName: uniqueName('Jane'), GivenName: 'Jane', Surname: 'Doe', CardAssignments: cards });

describe('cards', () => {
  it.each([
    ['PinCode', '123'],
    ['PinCode', '123456789'],
    ['PinCode', '12a4'],
    ['PinCode', 1234],
    ['OriginalUseCount', -1],
    ['OriginalUseCount', 1.5],
    ['CurrentUseCount', -1],
    ['IsDisabled', 'no'],
    ['ExtendedAccess', 1],
    ['LockdownExempt', 'true'],
    ['LastUsed', 'yesterday'],
  ])('rejects a card whose %s is %j, through the person and through its card calls', async (field, value) => {
    expectInvalid(await post('people', person([card(freshCard(), { [field]: value })])), `CardAssignments[0].${field}`);
    const p = await post('people', person([]));
    expect(p.status).toBe(201);
    expectInvalid(await env.api.post(`${p.body.Href}/cards`, { token: op, body: card(freshCard(), { [field]: value }) }), field);
  });

  it('never answers a PIN, keeps it across writes that do not send it, and removes it on null', async () => {
    const n = freshCard();
    const created = await post('people', person([card(n, { PinCode: '4321', IsDisabled: false, ExtendedAccess: true, LockdownExempt: true, OriginalUseCount: 5 })]));
    expect(created.status).toBe(201);
    const href = created.body.Href as string;
    const stored = async () => (await getObject(t.db, created.body.Key, true))!.doc.CardAssignments as Array<Record<string, unknown>>;
    expect((await stored())[0]!.PinCode).toBe('4321');

    const got = await env.api.get(href, { token: op });
    const cards = await env.api.get(`${href}/cards`, { token: op });
    const listed = await env.api.get(`/api/f/${root}/people`, { token: op, query: { pageSize: 1000 } });
    const found = await env.api.post(`/api/f/${root}/search`, { token: op, body: { _t: 'PersonInfo', 'CardAssignments.EncodedCardNumber': n } });
    const oracle = await env.api.post(`/api/f/${root}/search`, { token: op, body: { _t: 'PersonInfo', 'CardAssignments.PinCode': '4321' } });
    const bycard = await env.api.get(`/api/f/${root}/people/bycard`, { token: op, query: { cardNumber: n } });
    for (const r of [created, got, cards, listed, found, bycard]) {
      expect(r.status).toBe(200 + (r === created ? 1 : 0));
      expect(JSON.stringify(r.body)).not.toContain('PinCode');
      expect(JSON.stringify(r.body)).not.toContain('4321');
    }
    expect(found.body).toHaveLength(1);
    expect(got.body.CardAssignments[0]).toMatchObject({ IsDisabled: false, ExtendedAccess: true, LockdownExempt: true, OriginalUseCount: 5 });
    // A search cannot be used to guess a PIN: it matches what an answer shows.
    expect(oracle.status).toBe(200);
    expect(oracle.body).toEqual([]);

    // Writing back what was read keeps the PIN: nothing changed, nothing written (204).
    const back = await env.api.put(href, { token: op, body: got.body });
    expect(back.status).toBe(204);
    expect((await stored())[0]!.PinCode).toBe('4321');
    const renamed = await env.api.put(href, { token: op, body: { ...got.body, GivenName: 'Janet' } });
    expect(renamed.status).toBe(200);
    expect(JSON.stringify(renamed.body)).not.toContain('4321');
    expect((await stored())[0]!.PinCode).toBe('4321');
    const cardHref = `${href}/cards/${got.body.CardAssignments[0].Key}`;
    const putCard = await env.api.put(cardHref, { token: op, body: { ...cards.body[0], DisplayCardNumber: 'renamed' } });
    expect(putCard.status).toBe(200);
    expect(JSON.stringify(putCard.body)).not.toContain('4321');
    expect((await stored())[0]).toMatchObject({ PinCode: '4321', DisplayCardNumber: 'renamed' });
    const added = await env.api.post(`${href}/cards`, { token: op, body: card(freshCard(), { PinCode: '5555' }) });
    expect(added.status).toBe(201);
    expect(JSON.stringify(added.body)).not.toContain('5555');

    // A new PIN replaces it; null removes it.
    await env.api.put(cardHref, { token: op, body: { ...cards.body[0], PinCode: '9999' } });
    expect((await stored())[0]!.PinCode).toBe('9999');
    await env.api.put(cardHref, { token: op, body: { ...cards.body[0], PinCode: null } });
    expect((await stored())[0]).not.toHaveProperty('PinCode');
  });

  it('keeps the use count and last use the server stored, unless a write re-arms the card with CurrentUseCount 0', async () => {
    const n = freshCard();
    const key = newKey();
    const counted = { $type: 'CardAssignmentInfo', Key: newKey(), ...card(n, { OriginalUseCount: 5, CurrentUseCount: 3, LastUsed: '2026-11-01T08:00:00Z' }) };
    const o: StoredObject = {
      key,
      collection: 'people',
      type: 'PersonInfo',
      ...placeIn(env.root.instance),
      version: 1,
      doc: { $type: 'PersonInfo', CommonName: uniqueName('Counted'), CardAssignments: [counted] },
    };
    await createObject(t.db, o, [cardClaim(root, String(n))]);
    const href = `/api/f/${root}/people/${key}`;
    const stored = async () => (await getObject(t.db, key, true))!.doc.CardAssignments as Array<Record<string, unknown>>;

    const got = await env.api.get(href, { token: op });
    expect(got.body.CardAssignments[0]).toMatchObject({ CurrentUseCount: 3, LastUsed: '2026-11-01T08:00:00Z' });

    // A write of the person sending other values: the stored ones stay.
    const cheat = { ...got.body.CardAssignments[0], CurrentUseCount: 1, LastUsed: '2020-01-01T00:00:00Z', Note: 'x' };
    expect((await env.api.put(href, { token: op, body: { ...got.body, CardAssignments: [cheat] } })).status).toBe(200);
    expect((await stored())[0]).toMatchObject({ CurrentUseCount: 3, LastUsed: '2026-11-01T08:00:00Z', Note: 'x' });
    // Nor through the card call, nor by leaving them out.
    const cardHref = `${href}/cards/${counted.Key}`;
    const { CurrentUseCount: _c, LastUsed: _l, ...bare } = got.body.CardAssignments[0];
    expect((await env.api.put(cardHref, { token: op, body: { ...bare, CurrentUseCount: 4 } })).status).toBe(200);
    expect((await stored())[0]).toMatchObject({ CurrentUseCount: 3, LastUsed: '2026-11-01T08:00:00Z' });

    // Re-arming sets it to 0 and keeps the last use.
    const rearmed = await env.api.put(cardHref, { token: op, body: { ...bare, CurrentUseCount: 0 } });
    expect(rearmed.status).toBe(200);
    expect(rearmed.body).toMatchObject({ CurrentUseCount: 0, LastUsed: '2026-11-01T08:00:00Z' });

    // A new card starts unused whatever it sends.
    const added = await env.api.post(`${href}/cards`, { token: op, body: card(freshCard(), { CurrentUseCount: 9, LastUsed: '2026-01-01T00:00:00Z' }) });
    expect(added.status).toBe(201);
    expect(added.body).not.toHaveProperty('CurrentUseCount');
    expect(added.body).not.toHaveProperty('LastUsed');
  });
});
