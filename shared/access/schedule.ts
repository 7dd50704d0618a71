/**
 * Schedules in a reader's local time: the stored `ScheduleInfo` and `HolidayInfo` read into the
 * engine's facts, and whether a schedule is active at an instant.
 *
 * Local time comes from `Intl.DateTimeFormat` (Node's full ICU holds the IANA database); no zone
 * library is installed, and none is needed: the engine only asks "what is the wall clock at this
 * instant", never "which instant has this wall clock". A window is a range of wall-clock times,
 * so an instant is inside it when its wall clock is, which gives the daylight saving rules of
 * issue 36 without a special case:
 *
 * - a window starting in a skipped hour begins at the first instant after the gap (the wall clock
 *   jumps from before the start to after it); a window lying wholly inside the gap is empty;
 * - an hour that occurs twice is inside a window both times (the wall clock shows it twice);
 * - a 24-hour window covers its whole day, 23 or 25 hours long.
 *
 * Pure: no I/O, no clock (a controller holding a download can evaluate offline).
 */
import { parseTimeSpan, isTimeZone } from '../model/time.ts';
import type { HolidayDay, ObjectRef, ScheduleRule, ScheduleWindow } from './decision.ts';

const MS_PER_DAY = 86_400_000;

type Doc = Readonly<Record<string, unknown>>;
const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/**
 * One `ScheduleDurationItem` as a window, or null when it is not a valid one (a document stored
 * before schedules were validated): such an item never grants.
 */
export function parseScheduleDuration(item: unknown): ScheduleWindow | null {
  if (!isDoc(item)) return null;
  const { DayMask, StartingAt, Duration, HolidayExceptions } = item;
  if (!isInt(DayMask) || DayMask < 0 || DayMask > 127) return null;
  if (typeof StartingAt !== 'string' || typeof Duration !== 'string') return null;
  const start = parseTimeSpan(StartingAt);
  const duration = parseTimeSpan(Duration);
  if (start === undefined || start >= 86_400 || duration === undefined || duration <= 0 || duration > 86_400) return null;
  const exceptions = HolidayExceptions ?? 0;
  if (!isInt(exceptions) || exceptions < 0 || exceptions > 255) return null;
  return { dayMask: DayMask, startSeconds: start, durationSeconds: duration, holidayExceptions: exceptions };
}

/** A stored `ScheduleInfo` as the engine reads it. */
export function scheduleRuleOf(ref: ObjectRef, doc: Doc): ScheduleRule {
  const items = Array.isArray(doc.ScheduleDurations) ? doc.ScheduleDurations : [];
  return {
    ref,
    isAlways: doc.IsAlways === true,
    windows: items.map(parseScheduleDuration).filter((w): w is ScheduleWindow => w !== null),
  };
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The day number (days since 1970-01-01) of a `YYYY-MM-DD` calendar date, or undefined when it is not one. */
function dayNumberOf(date: string): number | undefined {
  const m = DATE.exec(date);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = wallTime(y, mo, d, 0, 0, 0);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return t / MS_PER_DAY;
}

/** One `HolidayDays` element, or null when it is not a valid one. */
function parseHolidayDay(item: unknown): HolidayDay | null {
  if (!isDoc(item) || typeof item.Date !== 'string' || dayNumberOf(item.Date) === undefined) return null;
  const days = item.NumberOfDays ?? 1;
  const types = item.HolidayTypes;
  if (!isInt(days) || days < 1 || days > 366 || !isInt(types) || types < 1 || types > 255) return null;
  return { date: item.Date, numberOfDays: days, holidayTypes: types };
}

/** The holiday days of a stored `HolidayInfo`. */
export function holidayDaysOf(doc: Doc): HolidayDay[] {
  const items = Array.isArray(doc.HolidayDays) ? doc.HolidayDays : [];
  return items.map(parseHolidayDay).filter((h): h is HolidayDay => h !== null);
}

// ---------------------------------------------------------------------------------------------
// Wall clocks.

/** Milliseconds of a wall-clock time counted as if it were UTC (years below 100 kept as written). */
function wallTime(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    if (!isTimeZone(timeZone)) throw new RangeError(`Unknown time zone: ${timeZone}`);
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall clock of an instant in a zone. */
export interface LocalClock {
  /** The wall-clock time in milliseconds, counted as if it were UTC (so `Date` UTC getters read it). */
  readonly wall: number;
  /** The zone's offset at that instant, in seconds east of UTC. */
  readonly offsetSeconds: number;
}

/** The wall clock of `at` in `timeZone` (an IANA name; RangeError for one `Intl` does not know). */
export function localClock(at: Date, timeZone: string): LocalClock {
  const t = at.getTime();
  const whole = Math.floor(t / 1000) * 1000;
  const parts: Record<string, string> = {};
  for (const p of formatterOf(timeZone).formatToParts(new Date(whole))) parts[p.type] = p.value;
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year);
  const wallWhole = wallTime(year, Number(parts.month), Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  const offsetMs = wallWhole - whole;
  return { wall: t + offsetMs, offsetSeconds: offsetMs / 1000 };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `+05:30`, `-04:00`, `+00:00` (seconds of historical offsets are shown when there are any). */
function formatOffset(offsetSeconds: number): string {
  const sign = offsetSeconds < 0 ? '-' : '+';
  const abs = Math.abs(offsetSeconds);
  const hm = `${sign}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}`;
  return abs % 60 === 0 ? hm : `${hm}:${pad(abs % 60)}`;
}

/** `2026-11-27T09:30:00-05:00`: the instant's wall clock in the zone with the offset (milliseconds when there are any). */
export function formatLocalTime(at: Date, timeZone: string): string {
  const { wall, offsetSeconds } = localClock(at, timeZone);
  const w = new Date(wall);
  const ms = w.getUTCMilliseconds();
  const date = `${pad(w.getUTCFullYear(), 4)}-${pad(w.getUTCMonth() + 1)}-${pad(w.getUTCDate())}`;
  const time = `${pad(w.getUTCHours())}:${pad(w.getUTCMinutes())}:${pad(w.getUTCSeconds())}${ms ? `.${pad(ms, 3)}` : ''}`;
  return `${date}T${time}${formatOffset(offsetSeconds)}`;
}

// ---------------------------------------------------------------------------------------------
// Schedules.

/** The holiday types (OR of every holiday covering it) of a local day, 0 when none does. */
function holidayTypesOn(holidays: readonly HolidayDay[], dayNumber: number): number {
  let types = 0;
  for (const h of holidays) {
    const first = dayNumberOf(h.date);
    if (first !== undefined && dayNumber >= first && dayNumber < first + h.numberOfDays) types |= h.holidayTypes;
  }
  return types;
}

/** The windows of a schedule that apply on a local day: its holiday windows on a holiday, its DayMask windows otherwise. */
function windowsOn(rule: ScheduleRule, holidays: readonly HolidayDay[], dayNumber: number): ScheduleWindow[] {
  const types = holidayTypesOn(holidays, dayNumber);
  if (types !== 0) return rule.windows.filter((w) => (w.holidayExceptions & types) !== 0);
  // 1970-01-01 (day 0) was a Thursday: bit 4.
  const weekday = (((dayNumber + 4) % 7) + 7) % 7;
  return rule.windows.filter((w) => (w.dayMask & (1 << weekday)) !== 0);
}

/** What made a schedule active: always, or one of its windows on the local day it starts on. */
export type ActiveBy = { readonly always: true } | { readonly always: false; readonly window: ScheduleWindow; readonly day: string };

/**
 * Why `rule` is active at `at` in the reader's `timeZone`, or null when it is not. A window
 * belongs to the local day it starts on, so the windows of that day and of the day before (one
 * running past midnight) are the candidates.
 */
export function activeBy(rule: ScheduleRule, holidays: readonly HolidayDay[], at: Date, timeZone: string): ActiveBy | null {
  if (rule.isAlways) return { always: true };
  const { wall } = localClock(at, timeZone);
  const today = Math.floor(wall / MS_PER_DAY);
  for (const day of [today, today - 1]) {
    const sinceDayStart = wall - day * MS_PER_DAY;
    for (const w of windowsOn(rule, holidays, day)) {
      if (sinceDayStart >= w.startSeconds * 1000 && sinceDayStart < (w.startSeconds + w.durationSeconds) * 1000) {
        return { always: false, window: w, day: new Date(day * MS_PER_DAY).toISOString().slice(0, 10) };
      }
    }
  }
  return null;
}

/** Whether `rule` is active at `at` in `timeZone` (see {@link activeBy}). */
export function scheduleActiveAt(rule: ScheduleRule, holidays: readonly HolidayDay[], at: Date, timeZone: string): boolean {
  return activeBy(rule, holidays, at, timeZone) !== null;
}
