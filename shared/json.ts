/**
 * JSON that keeps big integers exact. Card numbers of the field (`EncodedCardNumber`) reach
 * 2^63-1, and `JSON.parse` rounds every integer above 2^53 to the nearest double, so a client
 * reading back a card would get another card's number. Integers outside the safe range are
 * parsed as `bigint` and written back as the same digits; everything else is what `JSON.parse`
 * and `JSON.stringify` give.
 *
 * Both directions take the built-in fast path unless the text has a run of 16 digits (parse) or
 * the value holds a `bigint` (stringify): the lossless parser is pure JavaScript, several times
 * slower, and almost no document needs it.
 */
import { parse as losslessParse, stringify as losslessStringify } from 'lossless-json';

/** Every integer above 2^53 has at least 16 digits. */
const LONG_DIGITS = /\d{16}/;
const INTEGER = /^-?\d+$/;

/** Numbers as `JSON.parse` reads them, except integers outside the safe range: those are `bigint`. */
function parseNumber(text: string): number | bigint {
  if (INTEGER.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}

/** `JSON.parse`, with unsafe integers as `bigint`. Throws a SyntaxError on malformed text. */
export function parseJson(text: string): unknown {
  if (!LONG_DIGITS.test(text)) return JSON.parse(text) as unknown;
  return losslessParse(text, undefined, parseNumber);
}

/**
 * `JSON.stringify`, writing `bigint` values as their digits. The built-in is tried first without
 * a replacer (a replacer function takes V8 off its fast serializer, on every response): it throws
 * a TypeError on a `bigint`, and only then is the value written again the lossless way.
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  // A bigint, or a cycle (which throws again here, as JSON.stringify does).
  let big = false;
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v !== 'bigint') return v;
    big = true;
    return null;
  });
  if (!big) return text;
  return losslessStringify(value) ?? 'null';
}

/** A `bigint` that fits a double exactly is a number again; other values are kept. */
export function narrowInteger(v: bigint): number | bigint {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
}
