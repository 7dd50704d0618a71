/** ScheduleInfo and HolidayInfo. */
import * as z from 'zod';
import { baseInfoShape, baseInfoSchema, optionalBoolean, optionalDateTime, optionalInt } from './common.ts';

export const scheduleInfoSchema = z.looseObject({
  ...baseInfoShape,
  Index: optionalInt(),
  IsReadOnly: optionalBoolean(),
  IsAlways: optionalBoolean(),
  /** Element shape not shown by the spec: kept as sent. */
  ScheduleDurations: z.array(z.unknown()).max(10_000).nullish(),
  OneOffDate: optionalDateTime(),
});
export type ScheduleInfo = z.infer<typeof scheduleInfoSchema>;

/** Fields beyond BaseInfo are not shown: kept as sent. */
export const holidayInfoSchema = baseInfoSchema;
