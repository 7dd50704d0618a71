/** ScheduleInfo and HolidayInfo. */
import * as z from 'zod/mini';
import { baseInfoShape, baseInfoSchema, optionalBoolean, optionalDateTime, optionalInt } from './common.ts';

export const scheduleInfoSchema = z.looseObject({
  ...baseInfoShape,
  Index: optionalInt(),
  IsReadOnly: optionalBoolean(),
  IsAlways: optionalBoolean(),
  /** Element shape not shown by the spec: kept as sent. */
  ScheduleDurations: z.nullish(z.array(z.unknown()).check(z.maxLength(10_000))),
  OneOffDate: optionalDateTime(),
});
export type ScheduleInfo = z.infer<typeof scheduleInfoSchema>;

/** Fields beyond BaseInfo are not shown: kept as sent. */
export const holidayInfoSchema = baseInfoSchema;
