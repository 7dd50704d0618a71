/**
 * The event data of a posting, `EventDataBsonBase64`: base64 of one BSON document, decoded with
 * 64-bit integers kept exact. Its own module so that the BSON codec is loaded only where event
 * data is read (see `parsePosting`).
 */
import { deserialize, type Document } from 'bson';
import { ApiError } from '../errors.ts';
import { narrowInteger } from '../json.ts';

const MAX_BSON_BYTES = 256 * 1024;

/** Decodes `EventDataBsonBase64`: it must be base64 of one BSON document. */
export function decodeEventData(b64: unknown): Document {
  if (b64 === undefined || b64 === null || b64 === '') return {};
  if (typeof b64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) {
    throw new ApiError(400, 'InvalidEventData', 'EventDataBsonBase64 is not base64.');
  }
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length > MAX_BSON_BYTES) throw new ApiError(400, 'InvalidEventData', 'EventDataBsonBase64 is too large.');
  try {
    // 64-bit integers as bigint, so a card number above 2^53 keeps every digit; the ones that fit
    // a double exactly become numbers again.
    return narrowIntegers(deserialize(bytes, { promoteValues: true, useBigInt64: true, validation: { utf8: false } })) as Document;
  } catch {
    throw new ApiError(400, 'InvalidEventData', 'EventDataBsonBase64 does not hold a BSON document.');
  }
}

/** Every safe `bigint` in decoded BSON as a number; containers walked, other values kept. */
function narrowIntegers(v: unknown): unknown {
  if (typeof v === 'bigint') return narrowInteger(v);
  if (Array.isArray(v)) return v.map(narrowIntegers);
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = narrowIntegers(x);
    return out;
  }
  return v;
}
