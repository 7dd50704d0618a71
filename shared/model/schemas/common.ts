/**
 * Shared pieces of the type schemas: BaseInfo (common to every object), the nested elements the
 * spec types (MonikerItem, ObjectLinkItem, MetadataItem, NoteInfo, Link, Anchor) and the limits.
 *
 * Every schema is a loose object: fields the spec does not show (vendor fields such as
 * `FacilityCode`, `CardFormat`, `Description`) pass through unchanged. The schemas validate; the
 * stored document is the client's own JSON (normalised), so key order and values round-trip.
 * `$type` values are normalised to bare type names before validation (see `objects/validate.ts`).
 */
import * as z from 'zod';

/** Limits that keep a document well inside one DynamoDB item (400 KB) and a claim key (2 KB). */
export const LIMITS = Object.freeze({
  /** CommonName and other names that become unique claims. */
  name: 512,
  /** The same in UTF-8 bytes: a name is part of index sort keys (≤ 1024 bytes with the object key). */
  nameBytes: 900,
  /** Short identifiers and codes (card numbers, facility codes, moniker parts, tags). */
  code: 256,
  /** Any string anywhere in a body (Metadata values are JSON text, notes are prose). */
  text: 65_536,
  /** Any array anywhere in a body. */
  array: 10_000,
  /** Keys of one JSON object. */
  keys: 1_000,
  /** Nesting depth of a body. */
  depth: 32,
  /** The stored document, serialised (notes included). */
  docBytes: 350_000,
  /** Card assignments of one person: all of them are claimed in one transaction (≤ 100 items). */
  cards: 48,
  /** Notes kept on one object. */
  notes: 1_000,
});

const str = (max: number = LIMITS.text) => z.string().max(max);
export const optionalString = (max: number = LIMITS.text) => str(max).nullish();

/** A CommonName: it is indexed (search) and claimed (unique names), so its UTF-8 size is bounded too. */
export const nameString = () =>
  z
    .string()
    .max(LIMITS.name)
    .refine((s) => Buffer.byteLength(s, 'utf8') <= LIMITS.nameBytes, { message: `longer than ${LIMITS.nameBytes} bytes (UTF-8)` });
export const optionalBoolean = () => z.boolean().nullish();
export const optionalInt = () => z.number().int().nullish();

/** A date-time as .NET clients send it (`2024-05-01T12:00:00Z`, offset or none). */
export const dateTime = () =>
  z
    .string()
    .max(64)
    .refine((s) => !Number.isNaN(Date.parse(s)), { message: 'expected an ISO 8601 date-time' });
export const optionalDateTime = () => dateTime().nullish();

/** `$type` on a nested element, bare name (normalised), optional: the server fills it in. */
const nestedType = z.string().max(LIMITS.code).optional();

export const monikerItemSchema = z.looseObject({
  $type: nestedType,
  Namespace: optionalString(LIMITS.code),
  Nickname: optionalString(LIMITS.code),
});
export type MonikerItem = z.infer<typeof monikerItemSchema>;

export const objectLinkItemSchema = z.looseObject({
  $type: nestedType,
  Href: optionalString(1024),
  LinkedObjectKey: optionalString(LIMITS.code),
  CommonName: optionalString(LIMITS.name),
  Relation: optionalString(LIMITS.code),
  /** .NET serialises a byte array as base64 text; some clients send the numbers. */
  MetaDataBson: z.union([z.string(), z.array(z.number().int().min(0).max(255))]).nullish(),
});
export type ObjectLinkItem = z.infer<typeof objectLinkItemSchema>;

/** MetadataItem's fields are not shown by the spec; clients send `Values` as a JSON string. */
export const metadataItemSchema = z.looseObject({ $type: nestedType });
export type MetadataItem = z.infer<typeof metadataItemSchema>;

export const anchorSchema = z.looseObject({ $type: nestedType, Href: optionalString(1024), Text: optionalString(LIMITS.code) });
export const linkSchema = z.looseObject({ $type: nestedType, Relation: optionalString(LIMITS.code), Anchor: anchorSchema.nullish() });
export type Link = z.infer<typeof linkSchema>;

/**
 * BaseInfo, common to all objects. Read-only fields are accepted (a client may send back what it
 * read) and then replaced by the server; `ConcurrencyVersion` is the version the client edited.
 */
export const baseInfoShape = {
  $type: z.string().max(LIMITS.code),
  Key: z.unknown().optional(),
  Href: z.unknown().optional(),
  Links: z.unknown().optional(),
  InFolderHref: z.unknown().optional(),
  InFolderKey: optionalString(LIMITS.code),
  ConcurrencyVersion: z.number().int().min(0).nullish(),
  CommonName: nameString().nullish(),
  IsGlobal: optionalBoolean(),
  Metadata: z.array(metadataItemSchema).max(1_000).nullish(),
  Monikers: z.array(monikerItemSchema).max(100).nullish(),
  /** Notes are added with POST <Href>/notes; those sent with a create become notes too. */
  Notes: z.array(z.looseObject({ NoteText: optionalString() })).max(LIMITS.notes).nullish(),
  ObjectLinks: z.array(objectLinkItemSchema).max(LIMITS.array).nullish(),
  Tags: z.array(str(LIMITS.code)).max(1_000).nullish(),
} as const;

export const baseInfoSchema = z.looseObject(baseInfoShape);
export type BaseInfo = z.infer<typeof baseInfoSchema>;

/**
 * Array fields whose elements the spec types without the client having to say so: the element
 * `$type` is filled in when absent (stored bare, rendered with the namespace).
 */
export const ELEMENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  Metadata: 'MetadataItem',
  Monikers: 'MonikerItem',
  ObjectLinks: 'ObjectLinkItem',
  Notes: 'NoteInfo',
  CardAssignments: 'CardAssignmentInfo',
  InputScannerReportingPriorities: 'InputScannerReportingPriority',
  Links: 'Link',
});

/**
 * Array fields whose elements are one of several types: the fields that only each type has, so an
 * element sent without `$type` can be given the one type it fits (`Addresses`).
 */
export const POLYMORPHIC_ELEMENTS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = Object.freeze({
  Addresses: {
    EmailAddressInfo: ['MailTo'],
    PhoneInfo: ['Number'],
    MailingAddressInfo: ['Street', 'City', 'Province', 'PostalCode', 'Country'],
  },
});
