/**
 * The engine's schedule evaluation held to a deliberately naive reference: every window of every
 * day near the instant is expanded minute by minute into wall-clock labels (`2026-03-08 02:30`),
 * and the instant is active when its own wall-clock label, read with `Intl` through another
 * formatter than the engine's, is one of them. The reference knows nothing of offsets, gaps or
 * repeated hours: a label that never occurs (a skipped hour) never matches, one that occurs twice
 * matches both times, which is the rule of issue 36.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DecisionFacts, HolidayDay, LevelGrant, ObjectRef, ScheduleRule, ScheduleWindow } from '#shared/access/decision.ts';
import { decide } from '#shared/access/engine.ts';
import { scheduleActiveAt } from '#shared/access/schedule.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Daylight saving changes (UTC instants) of the three zones; the first test checks each is one. */
const TRANSITIONS: Readonly<Record<string, readonly string[]>> = {
  'America/New_York': ['2026-03-08T07:00:00Z', '2026-11-01T06:00:00Z', '2025-03-09T07:00:00Z', '2025-11-02T06:00:00Z'],
  'Europe/Berlin': ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z'],
  // A 30-minute shift: 02:00 → 01:30 in April, 02:00 → 02:30 in October.
  'Australia/Lord_Howe': ['2026-04-04T15:00:00Z', '2026-10-03T15:30:00Z'],
};

const labelFormats = new Map<string, Intl.DateTimeFormat>();

/** `YYYY-MM-DD HH:MM:SS`, the wall clock of an instant in a zone (Swedish dates are ISO-like). */
function wallLabel(at: Date, zone: string): string {
  let f = labelFormats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('sv-SE', { timeZone: zone, hourCycle: 'h23', dateStyle: 'short', timeStyle: 'medium' });
    labelFormats.set(zone, f);
  }
  return f.format(at);
}

/** A calendar date `days` after `date`. */
const addDays = (date: string, days: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);

/** The naive reference: every wall-clock minute (`2026-03-08 02:30`) of the windows of the days from `first` to `last`. */
function expandedMinutes(rule: ScheduleRule, holidays: readonly HolidayDay[], first: string, last: string): Set<string> {
  const typesOn = new Map<string, number>();
  for (const h of holidays) {
    for (let k = 0; k < h.numberOfDays; k++) {
      const d = addDays(h.date, k);
      typesOn.set(d, (typesOn.get(d) ?? 0) | h.holidayTypes);
    }
  }
  const minutes = new Set<string>();
  for (let day = first; day <= last; day = addDays(day, 1)) {
    const types = typesOn.get(day) ?? 0;
    const weekday = new Date(`${day}T12:00:00Z`).getUTCDay();
    for (const w of rule.windows) {
      const applies = types !== 0 ? (w.holidayExceptions & types) !== 0 : (w.dayMask & (1 << weekday)) !== 0;
      if (!applies) continue;
      for (let m = w.startSeconds / 60; m < (w.startSeconds + w.durationSeconds) / 60; m++) {
        minutes.add(new Date(Date.parse(`${day}T00:00:00Z`) + m * MINUTE).toISOString().slice(0, 16).replace('T', ' '));
      }
    }
  }
  return minutes;
}

/** Is the wall-clock minute of `at` among the expanded minutes of the days up to its own? */
function referenceActive(rule: ScheduleRule, holidays: readonly HolidayDay[], at: Date, zone: string): boolean {
  if (rule.isAlways) return true;
  const label = wallLabel(at, zone).slice(0, 16);
  const today = label.slice(0, 10);
  return expandedMinutes(rule, holidays, addDays(today, -2), today).has(label);
}

const ref = (key: string): ObjectRef => ({ Key: key, CommonName: key, Href: `/api/f/i/x/${key}` });

/**
 * Windows on whole minutes (the reference's unit), past midnight included; half of them on half
 * hours, so that instants on half hours often fall exactly on their boundaries.
 */
const windowArb: fc.Arbitrary<ScheduleWindow> = fc.oneof(
  fc.record({
    dayMask: fc.integer({ min: 0, max: 127 }),
    startSeconds: fc.integer({ min: 0, max: 1439 }).map((m) => m * 60),
    durationSeconds: fc.oneof(fc.integer({ min: 1, max: 1440 }), fc.constantFrom(1, 30, 60, 1440)).map((m) => m * 60),
    holidayExceptions: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 })),
  }),
  fc.record({
    dayMask: fc.integer({ min: 0, max: 127 }),
    startSeconds: fc.integer({ min: 0, max: 47 }).map((h) => h * 1800),
    durationSeconds: fc.integer({ min: 1, max: 48 }).map((h) => h * 1800),
    holidayExceptions: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 255 })),
  }),
);

const ruleArb: fc.Arbitrary<ScheduleRule> = fc.record({
  ref: fc.constant(ref('s')),
  isAlways: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  windows: fc.array(windowArb, { minLength: 0, maxLength: 4 }),
});

/** A zone, one of its transitions, and an instant within 36 hours of it (to the second). */
const caseArb = fc
  .constantFrom(...Object.entries(TRANSITIONS).flatMap(([zone, list]) => list.map((t) => ({ zone, transition: Date.parse(t) }))))
  .chain(({ zone, transition }) =>
    fc.record({
      zone: fc.constant(zone),
      // Any second, seconds near the change, and whole minutes (window boundaries fall on them).
      at: fc
        .oneof(
          fc.integer({ min: -36 * 3600, max: 36 * 3600 }),
          fc.integer({ min: -2 * 3600, max: 2 * 3600 }),
          fc.integer({ min: -36 * 60, max: 36 * 60 }).map((m) => m * 60),
          fc.integer({ min: -72, max: 72 }).map((h) => h * 1800),
        )
        .map((s) => new Date(transition + s * 1000)),
      holidays: fc.array(
        fc.record({
          date: fc.integer({ min: -3, max: 2 }).map((k) => addDays(new Date(transition).toISOString().slice(0, 10), k)),
          numberOfDays: fc.integer({ min: 1, max: 3 }),
          holidayTypes: fc.integer({ min: 1, max: 255 }),
        }),
        { maxLength: 2 },
      ),
    }),
  );

describe('scheduleActiveAt against the minute-by-minute reference', () => {
  it('uses instants where the offset really changes', () => {
    for (const [zone, list] of Object.entries(TRANSITIONS)) {
      for (const t of list) {
        const before = wallLabel(new Date(Date.parse(t) - 1000), zone);
        const at = wallLabel(new Date(Date.parse(t)), zone);
        expect(Date.parse(at.replace(' ', 'T') + 'Z') - Date.parse(before.replace(' ', 'T') + 'Z'), `${zone} ${t}`).not.toBe(1000);
      }
    }
  });

  it('agrees on random schedules, holidays and instants near daylight saving changes', () => {
    fc.assert(
      fc.property(ruleArb, caseArb, (rule, { zone, at, holidays }) => {
        expect(scheduleActiveAt(rule, holidays, at, zone)).toBe(referenceActive(rule, holidays, at, zone));
      }),
      { numRuns: 600 },
    );
  });

  it('agrees at every minute and at the seconds around it across each change', () => {
    // One schedule with windows starting and ending in and around the changes, walked minute by minute.
    const rule: ScheduleRule = {
      ref: ref('s'),
      isAlways: false,
      windows: [
        { dayMask: 127, startSeconds: 2 * 3600 + 10 * 60, durationSeconds: 20 * 60, holidayExceptions: 0 },
        { dayMask: 127, startSeconds: 1 * 3600 + 40 * 60, durationSeconds: 35 * 60, holidayExceptions: 0 },
        { dayMask: 127, startSeconds: 23 * 3600, durationSeconds: 3 * 3600 + 45 * 60, holidayExceptions: 0 },
      ],
    };
    for (const [zone, list] of Object.entries(TRANSITIONS)) {
      for (const t of list) {
        const day = t.slice(0, 10);
        const minutes = expandedMinutes(rule, [], addDays(day, -3), addDays(day, 2));
        for (let minute = Date.parse(t) - 4 * 3600_000; minute <= Date.parse(t) + 4 * 3600_000; minute += MINUTE) {
          for (const at of [minute - 1000, minute, minute + 1000]) {
            const expected = minutes.has(wallLabel(new Date(at), zone).slice(0, 16));
            expect(scheduleActiveAt(rule, [], new Date(at), zone), `${zone} ${new Date(at).toISOString()}`).toBe(expected);
          }
        }
      }
    }
  });
});

describe('decide against the reference', () => {
  it('grants exactly when a level applying at the instant (scheduled windows included) has a schedule the reference finds active', () => {
    const grantArb = (at: number): fc.Arbitrary<LevelGrant> =>
      fc.record({
        level: fc.constant(ref('l')),
        window: fc.option(
          fc.record({
            activeOn: fc.option(fc.integer({ min: -3600, max: 3600 }).map((s) => new Date(at + s * 1000).toISOString()), { nil: null }),
            expiresOn: fc.option(fc.integer({ min: -3600, max: 3600 }).map((s) => new Date(at + s * 1000).toISOString()), { nil: null }),
          }),
          { nil: null },
        ),
        schedules: fc.array(ruleArb, { maxLength: 2 }),
      });
    const arb = caseArb.chain((c) => fc.record({ c: fc.constant(c), grants: fc.array(grantArb(c.at.getTime()), { maxLength: 3 }) }));
    fc.assert(
      fc.property(arb, ({ c: { zone, at, holidays }, grants }) => {
        const facts: DecisionFacts = {
          at,
          reader: { ref: ref('r'), accessMethod: 0, normalGrantAccessTime: 5, extendedGrantAccessTime: 15, timeZone: zone, door: null, controller: null, lockdown: null },
          lookup: {
            card: {
              person: ref('p'),
              key: 'c',
              encodedCardNumber: 1n,
              facilityCode: null,
              displayCardNumber: null,
              isDisabled: false,
              activeOn: null,
              expiresOn: null,
              pinCode: null,
              originalUseCount: 0,
              currentUseCount: 0,
              extendedAccess: false,
              lockdownExempt: false,
            },
          },
          pinCode: null,
          grants,
          holidays,
        };
        const t = at.getTime();
        const applying = grants.filter(
          (g) => g.window === null || ((g.window.activeOn === null || Date.parse(g.window.activeOn) <= t) && (g.window.expiresOn === null || t < Date.parse(g.window.expiresOn))),
        );
        const expected = applying.some((g) => g.schedules.some((s) => referenceActive(s, holidays, at, zone)));
        const d = decide(facts);
        expect(d.granted).toBe(expected);
        const levelled = applying.some((g) => g.schedules.length > 0);
        expect(d.reason).toBe(expected ? 'Granted' : levelled ? 'OutsideSchedule' : 'NoAccessAtReader');
      }),
      { numRuns: 300 },
    );
  });
});
