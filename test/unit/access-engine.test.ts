import { describe, expect, it } from 'vitest';
import type { CardFacts, DecisionFacts, LevelGrant, ObjectRef, ReaderFacts, ScheduleRule } from '#shared/access/decision.ts';
import { cardState, decide, grantingPair, grantsAt } from '#shared/access/engine.ts';
import { formatLocalTime, holidayDaysOf, localClock, parseScheduleDuration, scheduleActiveAt, scheduleRuleOf } from '#shared/access/schedule.ts';

const ref = (key: string, name: string): ObjectRef => ({ Key: key, CommonName: name, Href: `/api/f/i/x/${key}` });

/** Monday to Friday, 09:00 for 8 hours. */
const WEEKDAYS: ScheduleRule = {
  ref: ref('s1', 'Weekdays 9-17'),
  isAlways: false,
  windows: [{ dayMask: 62, startSeconds: 9 * 3600, durationSeconds: 8 * 3600, holidayExceptions: 0 }],
};
const ALWAYS: ScheduleRule = { ref: ref('s2', 'Always'), isAlways: true, windows: [] };
const STAFF: LevelGrant = { level: ref('l1', 'Staff'), window: null, schedules: [WEEKDAYS] };

const card = (over: Partial<CardFacts> = {}): CardFacts => ({
  person: ref('p1', 'Jane Doe'),
  key: 'c1',
  encodedCardNumber: 4242n,
  facilityCode: null,
  displayCardNumber: '4242',
  isDisabled: false,
  activeOn: null,
  expiresOn: null,
  pinCode: '8675',
  originalUseCount: 0,
  currentUseCount: 0,
  extendedAccess: false,
  lockdownExempt: false,
  ...over,
});

const reader = (over: Partial<ReaderFacts> = {}): ReaderFacts => ({
  ref: ref('r1', 'Front Door'),
  accessMethod: 0,
  normalGrantAccessTime: 5,
  extendedGrantAccessTime: 15,
  timeZone: 'America/New_York',
  door: ref('d1', 'Lobby'),
  controller: ref('c1', 'Panel'),
  lockdown: null,
  ...over,
});

/** Friday 2026-11-27 09:30 in New York (UTC-5). */
const FRIDAY_MORNING = new Date('2026-11-27T14:30:00Z');

const facts = (over: Partial<DecisionFacts> = {}): DecisionFacts => ({
  at: FRIDAY_MORNING,
  reader: reader(),
  lookup: { card: card() },
  pinCode: null,
  grants: [STAFF],
  holidays: [],
  requested: { encodedCardNumber: 4242n, facilityCode: null },
  ...over,
});

const checkOf = (d: ReturnType<typeof decide>, step: string) => d.checks.find((c) => c.Step === step)!;

describe('decide', () => {
  it('grants a card of a level whose schedule is active, naming the level, the schedule, the local time and the strike time', () => {
    const d = decide(facts());
    expect(d).toMatchObject({
      granted: true,
      reason: 'Granted',
      at: '2026-11-27T14:30:00.000Z',
      localTime: '2026-11-27T09:30:00-05:00',
      timeZone: 'America/New_York',
      strikeSeconds: 5,
      accessLevel: STAFF.level,
      schedule: WEEKDAYS.ref,
    });
    expect(d.message).toBe('Card 4242 of Jane Doe granted at reader Front Door by level Staff, schedule Weekdays 9-17');
    expect(d.checks.map((c) => [c.Step, c.Passed, c.Evaluated])).toEqual([
      ['ReaderMode', true, true],
      ['Card', true, true],
      ['CardState', true, true],
      ['Pin', true, true],
      ['AccessLevel', true, true],
      ['Schedule', true, true],
    ]);
  });

  it('gives an ExtendedAccess card the extended strike time', () => {
    expect(decide(facts({ lookup: { card: card({ extendedAccess: true }) } })).strikeSeconds).toBe(15);
  });

  it('rejects a card no one here holds with CardNotFound, naming the number, and evaluates nothing that needs the card', () => {
    const d = decide(facts({ lookup: { card: null, heldUnderOtherFacilityCode: false } }));
    expect(d).toMatchObject({ granted: false, reason: 'CardNotFound', strikeSeconds: null, accessLevel: null, schedule: null });
    expect(d.message).toBe('Card 4242 is not held by anyone here');
    expect(d.checks.filter((c) => !c.Evaluated).map((c) => c.Step)).toEqual(['CardState', 'Pin', 'AccessLevel', 'Schedule']);
    expect(d.checks.filter((c) => !c.Evaluated).every((c) => !c.Passed)).toBe(true);
  });

  it('rejects a number held only under another facility code with InvalidFacilityCode', () => {
    const d = decide(facts({ lookup: { card: null, heldUnderOtherFacilityCode: true }, requested: { encodedCardNumber: 4242n, facilityCode: 7 } }));
    expect(d.reason).toBe('InvalidFacilityCode');
    expect(d.message).toBe('Card 4242 is held here only under another facility code than 7');
  });

  it('rejects a disabled card with CardDisabled', () => {
    const d = decide(facts({ lookup: { card: card({ isDisabled: true }) } }));
    expect(d).toMatchObject({ granted: false, reason: 'CardDisabled', message: 'Card 4242 of Jane Doe is disabled' });
  });

  it('counts ActiveOn in: not yet active just before it, active at it', () => {
    const activeOn = '2026-11-27T14:30:00Z';
    const before = decide(facts({ at: new Date(Date.parse(activeOn) - 1), lookup: { card: card({ activeOn }) } }));
    expect(before).toMatchObject({ granted: false, reason: 'CardNotYetActive', message: 'Card 4242 of Jane Doe is not active until 2026-11-27T09:30:00-05:00' });
    expect(decide(facts({ at: new Date(activeOn), lookup: { card: card({ activeOn }) } })).reason).toBe('Granted');
  });

  it('counts ExpiresOn out: active just before it, expired at it, the date read in the reader zone', () => {
    const expiresOn = '2026-11-27T15:00:00Z';
    expect(decide(facts({ at: new Date(Date.parse(expiresOn) - 1), lookup: { card: card({ expiresOn }) } })).reason).toBe('Granted');
    const at = decide(facts({ at: new Date(expiresOn), lookup: { card: card({ expiresOn }) } }));
    expect(at).toMatchObject({ granted: false, reason: 'CardExpired' });
    const utc = decide(facts({ reader: reader({ timeZone: 'UTC' }), lookup: { card: card({ expiresOn: '2026-10-01T00:00:00Z' }) } }));
    expect(utc.message).toBe('Card 4242 of Jane Doe expired on 2026-10-01');
  });

  it('rejects a card that has used up its uses with UseLimitReached, and counts 0 as unlimited', () => {
    const d = decide(facts({ lookup: { card: card({ originalUseCount: 5, currentUseCount: 5 }) } }));
    expect(d).toMatchObject({ reason: 'UseLimitReached', message: 'Card 4242 of Jane Doe has been used 5 of 5 times' });
    expect(decide(facts({ lookup: { card: card({ originalUseCount: 5, currentUseCount: 4 }) } })).reason).toBe('Granted');
    expect(decide(facts({ lookup: { card: card({ originalUseCount: 0, currentUseCount: 99 }) } })).reason).toBe('Granted');
  });

  it('asks a card-and-PIN reader for the right PIN, and never shows a PIN', () => {
    const pinReader = reader({ accessMethod: 2 });
    const missing = decide(facts({ reader: pinReader }));
    const wrong = decide(facts({ reader: pinReader, pinCode: '1111' }));
    const noPinOnCard = decide(facts({ reader: pinReader, pinCode: '8675', lookup: { card: card({ pinCode: null }) } }));
    const right = decide(facts({ reader: pinReader, pinCode: '8675' }));
    expect([missing.reason, wrong.reason, noPinOnCard.reason, right.reason]).toEqual(['InvalidPin', 'InvalidPin', 'InvalidPin', 'Granted']);
    expect(missing.message).toBe('No PIN was entered with card 4242 of Jane Doe at reader Front Door');
    expect(wrong.message).toBe('Wrong PIN entered with card 4242 of Jane Doe at reader Front Door');
    expect(decide(facts({ reader: pinReader, pinCode: '86750' })).reason).toBe('InvalidPin');
    for (const d of [missing, wrong, noPinOnCard, right]) {
      expect(JSON.stringify(d)).not.toContain('8675');
      expect(JSON.stringify(d)).not.toContain('1111');
    }
  });

  it('ignores a PIN at a card-only reader', () => {
    expect(decide(facts({ pinCode: '0000' })).reason).toBe('Granted');
  });

  it('rejects a person with no level pairing the reader with NoAccessAtReader, and a level without a schedule grants nothing', () => {
    const none = decide(facts({ grants: [] }));
    expect(none).toMatchObject({ reason: 'NoAccessAtReader', message: 'Jane Doe has no access level for reader Front Door' });
    expect(checkOf(none, 'Schedule').Evaluated).toBe(false);
    expect(decide(facts({ grants: [{ level: ref('l2', 'Empty'), window: null, schedules: [] }] })).reason).toBe('NoAccessAtReader');
  });

  it('applies a scheduled level from ActiveOn (included) to ExpiresOn (excluded)', () => {
    const window = { activeOn: '2026-11-27T14:00:00Z', expiresOn: '2026-11-27T15:00:00Z' };
    const grants = [{ ...STAFF, window }];
    const at = (iso: string) => decide(facts({ grants, at: new Date(iso) })).reason;
    expect(at('2026-11-27T13:59:59.999Z')).toBe('NoAccessAtReader');
    expect(at('2026-11-27T14:00:00Z')).toBe('Granted');
    expect(at('2026-11-27T14:59:59.999Z')).toBe('Granted');
    expect(at('2026-11-27T15:00:00Z')).toBe('NoAccessAtReader');
    const later = decide(facts({ grants, at: new Date('2026-11-27T15:00:00Z') }));
    expect(later.message).toBe('Jane Doe has no access level for reader Front Door at this time');
    expect(checkOf(later, 'AccessLevel').Found).toContain('scheduled from 2026-11-27T09:00:00-05:00 until 2026-11-27T10:00:00-05:00');
  });

  it('rejects outside the schedule with OutsideSchedule at the window boundaries (start included, end excluded) in the reader zone', () => {
    const at = (iso: string) => decide(facts({ at: new Date(iso) }));
    expect(at('2026-11-27T13:59:59Z').reason).toBe('OutsideSchedule'); // 08:59:59 local
    expect(at('2026-11-27T14:00:00Z').reason).toBe('Granted'); // 09:00:00
    expect(at('2026-11-27T21:59:59Z').reason).toBe('Granted'); // 16:59:59
    const end = at('2026-11-27T22:00:00Z'); // 17:00:00
    expect(end.reason).toBe('OutsideSchedule');
    expect(end.message).toBe('Jane Doe may use reader Front Door only within schedules Weekdays 9-17, not at 2026-11-27T17:00:00-05:00 (Friday, America/New_York)');
    expect(at('2026-11-28T15:00:00Z').reason).toBe('OutsideSchedule'); // Saturday 10:00
  });

  it('grants by the first level, in the order given, whose schedule is active', () => {
    const night: ScheduleRule = { ref: ref('s3', 'Nights'), isAlways: false, windows: [{ dayMask: 127, startSeconds: 22 * 3600, durationSeconds: 8 * 3600, holidayExceptions: 0 }] };
    const cleaners: LevelGrant = { level: ref('l3', 'Cleaners'), window: null, schedules: [night, ALWAYS] };
    const d = decide(facts({ grants: [STAFF, cleaners], at: new Date('2026-11-28T15:00:00Z') }));
    expect(d).toMatchObject({ reason: 'Granted', accessLevel: cleaners.level, schedule: ALWAYS.ref });
  });

  it('reports every step that can be evaluated, even after the one that decided', () => {
    const d = decide(facts({ lookup: { card: card({ isDisabled: true }) }, grants: [] }));
    expect(d.reason).toBe('CardDisabled');
    expect(checkOf(d, 'AccessLevel')).toMatchObject({ Evaluated: true, Passed: false });
  });

  it('grants free passage at an unlocked reader without a card', () => {
    const d = decide(facts({ reader: reader({ accessMethod: 5 }), lookup: { card: null, heldUnderOtherFacilityCode: false }, grants: [] }));
    expect(d).toMatchObject({ granted: true, reason: 'FreeAccess', message: 'Reader Front Door is unlocked: free passage', strikeSeconds: null });
    expect(d.checks.filter((c) => c.Evaluated).map((c) => c.Step)).toEqual(['ReaderMode']);
  });

  it('locks a locked-down reader (its mode or a folder lockdown) unless the card would be granted and is LockdownExempt', () => {
    const locked = reader({ accessMethod: 6 });
    const d = decide(facts({ reader: locked }));
    expect(d).toMatchObject({ granted: false, reason: 'ReaderLockedDown', message: 'Reader Front Door is locked down', accessLevel: null, strikeSeconds: null });
    expect(checkOf(d, 'ReaderMode').Found).toContain('is not lockdown exempt');

    const exempt = decide(facts({ reader: locked, lookup: { card: card({ lockdownExempt: true }) } }));
    expect(exempt).toMatchObject({ granted: true, reason: 'Granted', strikeSeconds: 5, accessLevel: STAFF.level });
    expect(exempt.message).toContain('(locked down; the card is lockdown exempt)');

    const exemptOutside = decide(facts({ reader: locked, at: new Date('2026-11-28T15:00:00Z'), lookup: { card: card({ lockdownExempt: true }) } }));
    expect(exemptOutside.reason).toBe('ReaderLockedDown');

    const folder = decide(facts({ reader: reader({ accessMethod: 5, lockdown: { folder: ref('f1', 'Building A') } }) }));
    expect(folder).toMatchObject({ reason: 'ReaderLockedDown', message: 'Reader Front Door is locked down by the lockdown of folder Building A' });
    expect(decide(facts({ reader: reader({ lockdown: { folder: ref('f1', 'Building A') } }), lookup: { card: card({ lockdownExempt: true }) } })).reason).toBe(
      'Granted',
    );
    const noCard = decide(facts({ reader: locked, lookup: { card: null, heldUnderOtherFacilityCode: false } }));
    expect(noCard.reason).toBe('ReaderLockedDown');
  });

  it('names a card by its number when it has no display number, and the caller-less read as "the card"', () => {
    const d = decide(facts({ lookup: { card: card({ displayCardNumber: null, encodedCardNumber: 9223372036854775807n, isDisabled: true }) } }));
    expect(d.message).toBe('Card 9223372036854775807 of Jane Doe is disabled');
    const { requested: _r, ...rest } = facts({ lookup: { card: null, heldUnderOtherFacilityCode: false } });
    expect(decide(rest).message).toBe('The card is not held by anyone here');
  });
});

describe('the pure helpers', () => {
  it('cardState orders disabled, not yet active, expired, use limit', () => {
    const at = new Date('2026-06-01T00:00:00Z');
    expect(cardState(card({ isDisabled: true, expiresOn: '2026-01-01T00:00:00Z' }), at)).toBe('CardDisabled');
    expect(cardState(card({ activeOn: '2026-07-01T00:00:00Z', originalUseCount: 1, currentUseCount: 1 }), at)).toBe('CardNotYetActive');
    expect(cardState(card({ expiresOn: '2026-06-01T00:00:00Z', originalUseCount: 1, currentUseCount: 1 }), at)).toBe('CardExpired');
    expect(cardState(card({ originalUseCount: 1, currentUseCount: 1 }), at)).toBe('UseLimitReached');
    expect(cardState(card(), at)).toBe('Active');
  });

  it('grantsAt keeps the levels applying at the instant that pair a schedule; grantingPair finds the active one', () => {
    const expired: LevelGrant = { ...STAFF, level: ref('l9', 'Old'), window: { activeOn: null, expiresOn: '2026-01-01T00:00:00Z' } };
    const empty: LevelGrant = { level: ref('l8', 'Empty'), window: null, schedules: [] };
    expect(grantsAt([expired, empty, STAFF], FRIDAY_MORNING).map((g) => g.level.Key)).toEqual(['l1']);
    expect(grantingPair([STAFF], [], FRIDAY_MORNING, 'America/New_York')).toMatchObject({ level: STAFF.level, schedule: WEEKDAYS.ref });
    expect(grantingPair([STAFF], [], FRIDAY_MORNING, 'Asia/Tokyo')).toBeNull(); // 23:30 there
  });
});

describe('schedules', () => {
  it('reads ScheduleDurationItems, .NET day spans included, and skips items that are not valid', () => {
    expect(parseScheduleDuration({ DayMask: 62, StartingAt: '09:00:00', Duration: '08:00:00' })).toEqual({
      dayMask: 62,
      startSeconds: 32_400,
      durationSeconds: 28_800,
      holidayExceptions: 0,
    });
    expect(parseScheduleDuration({ DayMask: 1, StartingAt: '00:00:00', Duration: '1.00:00:00', HolidayExceptions: 3 })?.durationSeconds).toBe(86_400);
    expect(parseScheduleDuration({ DayMask: 1, StartingAt: '00:00:00', Duration: '1.00:00:01' })).toBeNull();
    expect(parseScheduleDuration({ DayMask: 128, StartingAt: '00:00:00', Duration: '01:00:00' })).toBeNull();
    expect(parseScheduleDuration({ DayMask: 1, StartingAt: '24:00:00', Duration: '01:00:00' })).toBeNull();
    expect(parseScheduleDuration({ DayMask: 1, StartingAt: '00:00:00', Duration: '00:00:00' })).toBeNull();
    const rule = scheduleRuleOf(ref('s', 'S'), { IsAlways: false, ScheduleDurations: [{ DayMask: 2, StartingAt: '08:00:00', Duration: '01:00:00' }, 'junk'] });
    expect(rule.windows).toHaveLength(1);
    expect(holidayDaysOf({ HolidayDays: [{ Date: '2026-12-25', HolidayTypes: 1 }, { Date: '2026-02-30', HolidayTypes: 1 }] })).toEqual([
      { date: '2026-12-25', numberOfDays: 1, holidayTypes: 1 },
    ]);
  });

  it('gives a window past midnight to the day it starts on', () => {
    // Friday 22:00 for 4 hours: Saturday 01:00 is inside, Saturday 22:30 is not (bit 6 not set).
    const rule: ScheduleRule = { ref: ref('s', 'Late'), isAlways: false, windows: [{ dayMask: 1 << 5, startSeconds: 22 * 3600, durationSeconds: 4 * 3600, holidayExceptions: 0 }] };
    expect(scheduleActiveAt(rule, [], new Date('2026-11-28T01:00:00Z'), 'UTC')).toBe(true);
    expect(scheduleActiveAt(rule, [], new Date('2026-11-28T02:00:00Z'), 'UTC')).toBe(false);
    expect(scheduleActiveAt(rule, [], new Date('2026-11-28T22:30:00Z'), 'UTC')).toBe(false);
  });

  it('on a holiday uses only the durations excepting its types, and IsAlways stays active', () => {
    const rule: ScheduleRule = {
      ...WEEKDAYS,
      windows: [...WEEKDAYS.windows, { dayMask: 0, startSeconds: 10 * 3600, durationSeconds: 3600, holidayExceptions: 0b10 }],
    };
    const christmas = [{ date: '2026-12-25', numberOfDays: 1, holidayTypes: 0b10 }];
    const other = [{ date: '2026-12-25', numberOfDays: 1, holidayTypes: 0b01 }];
    const at930 = new Date('2026-12-25T14:30:00Z');
    const at1030 = new Date('2026-12-25T15:30:00Z');
    expect(scheduleActiveAt(rule, [], at930, 'America/New_York')).toBe(true);
    expect(scheduleActiveAt(rule, christmas, at930, 'America/New_York')).toBe(false);
    expect(scheduleActiveAt(rule, christmas, at1030, 'America/New_York')).toBe(true);
    expect(scheduleActiveAt(rule, other, at1030, 'America/New_York')).toBe(false);
    expect(scheduleActiveAt(ALWAYS, other, at1030, 'America/New_York')).toBe(true);
    // The holiday is a local date: 2026-12-26 01:00 UTC is still the 25th in New York.
    expect(scheduleActiveAt(rule, christmas, new Date('2026-12-26T01:00:00Z'), 'America/New_York')).toBe(false);
  });

  it('starts a window in a skipped hour at the first instant after the gap, and keeps a repeated hour inside both times', () => {
    const at = (start: number, duration: number): ScheduleRule => ({
      ref: ref('s', 'S'),
      isAlways: false,
      windows: [{ dayMask: 127, startSeconds: start, durationSeconds: duration, holidayExceptions: 0 }],
    });
    const ny = 'America/New_York';
    // 2026-03-08 02:00 EST → 03:00 EDT (07:00Z). A window from 02:30 begins at 03:00 EDT.
    expect(scheduleActiveAt(at(2.5 * 3600, 3600), [], new Date('2026-03-08T06:59:59Z'), ny)).toBe(false);
    expect(scheduleActiveAt(at(2.5 * 3600, 3600), [], new Date('2026-03-08T07:00:00Z'), ny)).toBe(true);
    expect(scheduleActiveAt(at(2.5 * 3600, 3600), [], new Date('2026-03-08T07:30:00Z'), ny)).toBe(false);
    // 2026-11-01 01:00–02:00 happens twice (EDT then EST): 01:15–01:45 is inside both times.
    const repeated = at(1.25 * 3600, 1800);
    expect(scheduleActiveAt(repeated, [], new Date('2026-11-01T05:20:00Z'), ny)).toBe(true);
    expect(scheduleActiveAt(repeated, [], new Date('2026-11-01T06:20:00Z'), ny)).toBe(true);
    expect(scheduleActiveAt(repeated, [], new Date('2026-11-01T05:50:00Z'), ny)).toBe(false);
    // Lord Howe moves 30 minutes: 2026-10-04 02:00 → 02:30 (+10:30 → +11, 15:30Z).
    expect(formatLocalTime(new Date('2026-10-03T15:30:00Z'), 'Australia/Lord_Howe')).toBe('2026-10-04T02:30:00+11:00');
    expect(scheduleActiveAt(at(2 * 3600 + 600, 600), [], new Date('2026-10-03T15:30:00Z'), 'Australia/Lord_Howe')).toBe(false);
    expect(scheduleActiveAt(at(2 * 3600 + 600, 1800), [], new Date('2026-10-03T15:30:00Z'), 'Australia/Lord_Howe')).toBe(true);
  });

  it('reads the wall clock and the offset of an instant', () => {
    expect(localClock(new Date('2026-07-01T12:00:00Z'), 'Europe/Berlin').offsetSeconds).toBe(7200);
    expect(formatLocalTime(new Date('2026-07-01T12:00:00.5Z'), 'Asia/Kolkata')).toBe('2026-07-01T17:30:00.500+05:30');
    expect(() => localClock(new Date(), 'EST5EDT,M3.2.0/2,M11.1.0/2')).toThrow(RangeError);
  });
});
