/** PersonInfo: BaseInfo plus names, polymorphic addresses and card assignments. */
import * as z from 'zod/mini';
import { LIMITS, baseInfoShape, optionalDateTime, optionalString } from './common.ts';

export const mailingAddressInfoSchema = z.looseObject({
  $type: z.literal('MailingAddressInfo'),
  Street: optionalString(1024),
  City: optionalString(LIMITS.code),
  Province: optionalString(LIMITS.code),
  PostalCode: optionalString(LIMITS.code),
  Country: optionalString(LIMITS.code),
  Type: optionalString(LIMITS.code),
});

export const emailAddressInfoSchema = z.looseObject({
  $type: z.literal('EmailAddressInfo'),
  MailTo: optionalString(LIMITS.code),
  Type: optionalString(LIMITS.code),
});

export const phoneInfoSchema = z.looseObject({
  $type: z.literal('PhoneInfo'),
  Number: optionalString(LIMITS.code),
  Type: optionalString(LIMITS.code),
});

export const ADDRESS_TYPES = ['MailingAddressInfo', 'EmailAddressInfo', 'PhoneInfo'] as const;

/** An address: its `$type` selects the concrete type. */
export const addressSchema = z.discriminatedUnion('$type', [mailingAddressInfoSchema, emailAddressInfoSchema, phoneInfoSchema], {
  error: () => `expected $type ${ADDRESS_TYPES.join(', ')}`,
});
export type Address = z.infer<typeof addressSchema>;

/**
 * A card number: the spec says number (64-bit in the field: above 2^53 it arrives as a `bigint`
 * from the lossless JSON parser); string forms are kept as sent (long or hex encodings).
 */
export const cardNumberSchema = z.union([z.number().check(z.int()).check(z.gte(0)), z.bigint().check(z.gte(0n)), z.string().check(z.minLength(1)).check(z.maxLength(LIMITS.code))], {
  error: () => 'expected a number',
});
/** Facility codes are vendor fields; numbers and strings both occur. */
export const facilityCodeSchema = z.union([z.number().check(z.int()), z.string().check(z.maxLength(LIMITS.code))], {
  error: () => 'expected a number or a string',
});

export const cardAssignmentInfoSchema = z.looseObject({
  $type: z.optional(z.string().check(z.maxLength(LIMITS.code))),
  EncodedCardNumber: z.nullish(cardNumberSchema),
  DisplayCardNumber: optionalString(LIMITS.code),
  ActiveOn: optionalDateTime(),
  ExpiresOn: optionalDateTime(),
  FacilityCode: z.nullish(facilityCodeSchema),
});
export type CardAssignmentInfo = z.infer<typeof cardAssignmentInfoSchema>;

export const personInfoSchema = z.looseObject({
  ...baseInfoShape,
  GivenName: optionalString(LIMITS.name),
  Surname: optionalString(LIMITS.name),
  Addresses: z.nullish(z.array(addressSchema).check(z.maxLength(100))),
  CardAssignments: z.nullish(z.array(cardAssignmentInfoSchema).check(z.maxLength(LIMITS.cards))),
});
export type PersonInfo = z.infer<typeof personInfoSchema>;
