/**
 * A schedule's windows as the week editor holds them, and back: `ScheduleDurationItem`s (`DayMask`,
 * bit 0 = Sunday; `StartingAt`, a time of day; `Duration`, more than zero and at most 24 hours, as
 * .NET `TimeSpan` texts; `HolidayExceptions`, bit n−1 = holiday type n) read into texts an operator
 * edits, checked and written back with the item's other fields kept. Pure: no DOM, no calls.
 */

/** Monday first, as an operator reads a week; `bit` is the day's bit in `DayMask`. */
export const DAYS: ReadonlyArray<{ readonly bit: number; readonly name: string; readonly short: string }> = [
  { bit: 1, name: 'Monday', short: 'Mon' },
  { bit: 2, name: 'Tuesday', short: 'Tue' },
  { bit: 3, name: 'Wednesday', short: 'Wed' },
  { bit: 4, name: 'Thursday', short: 'Thu' },
  { bit: 5, name: 'Friday', short: 'Fri' },
  { bit: 6, name: 'Saturday', short: 'Sat' },
  { bit: 0, name: 'Sunday', short: 'Sun' },
];

/** Holiday types 1 to 8. */
export const HOLIDAY_TYPES = [1, 2, 3, 4, 5, 6, 7, 8];

/** A window as the editor holds it: texts as typed, and the stored item's other fields (kept as they were). */
export interface WindowDraft {
  readonly id: number;
  readonly dayMask: number;
  /** `HH:MM` or `HH:MM:SS`, as a time input gives it. */
  readonly start: string;
  readonly hours: string;
  readonly minutes: string;
  /** Seconds of a stored duration beyond its minutes (none from this editor), kept. */
  readonly seconds: number;
  readonly holidayTypes: number;
  readonly rest: Readonly<Record<string, unknown>>;
}

let drafts = 0;

const pad = (n: number): string => String(n).padStart(2, '0');

/** Seconds of a `[d.]hh:mm:ss` text, or undefined. */
function spanSeconds(text: unknown): number | undefined {
  const m = typeof text === 'string' ? /^(?:(\d{1,3})\.)?(\d{1,2}):(\d{2}):(\d{2})$/.exec(text) : null;
  if (!m) return undefined;
  return ((Number(m[1] ?? 0) * 24 + Number(m[2])) * 60 + Number(m[3])) * 60 + Number(m[4]);
}

/** A stored `ScheduleDurationItem` in the editor. */
export function draftOf(item: Readonly<Record<string, unknown>>): WindowDraft {
  const { DayMask, StartingAt, Duration, HolidayExceptions, ...rest } = item;
  const start = spanSeconds(StartingAt) ?? 0;
  const length = spanSeconds(Duration) ?? 3600;
  const startText = `${pad(Math.floor(start / 3600))}:${pad(Math.floor(start / 60) % 60)}${start % 60 ? `:${pad(start % 60)}` : ''}`;
  return {
    id: ++drafts,
    dayMask: typeof DayMask === 'number' ? DayMask : 0,
    start: startText,
    hours: String(Math.floor(length / 3600)),
    minutes: String(Math.floor(length / 60) % 60),
    seconds: length % 60,
    holidayTypes: typeof HolidayExceptions === 'number' ? HolidayExceptions : 0,
    rest,
  };
}

/** A new window: Monday to Friday, 08:00 for 10 hours. */
export function newDraft(): WindowDraft {
  return { id: ++drafts, dayMask: 0b0111110, start: '08:00', hours: '10', minutes: '0', seconds: 0, holidayTypes: 0, rest: {} };
}

/** Seconds from midnight of a window's start, or undefined when the text is not a time. */
export function startSeconds(w: WindowDraft): number | undefined {
  const m = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(w.start);
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) return undefined;
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0);
}

/** Seconds of a window's length, or undefined when hours or minutes are not whole numbers. */
export function lengthSeconds(w: WindowDraft): number | undefined {
  if (!/^\d{1,2}$/.test(w.hours.trim()) || !/^\d{1,2}$/.test(w.minutes.trim())) return undefined;
  return Number(w.hours) * 3600 + Number(w.minutes) * 60 + w.seconds;
}

/** `hh:mm:ss`, or `1.00:00:00` for a whole day (hours stop at 23 in the `TimeSpan` text). */
function spanText(seconds: number): string {
  if (seconds === 86_400) return '1.00:00:00';
  return `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}`;
}

/**
 * The windows as `ScheduleDurations`, or the sentence saying what is wrong with the first bad one.
 */
export function itemsOf(windows: readonly WindowDraft[]): { items: Record<string, unknown>[] } | { problem: string } {
  const items: Record<string, unknown>[] = [];
  for (const [i, w] of windows.entries()) {
    const start = startSeconds(w);
    const length = lengthSeconds(w);
    if (start === undefined) return { problem: `Window ${i + 1}: the start is not a time of day.` };
    if (length === undefined || Number(w.minutes) > 59) return { problem: `Window ${i + 1}: the duration needs whole hours and minutes (0 to 59).` };
    if (length <= 0 || length > 86_400) return { problem: `Window ${i + 1}: the duration must be more than zero and at most 24 hours.` };
    if (w.dayMask === 0 && w.holidayTypes === 0) return { problem: `Window ${i + 1}: choose at least one day or holiday type, or remove the window.` };
    items.push({ ...w.rest, DayMask: w.dayMask, StartingAt: spanText(start), Duration: spanText(length), HolidayExceptions: w.holidayTypes });
  }
  return { items };
}

/** "Mon, Tue, Wed 08:00–18:00", in words an operator reads at a glance. */
export function windowSummary(w: WindowDraft): string {
  const days = DAYS.filter((d) => (w.dayMask & (1 << d.bit)) !== 0).map((d) => d.short);
  const start = startSeconds(w);
  const length = lengthSeconds(w);
  const dayText = days.length === 7 ? 'Every day' : days.length ? days.join(', ') : 'No day';
  const holidays = HOLIDAY_TYPES.filter((t) => (w.holidayTypes & (1 << (t - 1))) !== 0);
  const holidayText = holidays.length ? `; holidays of type ${holidays.join(', ')}` : '';
  if (start === undefined || length === undefined) return `${dayText}${holidayText}`;
  const end = start + length;
  const clock = (s: number) => (s === 86_400 ? '24:00' : `${pad(Math.floor(s / 3600) % 24)}:${pad(Math.floor(s / 60) % 60)}`);
  const next = end > 86_400 ? ' (next day)' : '';
  return `${dayText} ${clock(start)}–${clock(end)}${next}${holidayText}`;
}
