/**
 * The scheduled access level window codec, checked against the `bson` package: the bytes it
 * writes are bson's, it reads what bson writes, and it answers a 400 (never anything else) for
 * any other input.
 */
import { deserialize, Long, serialize } from 'bson';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '#shared/errors.ts';
import { MAX_METADATA_BYTES, metaDataOf, windowFromBody, windowFromMetaData, windowHolds, type Window } from '#shared/relations/window.ts';

const b64 = (doc: Record<string, unknown>) => Buffer.from(serialize(doc)).toString('base64');
const MIN = Date.parse('0001-01-01T00:00:00.000Z');
const MAX = Date.parse('9999-12-31T23:59:59.999Z');
const instant = fc.integer({ min: MIN, max: MAX }).map((ms) => new Date(ms));
const bound = fc.option(instant, { nil: null });

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    expect(err.status).toBe(400);
    return err.code;
  }
}

describe('window codec', () => {
  it('writes the bytes bson serialize writes, and reads them back', () => {
    fc.assert(
      fc.property(bound, bound, (a, e) => {
        const w: Window = { activeOn: a?.toISOString() ?? null, expiresOn: e?.toISOString() ?? null };
        const written = metaDataOf(w);
        expect(written).toBe(b64({ ActiveOn: a, ExpiresOn: e }));
        expect(deserialize(Buffer.from(written, 'base64'))).toEqual({ ActiveOn: a, ExpiresOn: e });
        if (a && e && a > e) expect(codeOf(() => windowFromMetaData(written))).toBe('InvalidWindow');
        else expect(windowFromMetaData(written)).toEqual(w);
      }),
      { numRuns: 300 },
    );
  });

  it('reads what bson writes: either field order, either missing, dates as ISO strings', () => {
    const a = new Date('2026-01-01T08:00:00.123Z');
    const e = new Date('2026-06-01T00:00:00Z');
    expect(windowFromMetaData(b64({ ExpiresOn: e, ActiveOn: a }))).toEqual({ activeOn: a.toISOString(), expiresOn: e.toISOString() });
    expect(windowFromMetaData(b64({ ExpiresOn: e }))).toEqual({ activeOn: null, expiresOn: e.toISOString() });
    expect(windowFromMetaData(b64({}))).toEqual({ activeOn: null, expiresOn: null });
    expect(windowFromMetaData(b64({ ActiveOn: '2026-01-01T09:00:00+01:00', ExpiresOn: '2026-06-01' }))).toEqual({
      activeOn: '2026-01-01T08:00:00.000Z',
      expiresOn: e.toISOString(),
    });
    expect(windowFromMetaData([...serialize({ ActiveOn: a })])).toEqual({ activeOn: a.toISOString(), expiresOn: null });
    expect(windowFromMetaData(null)).toEqual({ activeOn: null, expiresOn: null });
  });

  it('rejects other fields, types, sizes and malformed documents with InvalidMetaData', () => {
    const cases: unknown[] = [
      b64({ ActiveOn: new Date(), Other: 1 }),
      b64({ ActiveOn: 5 }),
      b64({ ActiveOn: Long.fromNumber(5) }),
      b64({ ActiveOn: { nested: true } }),
      b64({ ActiveOn: 'not a date' }),
      b64({ ActiveOn: new Date('0000-06-01T00:00:00Z') }),
      b64({ ActiveOn: new Date(0), Padding: 'x'.repeat(MAX_METADATA_BYTES) }),
      Buffer.from(serialize({ ActiveOn: new Date(0) })).subarray(0, 10).toString('base64'),
      'AAAA',
      '%%%%',
      [256],
      42,
      { ActiveOn: '2026-01-01T00:00:00Z' },
    ];
    for (const c of cases) expect(codeOf(() => windowFromMetaData(c)), JSON.stringify(c)?.slice(0, 60)).toBe('InvalidMetaData');
  });

  it('answers a 400 for any bytes, never another error', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.boolean(), (bytes, sized) => {
        const buf = Buffer.from(bytes);
        // Half the time with a correct size prefix, so the element walk is exercised.
        if (sized && buf.length >= 5) buf.writeInt32LE(buf.length, 0);
        try {
          windowFromMetaData(buf.toString('base64'));
        } catch (err) {
          expect(err).toBeInstanceOf(ApiError);
          expect((err as ApiError).status).toBe(400);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a JSON window body and checks its order', () => {
    expect(windowFromBody(undefined)).toEqual({ activeOn: null, expiresOn: null });
    expect(windowFromBody({ $type: 'X', ActiveOn: '2026-01-01T00:00:00', ExpiresOn: null })).toEqual({ activeOn: '2026-01-01T00:00:00.000Z', expiresOn: null });
    expect(codeOf(() => windowFromBody({ ActiveOn: '2026-02-01T00:00:00Z', ExpiresOn: '2026-01-01T00:00:00Z' }))).toBe('InvalidWindow');
    expect(codeOf(() => windowFromBody({ Active: '2026-02-01T00:00:00Z' }))).toBe('ValidationFailed');
    expect(codeOf(() => windowFromBody('2026-02-01'))).toBe('ValidationFailed');
  });

  it('holds a time from ActiveOn (included) to ExpiresOn (excluded)', () => {
    const w = { activeOn: '2026-01-01T00:00:00.000Z', expiresOn: '2026-02-01T00:00:00.000Z' };
    expect(windowHolds(w, new Date('2026-01-01T00:00:00Z'))).toBe(true);
    expect(windowHolds(w, new Date('2026-02-01T00:00:00Z'))).toBe(false);
    expect(windowHolds(w, new Date('2025-12-31T23:59:59Z'))).toBe(false);
    expect(windowHolds({ activeOn: null, expiresOn: null }, new Date())).toBe(true);
  });
});
