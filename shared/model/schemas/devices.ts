/**
 * Inputs, input scanners, input status, service containers, and the device types whose fields the
 * spec does not show (outputs, readers, controllers, doors: BaseInfo, every other field kept).
 */
import * as z from 'zod/mini';
import { LIMITS, baseInfoShape, baseInfoSchema, optionalBoolean, optionalInt, optionalString } from './common.ts';

/** InputInfo has exactly the BaseInfo fields (vendor fields are still kept). AscInputInfo derives from it. */
export const inputInfoSchema = baseInfoSchema;
export type InputInfo = z.infer<typeof inputInfoSchema>;

export const inputScannerReportingPrioritySchema = z.looseObject({
  $type: z.optional(z.string().check(z.maxLength(LIMITS.code))),
  CommonName: optionalString(LIMITS.name),
  Priority: optionalInt(),
  StatusCode: optionalInt(),
  MinResistanceCode: optionalInt(),
  MaxResistanceCode: optionalInt(),
});

export const inputScannerInfoSchema = z.looseObject({
  ...baseInfoShape,
  NonSettlingErrorPriority: optionalInt(),
  NonSettlingErrorStatus: optionalInt(),
  InputScannerReportingPriorities: z.nullish(z.array(inputScannerReportingPrioritySchema).check(z.maxLength(1_000))),
});
export type InputScannerInfo = z.infer<typeof inputScannerInfoSchema>;

/** The latest status of an input; its fields beyond `$type` are not shown by the spec. */
export const inputStatusItemSchema = z.looseObject({ $type: z.string().check(z.maxLength(LIMITS.code)) });
export type InputStatusItem = z.infer<typeof inputStatusItemSchema>;

export const serviceContainerInfoSchema = z.looseObject({
  ...baseInfoShape,
  MacAddress: optionalString(64),
  IsAuthenticated: optionalBoolean(),
});
export type ServiceContainerInfo = z.infer<typeof serviceContainerInfoSchema>;

export const outputInfoSchema = baseInfoSchema;
export const vendorReaderInfoSchema = baseInfoSchema;
export const lp1502InfoSchema = baseInfoSchema;
export const doorInfoSchema = baseInfoSchema;
