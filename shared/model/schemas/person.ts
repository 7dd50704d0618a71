/** PersonInfo: BaseInfo plus names, polymorphic addresses and card assignments. */
import * as z from 'zod/mini';
import { MAX_CARD_NUMBER, cardNumberInRange } from '../cards.ts';
import { LIMITS, builtOnce, commonSchemas, optionalBoolean, optionalDateTime, optionalString } from './common.ts';

export const ADDRESS_TYPES = ['MailingAddressInfo', 'EmailAddressInfo', 'PhoneInfo'] as const;

/** The person's schemas, built on first use (see `builtOnce`). */
export const personSchemas = builtOnce(() => {
  const { baseInfoShape } = commonSchemas();
  const mailingAddressInfoSchema = z.looseObject({
    $type: z.literal('MailingAddressInfo'),
    Street: optionalString(1024),
    City: optionalString(LIMITS.code),
    Province: optionalString(LIMITS.code),
    PostalCode: optionalString(LIMITS.code),
    Country: optionalString(LIMITS.code),
    Type: optionalString(LIMITS.code),
  });

  const emailAddressInfoSchema = z.looseObject({
    $type: z.literal('EmailAddressInfo'),
    MailTo: optionalString(LIMITS.code),
    Type: optionalString(LIMITS.code),
  });

  const phoneInfoSchema = z.looseObject({
    $type: z.literal('PhoneInfo'),
    Number: optionalString(LIMITS.code),
    Type: optionalString(LIMITS.code),
  });

  /** An address: its `$type` selects the concrete type. */
  const addressSchema = z.discriminatedUnion('$type', [mailingAddressInfoSchema, emailAddressInfoSchema, phoneInfoSchema], {
    error: () => `expected $type ${ADDRESS_TYPES.join(', ')}`,
  });

  /**
   * A card number: the spec says number (64-bit in the field: above 2^53 it arrives as a `bigint`
   * from the lossless JSON parser), 0 to 2^63-1 (see `cardNumberInRange`); string forms are kept
   * as sent (long or hex encodings), decimal text held to the same range.
   */
  const cardNumberSchema = z
    .union(
      [z.number().check(z.int()).check(z.gte(0)), z.bigint().check(z.gte(0n)), z.string().check(z.minLength(1)).check(z.maxLength(LIMITS.code))],
      { error: () => 'expected a number' },
    )
    .check(z.refine(cardNumberInRange, { message: `expected a card number from 0 to ${MAX_CARD_NUMBER}` }));
  /** Facility codes are vendor fields; numbers and strings both occur. */
  const facilityCodeSchema = z.union([z.number().check(z.int()), z.string().check(z.maxLength(LIMITS.code))], {
    error: () => 'expected a number or a string',
  });

  const count = () => z.nullish(z.number().check(z.int()).check(z.gte(0)));

  /**
   * A card. `ActiveOn` is included, `ExpiresOn` excluded. `PinCode` is write-only (never in an
   * answer; a write without it keeps the stored one, `null` removes it). `OriginalUseCount` 0 or
   * absent is unlimited. `CurrentUseCount` and `LastUsed` are the server's: a write may set
   * `CurrentUseCount` to 0 to re-arm the card, any other value sent is ignored (see card-keys.ts).
   */
  const cardAssignmentInfoSchema = z.looseObject({
    $type: z.optional(z.string().check(z.maxLength(LIMITS.code))),
    EncodedCardNumber: z.nullish(cardNumberSchema),
    DisplayCardNumber: optionalString(LIMITS.code),
    ActiveOn: optionalDateTime(),
    ExpiresOn: optionalDateTime(),
    FacilityCode: z.nullish(facilityCodeSchema),
    IsDisabled: optionalBoolean(),
    PinCode: z
      .nullish(z.string().check(z.regex(/^\d{4,8}$/, { message: 'expected a PIN of 4 to 8 digits' })))
      .register(z.globalRegistry, { writeOnly: true, description: 'Never returned. A write without it keeps the stored PIN; null removes it.' }),
    OriginalUseCount: count(),
    CurrentUseCount: count(),
    LastUsed: optionalDateTime(),
    ExtendedAccess: optionalBoolean(),
    LockdownExempt: optionalBoolean(),
  });

  const personInfoSchema = z.looseObject({
    ...baseInfoShape,
    GivenName: optionalString(LIMITS.name),
    Surname: optionalString(LIMITS.name),
    Addresses: z.nullish(z.array(addressSchema).check(z.maxLength(100))),
    CardAssignments: z.nullish(z.array(cardAssignmentInfoSchema).check(z.maxLength(LIMITS.cards))),
  });
  return {
    mailingAddressInfoSchema,
    emailAddressInfoSchema,
    phoneInfoSchema,
    addressSchema,
    cardNumberSchema,
    facilityCodeSchema,
    cardAssignmentInfoSchema,
    personInfoSchema,
  };
});

type Person = ReturnType<typeof personSchemas>;
export type Address = z.infer<Person['addressSchema']>;
export type CardAssignmentInfo = z.infer<Person['cardAssignmentInfoSchema']>;
export type PersonInfo = z.infer<Person['personInfoSchema']>;
