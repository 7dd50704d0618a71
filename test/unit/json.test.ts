import { Long, serialize } from 'bson';
import { describe, expect, it } from 'vitest';
import { decodeEventData } from '#shared/events/event-data.ts';
import { fillTemplate } from '#shared/events/posting.ts';
import { parseJson, stringifyJson } from '#shared/json.ts';
import { canonicalJson } from '#shared/objects/validate.ts';
import { parseRelaxed } from '#shared/query/query.ts';

const MAX_INT64 = '9223372036854775807';

describe('lossless JSON', () => {
  it('keeps integers above 2^53 exact both ways, and everything else as JSON does', () => {
    const text = `{"EncodedCardNumber":${MAX_INT64},"Small":12,"Float":1.5,"Neg":-9007199254740993,"List":[9007199254740993,"9007199254740993"]}`;
    const v = parseJson(text) as Record<string, unknown>;
    expect(v.EncodedCardNumber).toBe(BigInt(MAX_INT64));
    expect(v.Small).toBe(12);
    expect(v.Float).toBe(1.5);
    expect(v.Neg).toBe(-9007199254740993n);
    expect(v.List).toEqual([9007199254740993n, '9007199254740993']);
    expect(stringifyJson(v)).toBe(text);
  });

  it('reads safe integers as numbers even in long texts, and rejects malformed JSON', () => {
    expect(parseJson('{"Key":"0123456789abcdef01234567","n":9007199254740991}')).toEqual({ Key: '0123456789abcdef01234567', n: 9007199254740991 });
    expect(() => parseJson('{"a":1234567890123456789')).toThrow();
    expect(() => parseJson('{"a":}')).toThrow(SyntaxError);
  });

  it('writes what JSON.stringify writes when there is no bigint', () => {
    const v = { a: [1, 'x', null, { b: true }], d: new Date(0), u: undefined };
    expect(stringifyJson(v)).toBe(JSON.stringify(v));
    expect(stringifyJson(undefined)).toBeUndefined();
    // A bigint inside toJSON output or an array, too.
    expect(stringifyJson({ when: { toJSON: () => 2n ** 63n - 1n }, list: [1, 2n] })).toBe(`{"when":${MAX_INT64},"list":[1,2]}`);
  });

  it('throws on a cycle, as JSON.stringify does', () => {
    const v: Record<string, unknown> = { a: 1 };
    v.self = v;
    expect(() => stringifyJson(v)).toThrow(TypeError);
  });

  it('compares documents by value with big integers inside', () => {
    expect(canonicalJson({ b: 1n << 62n, a: 1 })).toBe(canonicalJson({ a: 1, b: 4611686018427387904n }));
    expect(canonicalJson({ a: { y: 2, x: 1 } })).toBe('{"a":{"x":1,"y":2}}');
  });

  it('keeps big integers of search queries and of BSON event data exact', () => {
    expect(parseRelaxed(`{ 'CardAssignments.EncodedCardNumber': ${MAX_INT64} }`)).toEqual({ 'CardAssignments.EncodedCardNumber': BigInt(MAX_INT64) });
    expect(parseRelaxed(`{ n: NumberLong("${MAX_INT64}"), m: NumberLong(5) }`)).toEqual({ n: BigInt(MAX_INT64), m: 5 });
    const data = decodeEventData(Buffer.from(serialize({ Card: Long.fromString(MAX_INT64), Small: Long.fromNumber(7), Reader: { Id: 3 } })).toString('base64'));
    expect(data).toEqual({ Card: BigInt(MAX_INT64), Small: 7, Reader: { Id: 3 } });
    expect(fillTemplate('Card {Card} at {Reader.Id}', data, [])).toBe(`Card ${MAX_INT64} at 3`);
  });
});
