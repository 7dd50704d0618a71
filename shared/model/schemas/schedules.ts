/** ScheduleInfo and HolidayInfo. */
import * as z from 'zod/mini';
import { isTimeOfDay, isWindowDuration } from '../time.ts';
import { LIMITS, builtOnce, commonSchemas, optionalBoolean, optionalDateTime, optionalInt } from './common.ts';

const intIn = (min: number, max: number) => z.number().check(z.int()).check(z.gte(min)).check(z.lte(max));

/** A calendar date `YYYY-MM-DD` that exists (no 2026-02-30). */
const calendarDate = () =>
  z.string().check(
    z.refine(
      (s) => {
        const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
        if (!m) return false;
        const d = new Date(`${s}T00:00:00Z`);
        return !Number.isNaN(d.getTime()) && d.getUTCMonth() + 1 === Number(m[2]) && d.getUTCDate() === Number(m[3]);
      },
      { message: 'expected a date YYYY-MM-DD' },
    ),
  );

/** The schedule and holiday schemas, built on first use (see `builtOnce`). */
export const scheduleSchemas = builtOnce(() => {
  const { baseInfoShape } = commonSchemas();
  /**
   * A ScheduleDurationItem: the window [StartingAt, StartingAt + Duration) in the reader's local
   * time on each day of DayMask (bit 0 = Sunday); on a holiday, the items whose
   * HolidayExceptions include one of its types. `Holiday` and other fields are kept as sent.
   */
  const scheduleDurationItemSchema = z.looseObject({
    $type: z.optional(z.string().check(z.maxLength(LIMITS.code))),
    DayMask: intIn(0, 127),
    StartingAt: z.string().check(z.refine(isTimeOfDay, { message: 'expected a time of day "hh:mm:ss" from 00:00:00 to 23:59:59' })),
    Duration: z
      .string()
      .check(z.refine(isWindowDuration, { message: 'expected a duration "hh:mm:ss" (or "d.hh:mm:ss") of more than zero and at most 24 hours' })),
    HolidayExceptions: z.nullish(intIn(0, 255)),
  });

  const scheduleInfoSchema = z.looseObject({
    ...baseInfoShape,
    Index: optionalInt(),
    IsReadOnly: optionalBoolean(),
    IsAlways: optionalBoolean(),
    ScheduleDurations: z.nullish(z.array(scheduleDurationItemSchema).check(z.maxLength(1_000))),
    OneOffDate: optionalDateTime(),
  });

  /** One day (or run of days) of a holiday: its local date, how many days, and its types (bit n−1 = type n). */
  const holidayDaySchema = z.looseObject({
    $type: z.optional(z.string().check(z.maxLength(LIMITS.code))),
    Date: calendarDate(),
    NumberOfDays: z.nullish(intIn(1, 366)),
    HolidayTypes: intIn(1, 255),
  });

  /** HolidayInfo: BaseInfo and its HolidayDays (the original's other fields are not public: kept as sent). */
  const holidayInfoSchema = z.looseObject({
    ...baseInfoShape,
    HolidayDays: z.nullish(z.array(holidayDaySchema).check(z.maxLength(1_000))),
  });
  return { scheduleDurationItemSchema, scheduleInfoSchema, holidayDaySchema, holidayInfoSchema };
});

/** ScheduleInfo, built on first use. */
export const scheduleInfoSchema = () => scheduleSchemas().scheduleInfoSchema;

type Schedules = ReturnType<typeof scheduleSchemas>;
export type ScheduleInfo = z.infer<Schedules['scheduleInfoSchema']>;
export type ScheduleDurationItem = z.infer<Schedules['scheduleDurationItemSchema']>;
export type HolidayInfo = z.infer<Schedules['holidayInfoSchema']>;
