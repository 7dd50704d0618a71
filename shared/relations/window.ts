/**
 * The validity window of a scheduled access level (relation `ScheduledAccessLevel`): `ActiveOn`
 * and `ExpiresOn`, UTC, either null. The connection item stores them as ISO strings; the person's
 * ObjectLinkItem shows them as `MetaDataBson`, base64 of the BSON document
 * `{ActiveOn: Date|null, ExpiresOn: Date|null}`, which is also the form clients send.
 *
 * The `bson` package is imported on first use, not at module load: only calls that carry a
 * window pay for evaluating it (see the README's note on bundle sizes).
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

let bson: Promise<typeof import('bson')> | undefined;
const loadBson = () => (bson ??= import('bson'));

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

/**
 * The window a link's `MetaDataBson` holds: base64 text (or an array of bytes) of one BSON
 * document whose only fields are ActiveOn and ExpiresOn, each a BSON date, an ISO string or null.
 * Absent, null or empty is the open window. Anything else is a 400 `InvalidMetaData`; ActiveOn
 * after ExpiresOn is a 400 `InvalidWindow`.
 */
export async function windowFromMetaData(value: unknown): Promise<Window> {
  if (value === undefined || value === null || value === '') return OPEN_WINDOW;
  const bytes = metaDataBytes(value);
  if (bytes.length === 0) return OPEN_WINDOW;
  const { deserialize } = await loadBson();
  let doc: Record<string, unknown>;
  try {
    // A document whose declared size is not the buffer's is refused by the decoder.
    doc = deserialize(bytes, { promoteValues: true, validation: { utf8: true } });
  } catch {
    throw invalidMetaData('MetaDataBson does not hold a BSON document.');
  }
  const other = Object.keys(doc).filter((k) => !(FIELDS as readonly string[]).includes(k));
  if (other.length > 0) throw invalidMetaData(`MetaDataBson holds only ActiveOn and ExpiresOn, not ${other[0]!.slice(0, 64)}.`);
  const read = (field: (typeof FIELDS)[number]): string | null => {
    const v = doc[field];
    if (v === undefined || v === null) return null;
    if (v instanceof Date) return instant(v, field, invalidMetaData);
    const d = typeof v === 'string' && v.length <= 64 ? parseIsoDateTime(v) : undefined;
    if (!d) throw invalidMetaData(`${field} in MetaDataBson must be a BSON date, an ISO 8601 string or null.`);
    return instant(d, field, invalidMetaData);
  };
  return ordered({ activeOn: read('ActiveOn'), expiresOn: read('ExpiresOn') });
}

/** The `MetaDataBson` of a window: base64 of BSON `{ActiveOn: Date|null, ExpiresOn: Date|null}`. */
export async function metaDataOf(w: Window): Promise<string> {
  const { serialize } = await loadBson();
  const date = (iso: string | null) => (iso === null ? null : new Date(iso));
  return Buffer.from(serialize({ ActiveOn: date(w.activeOn), ExpiresOn: date(w.expiresOn) })).toString('base64');
}
