/**
 * Inputs, input scanners, input status, service containers. The device types whose fields the
 * spec does not show (inputs, outputs, readers, controllers, doors) are BaseInfo, every other
 * field kept (see index.ts).
 */
import * as z from 'zod/mini';
import { LIMITS, builtOnce, commonSchemas, optionalBoolean, optionalInt, optionalString } from './common.ts';

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
  return { inputScannerReportingPrioritySchema, inputScannerInfoSchema, inputStatusItemSchema, serviceContainerInfoSchema };
});

type Devices = ReturnType<typeof deviceSchemas>;
export type InputScannerInfo = z.infer<Devices['inputScannerInfoSchema']>;
export type InputStatusItem = z.infer<Devices['inputStatusItemSchema']>;
export type ServiceContainerInfo = z.infer<Devices['serviceContainerInfoSchema']>;
