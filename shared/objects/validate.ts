/**
 * Turns a request body into a document the repository can store, or a 400 that names the
 * problem:
 *
 * 1. the body is a JSON object whose `$type` names a type the collection holds, whatever its
 *    namespace (else `WrongType`); a body without `$type` is the collection's own type, as the
 *    original service reads it (integrations POST people without one);
 * 2. limits: nesting depth, string and array sizes, keys per object (`ValidationFailed` naming the
 *    field), so an oversized body never reaches DynamoDB as a 500;
 * 3. every `$type` is normalised to its bare type name, typed array elements get theirs, and a
 *    polymorphic element without one (an address) gets the one type its fields fit;
 * 4. the type's zod schema validates the fields (`ValidationFailed` naming the first bad field).
 *    The schemas, and zod with them, load on the first body validated (`import()`): in a bundle
 *    they sit in a chunk that a cold start serving a read never loads.
 *
 * The stored document is the client's own JSON after normalisation, not the schema's output: key
 * order and every vendor field round-trip untouched. Read-only fields are dropped (the server
 * sets them when rendering), write-only fields are handed back separately.
 */
import type * as z from 'zod/mini';
import { COLLECTIONS, type CollectionDef } from '../model/collections.ts';
import { READ_ONLY_FIELDS, WRITE_ONLY_FIELDS } from '../model/render.ts';
import { ELEMENT_TYPES, LIMITS, POLYMORPHIC_ELEMENTS } from '../model/limits.ts';
import { typeNameOf } from '../model/types.ts';
import { stringifyJson } from '../json.ts';
import { invalidField, missingType, wrongType } from './errors.ts';
import { onFirstUse } from '../first-use.ts';

export type Doc = Record<string, unknown>;

export const isPlainObject = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A validated object body. */
export interface ObjectInput {
  /** Bare type name. */
  readonly typeName: string;
  /** The document to store: `$type` (bare) first, read-only, write-only fields and Notes removed. */
  readonly doc: Doc;
  /** The `ConcurrencyVersion` the client edited, if it sent one. */
  readonly version: number | undefined;
  /** The `InFolderKey` the client sent, if any. */
  readonly inFolderKey: string | undefined;
  /** Write-only fields (a user's `Password`). */
  readonly writeOnly: Readonly<Doc>;
  /** Texts of the notes sent with the object (a create turns them into notes). */
  readonly noteTexts: readonly string[];
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

/** Checks the limits of a JSON value, throwing `ValidationFailed` naming the first field over one. */
export function checkLimits(value: unknown, path: Array<string | number> = [], depth = 0): void {
  if (depth > LIMITS.depth) throw invalidField(formatPath(path), `nesting deeper than ${LIMITS.depth} levels`);
  if (typeof value === 'string') {
    if (value.length > LIMITS.text) throw invalidField(formatPath(path), `longer than ${LIMITS.text} characters`);
    return;
  }
  if (Array.isArray(value)) {
    if (value.length > LIMITS.array) throw invalidField(formatPath(path), `more than ${LIMITS.array} elements`);
    value.forEach((x, i) => checkLimits(x, [...path, i], depth + 1));
    return;
  }
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length > LIMITS.keys) throw invalidField(formatPath(path), `more than ${LIMITS.keys} properties`);
    for (const k of keys) {
      if (k.length > LIMITS.code) throw invalidField(formatPath(path), `a property name longer than ${LIMITS.code} characters`);
      checkLimits(value[k], [...path, k], depth + 1);
    }
  }
}

/** Replaces every parseable `$type` by its bare type name, at any depth. */
export function normalizeTypes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeTypes);
  if (!isPlainObject(value)) return value;
  const out: Doc = {};
  for (const [k, v] of Object.entries(value)) out[k] = k === '$type' ? (typeNameOf(v) ?? v) : normalizeTypes(v);
  return out;
}

/** Gives the elements of the typed arrays of a document their bare `$type` when they have none. */
function typeElements(doc: Doc): Doc {
  const out: Doc = { ...doc };
  for (const [field, typeName] of Object.entries(ELEMENT_TYPES)) {
    const list = out[field];
    if (!Array.isArray(list)) continue;
    out[field] = list.map((x) => (isPlainObject(x) && x.$type === undefined ? { $type: typeName, ...x } : x));
  }
  for (const [field, types] of Object.entries(POLYMORPHIC_ELEMENTS)) {
    const list = out[field];
    if (!Array.isArray(list)) continue;
    out[field] = list.map((x, i) => (isPlainObject(x) && (x.$type === undefined || x.$type === null) ? { $type: inferType(types, x, `${field}[${i}]`), ...x } : x));
  }
  return out;
}

/**
 * The concrete type of a polymorphic element sent without `$type`: the one type whose own fields
 * it carries (`MailTo`: an email address). None or several: MissingType naming the element.
 */
function inferType(types: Readonly<Record<string, readonly string[]>>, x: Doc, where: string): string {
  const fits = Object.entries(types).filter(([, fields]) => fields.some((f) => x[f] !== undefined));
  if (fits.length !== 1) throw missingType(where);
  return fits[0]![0];
}

/** The model's zod schemas, loaded on first use (kept: the module is part of the same bundle). */
const loadSchemas = onFirstUse(() => import('../model/schemas/index.ts'));

/** Throws `ValidationFailed` for the first issue of a failed zod parse. */
function validate(schema: z.ZodMiniType, value: unknown): void {
  const r = schema.safeParse(value);
  if (r.success) return;
  const issue = r.error.issues[0]!;
  throw invalidField(formatPath(issue.path as PropertyKey[]), issue.message);
}

/**
 * The bare type name of a body's `$type`; a body without one is of `defaultType` (the type the
 * endpoint declares). WrongType when `$type` is not a type name.
 */
function bodyType(body: unknown, defaultType: string): { body: Doc; typeName: string } {
  if (!isPlainObject(body)) throw invalidField('', 'expected a JSON object');
  if (body.$type === undefined || body.$type === null) return { body: { ...body, $type: defaultType }, typeName: defaultType };
  const typeName = typeNameOf(body.$type);
  if (!typeName) throw wrongType(String(body.$type), ['a type name']);
  return { body, typeName };
}

/** Type names that never belong in a collection accepting "any" type (`'*'`). */
const FOREIGN_TYPES = new Set([
  ...COLLECTIONS.flatMap((c) => [c.typeName, ...(Array.isArray(c.acceptsTypes) ? c.acceptsTypes : [])]),
  ...['NoteInfo', 'InputStatusItem', 'EventTypeInfo', 'EventMessagePosting', 'EventMessageData', 'SysInfo', 'ReleaseNote'],
  ...['MonikerItem', 'ObjectLinkItem', 'Link', 'Anchor', 'MetadataItem', 'CardAssignmentInfo', 'InputScannerReportingPriority'],
  ...['MailingAddressInfo', 'EmailAddressInfo', 'PhoneInfo'],
]);

/** Whether a collection holds objects of a type. */
export function accepts(def: CollectionDef, typeName: string): boolean {
  if (typeName === def.typeName) return true;
  if (def.acceptsTypes === '*') return !FOREIGN_TYPES.has(typeName);
  return def.acceptsTypes?.includes(typeName) ?? false;
}

const expectedTypes = (def: CollectionDef): string[] =>
  def.acceptsTypes === '*' ? [def.typeName, `another ${def.name} type`] : [def.typeName, ...(def.acceptsTypes ?? [])];

/** Validates an object body for a collection. */
export async function parseObjectBody(body: unknown, def: CollectionDef): Promise<ObjectInput> {
  const { body: raw, typeName } = bodyType(body, def.typeName);
  if (!accepts(def, typeName)) throw wrongType(String(raw.$type), expectedTypes(def));
  checkLimits(raw);
  const normalized = typeElements(normalizeTypes(raw) as Doc);
  validate((await loadSchemas()).schemaFor(typeName, def.name), normalized);

  const doc: Doc = { $type: typeName };
  const writeOnly: Doc = {};
  for (const [k, v] of Object.entries(normalized)) {
    if (k === '$type' || k === 'Notes' || READ_ONLY_FIELDS.includes(k)) continue;
    if (WRITE_ONLY_FIELDS.includes(k)) writeOnly[k] = v;
    else doc[k] = v;
  }
  const notes = Array.isArray(normalized.Notes) ? (normalized.Notes as Doc[]) : [];
  return {
    typeName,
    doc,
    version: typeof raw.ConcurrencyVersion === 'number' ? raw.ConcurrencyVersion : undefined,
    inFolderKey: typeof raw.InFolderKey === 'string' && raw.InFolderKey !== '' ? raw.InFolderKey : undefined,
    writeOnly,
    noteTexts: notes.map((n) => (typeof n.NoteText === 'string' ? n.NoteText : '')).filter((t) => t !== ''),
  };
}

/** Validates the body of a sub-resource (NoteInfo, InputStatusItem) and returns it normalised. */
export async function parseElementBody(body: unknown, typeName: string): Promise<Doc> {
  const { body: raw, typeName: got } = bodyType(body, typeName);
  if (got !== typeName) throw wrongType(String(raw.$type), [typeName]);
  checkLimits(raw);
  const normalized = normalizeTypes(raw) as Doc;
  validate((await loadSchemas()).schemaFor(typeName), normalized);
  return normalized;
}

/** Throws `ValidationFailed` when a document would not fit in one item. */
export function checkDocSize(doc: Doc): void {
  const bytes = Buffer.byteLength(stringifyJson(doc));
  if (bytes > LIMITS.docBytes) throw invalidField('', `the object is too large (${bytes} bytes; at most ${LIMITS.docBytes})`);
}

/** JSON text with object keys sorted: equal for documents that differ only in key order. */
export function canonicalJson(v: unknown): string {
  return stringifyJson(sortKeys(v));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isPlainObject(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
}
