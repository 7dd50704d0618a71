/**
 * The console's schedule week editor (console/src/pages/schedules-windows.ts) against the decision
 * engine's own reading of schedules (shared/access/schedule-windows.ts): what the editor writes is
 * what the engine accepts, and a window ticked for a day is active on that day, past midnight
 * included, and on holidays of the types ticked. The two sides are written separately (the console
 * may not import the service's code), so this is where their bit orders and texts must agree.
 */
import { describe, expect, it } from 'vitest';
import { DAYS, draftOf, itemsOf, newDraft, windowSummary, type WindowDraft } from '../../console/src/pages/schedules-windows.ts';
import { holidayDaysOf, parseScheduleDuration, scheduleActiveAt, scheduleRuleOf } from '../../shared/access/schedule-windows.ts';

const ref = { Key: '000000000000000000000abc', CommonName: 'Test', Href: '/api/f/x/schedules/000000000000000000000abc' };

/** A draft with only the days named ticked. */
function onDays(base: WindowDraft, ...names: string[]): WindowDraft {
  return { ...base, dayMask: DAYS.filter((d) => names.includes(d.name)).reduce((m, d) => m | (1 << d.bit), 0) };
}

function itemsOrThrow(windows: WindowDraft[]): Record<string, unknown>[] {
  const out = itemsOf(windows);
  if ('problem' in out) throw new Error(out.problem);
  return out.items;
}

describe('the console week editor and the decision engine', () => {
  it('reads a stored window and writes it back as it was, its other fields kept', () => {
    const stored = { $type: 'ScheduleDurationItem', DayMask: 62, StartingAt: '08:00:00', Duration: '10:00:00', HolidayExceptions: 0, Holiday: 'kept' };
    const draft = draftOf(stored);
    expect(draft).toMatchObject({ dayMask: 62, start: '08:00', hours: '10', minutes: '0', holidayTypes: 0 });
    expect(itemsOrThrow([draft])).toEqual([stored]);
    expect(windowSummary(draft)).toBe('Mon, Tue, Wed, Thu, Fri 08:00–18:00');
    // Seconds the editor does not show survive a round trip.
    expect(itemsOrThrow([draftOf({ DayMask: 1, StartingAt: '07:15:30', Duration: '1.00:00:00' })])).toEqual([
      { DayMask: 1, StartingAt: '07:15:30', Duration: '1.00:00:00', HolidayExceptions: 0 },
    ]);
  });

  it('ticks the day the engine reads: Saturday 22:00 for 4 hours runs into Sunday', () => {
    const [item] = itemsOrThrow([onDays({ ...newDraft(), start: '22:00', hours: '4', minutes: '0' }, 'Saturday')]);
    expect(item).toMatchObject({ DayMask: 64, StartingAt: '22:00:00', Duration: '04:00:00' });
    expect(parseScheduleDuration(item)).toEqual({ dayMask: 64, startSeconds: 79_200, durationSeconds: 14_400, holidayExceptions: 0 });
    const rule = scheduleRuleOf(ref, { ScheduleDurations: [item] });
    // 2026-11-28 is a Saturday.
    expect(scheduleActiveAt(rule, [], new Date('2026-11-28T23:00:00Z'), 'UTC')).toBe(true);
    expect(scheduleActiveAt(rule, [], new Date('2026-11-29T01:59:00Z'), 'UTC')).toBe(true);
    expect(scheduleActiveAt(rule, [], new Date('2026-11-29T02:00:00Z'), 'UTC')).toBe(false);
    expect(scheduleActiveAt(rule, [], new Date('2026-11-27T23:00:00Z'), 'UTC')).toBe(false);
    expect(windowSummary(draftOf(item!))).toBe('Sat 22:00–02:00 (next day)');
  });

  it('writes a whole day as the TimeSpan text the engine accepts', () => {
    const [item] = itemsOrThrow([onDays({ ...newDraft(), start: '00:00', hours: '24', minutes: '0' }, 'Sunday')]);
    expect(item).toMatchObject({ DayMask: 1, Duration: '1.00:00:00' });
    expect(parseScheduleDuration(item)?.durationSeconds).toBe(86_400);
    expect(windowSummary(draftOf(item!))).toBe('Sun 00:00–24:00');
  });

  it('applies a window on holidays of the types ticked, and no weekday window on a holiday', () => {
    const weekdays = onDays({ ...newDraft(), start: '08:00', hours: '10', minutes: '0' }, 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday');
    const holidayMorning = { ...onDays({ ...newDraft(), start: '09:00', hours: '3', minutes: '0' }), holidayTypes: 0b10 };
    const items = itemsOrThrow([weekdays, holidayMorning]);
    expect(items[1]).toMatchObject({ DayMask: 0, HolidayExceptions: 2 });
    expect(windowSummary(draftOf(items[1]!))).toBe('No day 09:00–12:00; holidays of type 2');
    const rule = scheduleRuleOf(ref, { ScheduleDurations: items });
    // Monday 2026-11-30 is a holiday of type 2: the holiday window applies, the weekday one does not.
    const holidays = holidayDaysOf({ HolidayDays: [{ Date: '2026-11-30', HolidayTypes: 2 }] });
    expect(scheduleActiveAt(rule, holidays, new Date('2026-11-30T10:00:00Z'), 'UTC')).toBe(true);
    expect(scheduleActiveAt(rule, holidays, new Date('2026-11-30T14:00:00Z'), 'UTC')).toBe(false);
    // A holiday of another type: nothing applies that day.
    const other = holidayDaysOf({ HolidayDays: [{ Date: '2026-11-30', HolidayTypes: 1 }] });
    expect(scheduleActiveAt(rule, other, new Date('2026-11-30T10:00:00Z'), 'UTC')).toBe(false);
    expect(scheduleActiveAt(rule, [], new Date('2026-11-30T14:00:00Z'), 'UTC')).toBe(true);
  });

  it('says what is wrong with a window instead of writing it', () => {
    const base = newDraft();
    const problem = (w: Partial<WindowDraft>) => {
      const out = itemsOf([{ ...base, ...w }]);
      return 'problem' in out ? out.problem : null;
    };
    expect(problem({})).toBeNull();
    expect(problem({ start: '' })).toMatch(/Window 1: the start is not a time of day/);
    expect(problem({ start: '24:00' })).toMatch(/start is not a time of day/);
    expect(problem({ minutes: '60' })).toMatch(/whole hours and minutes/);
    expect(problem({ hours: '1.5' })).toMatch(/whole hours and minutes/);
    expect(problem({ hours: '0', minutes: '0' })).toMatch(/more than zero and at most 24 hours/);
    expect(problem({ hours: '24', minutes: '1' })).toMatch(/more than zero and at most 24 hours/);
    expect(problem({ dayMask: 0, holidayTypes: 0 })).toMatch(/at least one day or holiday type/);
  });
});
