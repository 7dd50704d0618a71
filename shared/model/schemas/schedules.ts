/** ScheduleInfo and HolidayInfo. */
import * as z from 'zod/mini';
import { builtOnce, commonSchemas, optionalBoolean, optionalDateTime, optionalInt } from './common.ts';

/** ScheduleInfo, built on first use (see `builtOnce`). HolidayInfo's fields beyond BaseInfo are not shown: kept as sent. */
export const scheduleInfoSchema = builtOnce(() =>
  z.looseObject({
    ...commonSchemas().baseInfoShape,
    Index: optionalInt(),
    IsReadOnly: optionalBoolean(),
    IsAlways: optionalBoolean(),
    /** Element shape not shown by the spec: kept as sent. */
    ScheduleDurations: z.nullish(z.array(z.unknown()).check(z.maxLength(10_000))),
    OneOffDate: optionalDateTime(),
  }),
);
export type ScheduleInfo = z.infer<ReturnType<typeof scheduleInfoSchema>>;
