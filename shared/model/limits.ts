/**
 * The model's limits and element types: plain values, without the zod schemas that validate bodies
 * (model/schemas/, loaded by the first request that carries one), so that the code every request
 * runs (rendering, reads) can use them without loading zod.
 */

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
