/**
 * The validity window of a scheduled access level (relation `ScheduledAccessLevel`): `ActiveOn`
 * and `ExpiresOn`, UTC, either null. The connection item stores them as ISO strings; the person's
 * ObjectLinkItem shows them as `MetaDataBson`, base64 of the BSON document
 * `{ActiveOn: Date|null, ExpiresOn: Date|null}`, which is also the form clients send.
 *
 * The BSON of this one document is read and written here, not with the `bson` package: bson (every
 * BSON type, the decoder and the extended JSON) would ship in every family bundle that reaches
 * this module, for a codec this small. The document is fixed (two fields; dates, null, or ISO strings sent by clients), and
 * `test/unit/relations-window.test.ts` checks it byte for byte against `bson` itself.
 */
import { ApiError, validationFailed } from '../errors.ts';
import { parseIsoDateTime } from '../http/params.ts';

export interface Window {
  /** ISO 8601 UTC (`toISOString`), or null: active from the start. */
  readonly activeOn: string | null;
  /** ISO 8601 UTC, or null: never expires. */
  readonly expiresOn: string | null;
}

export const OPEN_WINDOW: Window = Object.freeze({ activeOn: null, expiresOn: null });

/** Two dates and their names take under 60 bytes; anything much larger is not a window. */
export const MAX_METADATA_BYTES = 1024;

const FIELDS = ['ActiveOn', 'ExpiresOn'] as const;
/** .NET's DateTime range: years 1 to 9999 (and `toISOString` stays in its plain form). */
const MIN_MS = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

const invalidMetaData = (message: string) => new ApiError(400, 'InvalidMetaData', message);
const invalidWindow = (message: string) => new ApiError(400, 'InvalidWindow', message);

/** BSON element types this document may hold. */
const BSON_STRING = 0x02;
const BSON_UNDEFINED = 0x06;
const BSON_DATE = 0x09;
const BSON_NULL = 0x0a;

/** The window a connection item holds (open when it holds none). */
export const windowOf = (c: { readonly activeOn?: string | null; readonly expiresOn?: string | null }): Window => ({
  activeOn: c.activeOn ?? null,
  expiresOn: c.expiresOn ?? null,
});

export const sameWindow = (a: Window, b: Window): boolean => a.activeOn === b.activeOn && a.expiresOn === b.expiresOn;

/** True when the window holds `now` (a null bound is open). */
export const windowHolds = (w: Window, now: Date): boolean => {
  const t = now.toISOString();
  return (w.activeOn === null || w.activeOn <= t) && (w.expiresOn === null || t < w.expiresOn);
};

function instant(d: Date, field: string, fail: (m: string) => ApiError): string {
  const ms = d.getTime();
  if (Number.isNaN(ms) || ms < MIN_MS || ms > MAX_MS) throw fail(`${field} is not a date between the years 1 and 9999.`);
  return d.toISOString();
}

function ordered(w: Window): Window {
  if (w.activeOn !== null && w.expiresOn !== null && w.activeOn > w.expiresOn) {
    throw invalidWindow(`ActiveOn (${w.activeOn}) is after ExpiresOn (${w.expiresOn}).`);
  }
  return w;
}

/**
 * The window of a connect call's JSON body `{ActiveOn, ExpiresOn}` (ISO date-times or null; one
 * without a zone is UTC). No body, `null` or `{}` is the open window. `$type` is ignored; any
 * other field is refused, so a misspelt field does not silently leave the window open.
 */
export function windowFromBody(body: unknown): Window {
  if (body === undefined || body === null) return OPEN_WINDOW;
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw validationFailed('The body of a ScheduledAccessLevel connection must be an object {ActiveOn, ExpiresOn}.');
  }
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => k !== '$type' && !(FIELDS as readonly string[]).includes(k));
  if (unknown.length > 0) throw validationFailed(`Unknown field ${unknown[0]!.slice(0, 64)}: the body holds only ActiveOn and ExpiresOn.`);
  const read = (field: (typeof FIELDS)[number]): string | null => {
    const v = fields[field];
    if (v === undefined || v === null) return null;
    const d = typeof v === 'string' && v.length <= 64 ? parseIsoDateTime(v) : undefined;
    if (!d) throw validationFailed(`${field} must be an ISO 8601 date-time or null.`);
    return instant(d, field, validationFailed);
  };
  return ordered({ activeOn: read('ActiveOn'), expiresOn: read('ExpiresOn') });
}

function metaDataBytes(value: unknown): Buffer {
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.length > Math.ceil(MAX_METADATA_BYTES / 3) * 4) throw invalidMetaData(`MetaDataBson is larger than ${MAX_METADATA_BYTES} bytes.`);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw invalidMetaData('MetaDataBson is not base64.');
    return Buffer.from(text, 'base64');
  }
  if (Array.isArray(value)) {
    if (value.length > MAX_METADATA_BYTES) throw invalidMetaData(`MetaDataBson is larger than ${MAX_METADATA_BYTES} bytes.`);
    if (!value.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) throw invalidMetaData('MetaDataBson must be base64 text or an array of bytes.');
    return Buffer.from(value as number[]);
  }
  throw invalidMetaData('MetaDataBson must be base64 text of a BSON document {ActiveOn, ExpiresOn}.');
}

type Field = (typeof FIELDS)[number];
const isField = (name: string): name is Field => (FIELDS as readonly string[]).includes(name);

/**
 * Reads a flat BSON document of ActiveOn and ExpiresOn: int32 size, elements (type byte, cstring
 * name, value), a closing 0. Every length is checked against the buffer before it is used.
 */
function readDocument(bytes: Buffer): Map<Field, Date | string | null> {
  const malformed = () => invalidMetaData('MetaDataBson does not hold a BSON document.');
  const end = bytes.length - 1;
  if (bytes.length < 5 || bytes.readInt32LE(0) !== bytes.length || bytes[end] !== 0) throw malformed();
  const out = new Map<Field, Date | string | null>();
  let i = 4;
  while (i < end) {
    const type = bytes[i++]!;
    const nul = bytes.indexOf(0, i);
    if (nul < 0 || nul >= end) throw malformed();
    const name = bytes.toString('utf8', i, nul);
    i = nul + 1;
    if (!isField(name)) throw invalidMetaData(`MetaDataBson holds only ActiveOn and ExpiresOn, not ${name.slice(0, 64)}.`);
    if (out.has(name)) throw invalidMetaData(`MetaDataBson holds ${name} twice.`);
    if (type === BSON_DATE) {
      if (i + 8 > end) throw malformed();
      out.set(name, new Date(Number(bytes.readBigInt64LE(i))));
      i += 8;
    } else if (type === BSON_NULL || type === BSON_UNDEFINED) {
      out.set(name, null);
    } else if (type === BSON_STRING) {
      if (i + 4 > end) throw malformed();
      const size = bytes.readInt32LE(i);
      i += 4;
      if (size < 1 || i + size > end || bytes[i + size - 1] !== 0) throw malformed();
      out.set(name, bytes.toString('utf8', i, i + size - 1));
      i += size;
    } else {
      throw invalidMetaData(`${name} in MetaDataBson must be a BSON date, an ISO 8601 string or null.`);
    }
  }
  return out;
}

/**
 * The window a link's `MetaDataBson` holds: base64 text (or an array of bytes) of one BSON
 * document whose only fields are ActiveOn and ExpiresOn, each a BSON date, an ISO string or null.
 * Absent, null or empty is the open window. Anything else is a 400 `InvalidMetaData`; ActiveOn
 * after ExpiresOn is a 400 `InvalidWindow`.
 */
export function windowFromMetaData(value: unknown): Window {
  if (value === undefined || value === null || value === '') return OPEN_WINDOW;
  const bytes = metaDataBytes(value);
  if (bytes.length === 0) return OPEN_WINDOW;
  const doc = readDocument(bytes);
  const read = (field: Field): string | null => {
    const v = doc.get(field);
    if (v === undefined || v === null) return null;
    if (v instanceof Date) return instant(v, field, invalidMetaData);
    const d = v.length <= 64 ? parseIsoDateTime(v) : undefined;
    if (!d) throw invalidMetaData(`${field} in MetaDataBson must be a BSON date, an ISO 8601 string or null.`);
    return instant(d, field, invalidMetaData);
  };
  return ordered({ activeOn: read('ActiveOn'), expiresOn: read('ExpiresOn') });
}

/**
 * The `MetaDataBson` of a window: base64 of BSON `{ActiveOn: Date|null, ExpiresOn: Date|null}`,
 * the bytes `bson`'s serialize writes for that document.
 */
export function metaDataOf(w: Window): string {
  const elements = FIELDS.map((name) => {
    const iso = name === 'ActiveOn' ? w.activeOn : w.expiresOn;
    const head = Buffer.concat([Buffer.from([iso === null ? BSON_NULL : BSON_DATE]), Buffer.from(name, 'utf8'), Buffer.from([0])]);
    if (iso === null) return head;
    const value = Buffer.alloc(8);
    value.writeBigInt64LE(BigInt(Date.parse(iso)));
    return Buffer.concat([head, value]);
  });
  const doc = Buffer.concat([Buffer.alloc(4), ...elements, Buffer.from([0])]);
  doc.writeInt32LE(doc.length, 0);
  return doc.toString('base64');
}
