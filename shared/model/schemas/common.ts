/**
 * Shared pieces of the type schemas: BaseInfo (common to every object), the nested elements the
 * spec types (MonikerItem, ObjectLinkItem, MetadataItem, NoteInfo, Link, Anchor); the limits live in
 * model/limits.ts.
 *
 * Every schema is a loose object: fields the spec does not show (vendor fields such as
 * `FacilityCode`, `CardFormat`, `Description`) pass through unchanged. The schemas validate; the
 * stored document is the client's own JSON (normalised), so key order and values round-trip.
 * `$type` values are normalised to bare type names before validation (see `objects/validate.ts`).
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { LIMITS } from '../limits.ts';
import { isTimeZone } from '../time.ts';

export { ELEMENT_TYPES, LIMITS, POLYMORPHIC_ELEMENTS } from '../limits.ts';

// zod/mini, not the classic API: every family that validates a body would otherwise load and
// evaluate the classic API (most of zod's bytes) at its cold start beside the mini one the config
// already uses. Each classic method call (`.max(n)`) is written as its own `.check(...)` so the
// schemas are built exactly as before (same definitions, same parents: the OpenAPI document
// derived from them does not change). The classic API registers English messages when it builds
// its first schema; mini carries no locale, so the same messages are registered here (unless a
// locale is already set).
if (!z.config().localeError) z.config(en());

const str = (max: number = LIMITS.text) => z.string().check(z.maxLength(max));
export const optionalString = (max: number = LIMITS.text) => z.nullish(str(max));

/** A CommonName: it is indexed (search) and claimed (unique names), so its UTF-8 size is bounded too. */
export const nameString = () =>
  z
    .string()
    .check(z.maxLength(LIMITS.name))
    .check(z.refine((s) => Buffer.byteLength(s, 'utf8') <= LIMITS.nameBytes, { message: `longer than ${LIMITS.nameBytes} bytes (UTF-8)` }));
export const optionalBoolean = () => z.nullish(z.boolean());
export const optionalInt = () => z.nullish(z.number().check(z.int()));

/** A date-time as .NET clients send it (`2024-05-01T12:00:00Z`, offset or none). */
export const dateTime = () =>
  z
    .string()
    .check(z.maxLength(64))
    .check(z.refine((s) => !Number.isNaN(Date.parse(s)), { message: 'expected an ISO 8601 date-time' }));
export const optionalDateTime = () => z.nullish(dateTime());

/** An IANA time zone name `Intl` knows (`America/Toronto`); schedules are evaluated in it. */
export const optionalTimeZone = () =>
  z.nullish(
    z
      .string()
      .check(z.maxLength(64))
      .check(z.refine(isTimeZone, { message: 'expected an IANA time zone name such as America/Toronto' })),
  );

/**
 * A value built on its first use and kept: the schemas. Building them costs CPU (zod constructs
 * hundreds of objects for the model), and most cold starts serve a call that validates no body.
 */
export function builtOnce<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/**
 * The nested elements the spec types (MonikerItem, ObjectLinkItem, MetadataItem, Link, Anchor) and
 * BaseInfo, built on first use; always the same objects (the OpenAPI document refers to them).
 */
export const commonSchemas = builtOnce(() => {
  /** `$type` on a nested element, bare name (normalised), optional: the server fills it in. */
  const nestedType = z.optional(z.string().check(z.maxLength(LIMITS.code)));

  const monikerItemSchema = z.looseObject({
    $type: nestedType,
    Namespace: optionalString(LIMITS.code),
    Nickname: optionalString(LIMITS.code),
  });

  const objectLinkItemSchema = z.looseObject({
    $type: nestedType,
    Href: optionalString(1024),
    LinkedObjectKey: optionalString(LIMITS.code),
    CommonName: optionalString(LIMITS.name),
    Relation: optionalString(LIMITS.code),
    /** .NET serialises a byte array as base64 text; some clients send the numbers. */
    MetaDataBson: z.nullish(z.union([z.string(), z.array(z.number().check(z.int()).check(z.gte(0)).check(z.lte(255)))])),
  });

  /** MetadataItem's fields are not shown by the spec; clients send `Values` as a JSON string. */
  const metadataItemSchema = z.looseObject({ $type: nestedType });

  const anchorSchema = z.looseObject({ $type: nestedType, Href: optionalString(1024), Text: optionalString(LIMITS.code) });
  const linkSchema = z.looseObject({ $type: nestedType, Relation: optionalString(LIMITS.code), Anchor: z.nullish(anchorSchema) });

  /**
   * BaseInfo, common to all objects. Read-only fields are accepted (a client may send back what it
   * read) and then replaced by the server; `ConcurrencyVersion` is the version the client edited.
   */
  const baseInfoShape = {
    $type: z.string().check(z.maxLength(LIMITS.code)),
    Key: z.optional(z.unknown()),
    Href: z.optional(z.unknown()),
    Links: z.optional(z.unknown()),
    InFolderHref: z.optional(z.unknown()),
    InFolderKey: optionalString(LIMITS.code),
    ConcurrencyVersion: z.nullish(z.number().check(z.int()).check(z.gte(0))),
    CommonName: z.nullish(nameString()),
    IsGlobal: optionalBoolean(),
    Metadata: z.nullish(z.array(metadataItemSchema).check(z.maxLength(1_000))),
    Monikers: z.nullish(z.array(monikerItemSchema).check(z.maxLength(100))),
    /** Notes are added with POST <Href>/notes; those sent with a create become notes too. */
    Notes: z.nullish(z.array(z.looseObject({ NoteText: optionalString() })).check(z.maxLength(LIMITS.notes))),
    ObjectLinks: z.nullish(z.array(objectLinkItemSchema).check(z.maxLength(LIMITS.array))),
    Tags: z.nullish(z.array(str(LIMITS.code)).check(z.maxLength(1_000))),
  } as const;

  const baseInfoSchema = z.looseObject(baseInfoShape);
  return { monikerItemSchema, objectLinkItemSchema, metadataItemSchema, anchorSchema, linkSchema, baseInfoShape, baseInfoSchema };
});

type Common = ReturnType<typeof commonSchemas>;
export type MonikerItem = z.infer<Common['monikerItemSchema']>;
export type ObjectLinkItem = z.infer<Common['objectLinkItemSchema']>;
export type MetadataItem = z.infer<Common['metadataItemSchema']>;
export type Link = z.infer<Common['linkSchema']>;
export type BaseInfo = z.infer<Common['baseInfoSchema']>;
