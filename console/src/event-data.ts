/**
 * An event's data as an operator reads it. The API carries it as `EventDataBsonBase64` (BSON,
 * base64) on every event, listed, read or live; the console decodes it in the browser with the
 * `bson` package, as any client would. 64-bit integers stay exact (card numbers beyond 2^53).
 */
import { deserialize } from 'bson';

/** A decoded value made plain for display: bigint and 64-bit values as digits, dates as ISO text. */
export type PlainValue = string | number | boolean | null | PlainValue[] | { [field: string]: PlainValue };

function plain(v: unknown): PlainValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Uint8Array) return `(${v.byteLength} bytes)`;
  const o = v as { _bsontype?: string; toString?: () => string; toHexString?: () => string };
  // ObjectId, Decimal128, Binary and the like: their own text form.
  if (typeof o._bsontype === 'string') return typeof o.toHexString === 'function' ? o.toHexString() : String(v);
  const out: Record<string, PlainValue> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = plain(x);
  return out;
}

/**
 * The event data of an event: its decoded BSON document, null when the event has none, or an
 * Error naming why it could not be read (the detail shows that instead of failing).
 */
export function decodeEventData(base64: unknown): Record<string, PlainValue> | null | Error {
  if (typeof base64 !== 'string' || base64 === '') return null;
  try {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    return plain(deserialize(bytes, { useBigInt64: true })) as Record<string, PlainValue>;
  } catch (err) {
    return new Error(`The event data could not be decoded: ${err instanceof Error ? err.message : String(err)}`);
  }
}
