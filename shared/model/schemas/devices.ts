/**
 * Inputs, input scanners, input status, service containers, and the fields of readers and
 * controllers the access decisions read (issue 36). The device types whose fields the spec does
 * not show (inputs, outputs, doors) are BaseInfo, every other field kept (see index.ts).
 */
import * as z from 'zod/mini';
import { ACCESS_METHODS } from '../readers.ts';
import { LIMITS, builtOnce, commonSchemas, optionalBoolean, optionalInt, optionalString, optionalTimeZone } from './common.ts';

/** The device schemas, built on first use (see `builtOnce`). */
export const deviceSchemas = builtOnce(() => {
  const { baseInfoShape } = commonSchemas();
  const inputScannerReportingPrioritySchema = z.looseObject({
    $type: z.optional(z.string().check(z.maxLength(LIMITS.code))),
    CommonName: optionalString(LIMITS.name),
    Priority: optionalInt(),
    StatusCode: optionalInt(),
    MinResistanceCode: optionalInt(),
    MaxResistanceCode: optionalInt(),
  });

  const inputScannerInfoSchema = z.looseObject({
    ...baseInfoShape,
    NonSettlingErrorPriority: optionalInt(),
    NonSettlingErrorStatus: optionalInt(),
    InputScannerReportingPriorities: z.nullish(z.array(inputScannerReportingPrioritySchema).check(z.maxLength(1_000))),
  });

  /** The latest status of an input; its fields beyond `$type` are not shown by the spec. */
  const inputStatusItemSchema = z.looseObject({ $type: z.string().check(z.maxLength(LIMITS.code)) });

  const serviceContainerInfoSchema = z.looseObject({
    ...baseInfoShape,
    MacAddress: optionalString(64),
    IsAuthenticated: optionalBoolean(),
  });
  const seconds = () => z.nullish(z.number().check(z.int()).check(z.gte(0)));

  /**
   * A reader, whatever its type (the readers collection keeps vendor types as sent): its mode
   * (`AccessMethod` 0 card only, 2 card and PIN, 5 unlocked, 6 locked down; absent is 0) and its
   * strike times in seconds (absent: 5 and 15).
   */
  const readerInfoSchema = z.looseObject({
    ...baseInfoShape,
    AccessMethod: z.nullish(
      z.number().check(z.refine((n) => (ACCESS_METHODS as readonly number[]).includes(n), { message: `expected one of ${ACCESS_METHODS.join(', ')}` })),
    ),
    NormalGrantAccessTime: seconds(),
    ExtendedGrantAccessTime: seconds(),
  });

  /** A controller, whatever its type: the IANA zone its readers decide in. */
  const controllerInfoSchema = z.looseObject({ ...baseInfoShape, TimeZone: optionalTimeZone() });
  return {
    inputScannerReportingPrioritySchema,
    inputScannerInfoSchema,
    inputStatusItemSchema,
    serviceContainerInfoSchema,
    readerInfoSchema,
    controllerInfoSchema,
  };
});

type Devices = ReturnType<typeof deviceSchemas>;
export type InputScannerInfo = z.infer<Devices['inputScannerInfoSchema']>;
export type InputStatusItem = z.infer<Devices['inputStatusItemSchema']>;
export type ServiceContainerInfo = z.infer<Devices['serviceContainerInfoSchema']>;
export type ReaderInfo = z.infer<Devices['readerInfoSchema']>;
export type ControllerInfo = z.infer<Devices['controllerInfoSchema']>;
