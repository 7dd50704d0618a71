/** shared/bson-writer.ts writes what the `bson` package's `serialize` writes, byte for byte. */
import { deserialize, serialize } from 'bson';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBson } from '#shared/bson-writer.ts';

const same = (doc: Record<string, unknown>): void => {
  expect(Buffer.from(encodeBson(doc)).toString('hex')).toBe(Buffer.from(serialize(doc)).toString('hex'));
};

/** Values of the writer's domain: JSON values, dates, 64-bit integers, undefined, -0 and non-finite numbers. */
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.constantFrom(null, undefined, true, false, -0, 0, NaN, Infinity, -Infinity, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53, -(2 ** 53) - 2),
    fc.integer(),
    fc.double(),
    fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: 'binary' }),
    fc.date({ noInvalidDate: true }),
  ),
  node: fc.oneof({ depthSize: 'small' }, tie('leaf'), tie('array'), tie('object')),
  array: fc.array(tie('node'), { maxLength: 5 }),
  object: fc.dictionary(fc.string({ unit: 'binary' }).filter((k) => !k.includes('\0')), tie('node'), { maxKeys: 5 }),
}));
const documents = fc.dictionary(fc.string().filter((k) => !k.includes('\0')), value.node, { maxKeys: 8 });

describe('encodeBson', () => {
  it('writes the bytes serialize writes, on generated documents', () => {
    fc.assert(
      fc.property(documents, (doc) => same(doc)),
      { numRuns: 500 },
    );
  });

  it('writes each type as serialize does, and the result decodes to the document', () => {
    const doc = {
      int: 7,
      big: 2 ** 40,
      double: 1.5,
      negZero: -0,
      long: 12345678901234567890n - 10000000000000000000n,
      text: 'Tür 3 🚪',
      when: new Date(Date.UTC(2024, 4, 1, 10, 0, 0)),
      nothing: null,
      missing: undefined,
      flags: [true, false, undefined],
      nested: { $type: 'Any', Href: '/api/f/1' },
      empty: {},
    };
    same(doc);
    const back = deserialize(encodeBson(doc), { useBigInt64: true });
    expect(back.text).toBe('Tür 3 🚪');
    expect(back.when).toEqual(doc.when);
    expect(back.long).toBe(2345678901234567890n);
    expect('missing' in back).toBe(false);
    expect(back.flags).toEqual([true, false, null]);
    expect(back.nested).toEqual({ $type: 'Any', Href: '/api/f/1' });
  });

  it('writes a sparse array as serialize does (holes as null)', () => {
    // eslint-disable-next-line no-sparse-arrays
    same({ a: [1, , 3] });
  });

  it('refuses what BSON of JSON cannot hold, as serialize refuses or we choose to', () => {
    expect(() => encodeBson([] as unknown as Record<string, unknown>)).toThrow(TypeError);
    expect(() => encodeBson({ 'a\0b': 1 })).toThrow(/null byte/);
    expect(() => serialize({ 'a\0b': 1 })).toThrow();
    expect(() => encodeBson({ f: () => 1 })).toThrow(/function/);
    expect(() => encodeBson({ m: new Map() })).toThrow(/Map/);
    expect(() => encodeBson({ n: 1n << 63n })).toThrow(/int64/);
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => encodeBson(loop)).toThrow(/circular/);
  });
});
