/**
 * BSON encoding of the documents Gatehouse itself writes: the MQTT payload of an event (raw BSON
 * of its EventMessageData, see live/mqtt/mqtt-channel.ts) and the data of an audit event
 * (events/audit-event.ts). Those hold JSON values, dates and 64-bit integers only, so this module
 * writes those and refuses anything else, byte for byte as the `bson` package's `serialize` writes
 * them with its defaults (test/unit/bson-writer.test.ts checks it against `serialize` on generated
 * documents).
 *
 * Why not `serialize` itself: the fan-out encodes every event it publishes, so the codec is on its
 * cold start, and `bson` carries every BSON type, the decoder and the extended JSON for the few
 * elements this needs. Reading BSON, the event data clients post
 * (events/event-data.ts), stays with the package.
 *
 * | value                                   | BSON element             |
 * | --------------------------------------- | ------------------------ |
 * | `null`; `undefined` in an array         | null (0x0A)              |
 * | `undefined` in a document               | (left out)               |
 * | boolean                                 | boolean (0x08)           |
 * | number: a safe integer in int32, not -0 | int32 (0x10)             |
 * | any other number                        | double (0x01)            |
 * | bigint in the int64 range               | int64 (0x12)             |
 * | string                                  | string (0x02), UTF-8     |
 * | `Date`                                  | UTC datetime (0x09)      |
 * | array                                   | array (0x04)             |
 * | plain object (own enumerable keys)      | embedded document (0x03) |
 */

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** A BSON document of JSON values, dates and 64-bit integers. */
export type BsonDocument = Readonly<Record<string, unknown>>;

class Writer {
  private buf = Buffer.allocUnsafe(512);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  int32(v: number): void {
    this.room(4);
    this.length = this.buf.writeInt32LE(v, this.length);
  }

  int32At(at: number, v: number): void {
    this.buf.writeInt32LE(v, at);
  }

  float64(v: number): void {
    this.room(8);
    this.length = this.buf.writeDoubleLE(v, this.length);
  }

  int64(v: bigint): void {
    this.room(8);
    this.length = this.buf.writeBigInt64LE(v, this.length);
  }

  /** UTF-8 bytes of `s` (lone surrogates become U+FFFD, as in `bson`), without a terminator. */
  utf8(s: string): number {
    const n = Buffer.byteLength(s, 'utf8');
    this.room(n);
    this.length += this.buf.write(s, this.length, n, 'utf8');
    return n;
  }

  bytes(): Uint8Array {
    return Buffer.from(this.buf.subarray(0, this.length));
  }
}

/** Encodes `doc` as one BSON document; throws a TypeError on a value BSON of JSON cannot hold. */
export function encodeBson(doc: BsonDocument): Uint8Array {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || doc instanceof Date) {
    throw new TypeError('A BSON document must be a plain object');
  }
  const w = new Writer();
  writeDocument(w, Object.entries(doc), false, new Set([doc]));
  return w.bytes();
}

function writeDocument(w: Writer, entries: ReadonlyArray<readonly [string, unknown]>, isArray: boolean, path: Set<object>): void {
  const start = w.length;
  w.int32(0);
  // As `serialize` (its `ignoreUndefined` defaults to true): a document leaves undefined out, an array writes null.
  for (const [key, value] of entries) if (value !== undefined || isArray) writeElement(w, key, value, path);
  w.byte(0);
  w.int32At(start, w.length - start);
}

function writeName(w: Writer, type: number, key: string): void {
  if (key.includes('\0')) throw new TypeError(`BSON key ${JSON.stringify(key)} holds a null byte`);
  w.byte(type);
  w.utf8(key);
  w.byte(0);
}

function writeElement(w: Writer, key: string, value: unknown, path: Set<object>): void {
  switch (typeof value) {
    case 'undefined':
      return writeName(w, 0x0a, key);
    case 'boolean':
      writeName(w, 0x08, key);
      return w.byte(value ? 1 : 0);
    case 'number':
      if (Number.isSafeInteger(value) && value >= INT32_MIN && value <= INT32_MAX && !Object.is(value, -0)) {
        writeName(w, 0x10, key);
        return w.int32(value);
      }
      writeName(w, 0x01, key);
      return w.float64(value);
    case 'bigint':
      if (value < INT64_MIN || value > INT64_MAX) throw new TypeError(`BSON int64 out of range at ${JSON.stringify(key)}`);
      writeName(w, 0x12, key);
      return w.int64(value);
    case 'string': {
      writeName(w, 0x02, key);
      const at = w.length;
      w.int32(0);
      w.int32At(at, w.utf8(value) + 1);
      return w.byte(0);
    }
    case 'object': {
      if (value === null) return writeName(w, 0x0a, key);
      if (value instanceof Date) {
        writeName(w, 0x09, key);
        const ms = value.getTime();
        return w.int64(BigInt(Number.isNaN(ms) ? 0 : ms));
      }
      const isArray = Array.isArray(value);
      if (!isArray && Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) {
        throw new TypeError(`BSON of JSON cannot hold ${value.constructor?.name ?? 'this object'} at ${JSON.stringify(key)}`);
      }
      if (path.has(value)) throw new TypeError('A BSON document cannot be circular');
      path.add(value);
      writeName(w, isArray ? 0x04 : 0x03, key);
      writeDocument(w, isArray ? Array.from(value, (v, i) => [String(i), v] as const) : Object.entries(value), isArray, path);
      path.delete(value);
      return;
    }
    default:
      throw new TypeError(`BSON of JSON cannot hold a ${typeof value} at ${JSON.stringify(key)}`);
  }
}
