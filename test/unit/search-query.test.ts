import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiError } from '#shared/errors.ts';
import { discriminators, typesSelectedBy } from '#shared/model/type-hierarchy.ts';
import { compileQuery, loadRegexEngine } from '#shared/query/matcher.ts';
import {
  equalityMatcher,
  normalizeQuery,
  parseQueryBody,
  parseRelaxed,
  planQuery,
  requestedTypes,
  reviveDates,
  rewriteTypeArrays,
} from '#shared/query/query.ts';

// RE2 loads before a `$regex` is checked or compiled (the functions await regexFor(query)).
beforeAll(loadRegexEngine);

const people = [
  { Key: 'aaaaaaaaaaaaaaaaaaaaaaa1', _t: discriminators('PersonInfo'), CommonName: 'Ann Lee', Department: 'Engineering', Tags: ['vip', 'night'], Addresses: [{ $type: 'EmailAddressInfo', MailTo: 'ann@example.com' }], CardAssignments: [{ EncodedCardNumber: 1001, ActiveOn: '2024-01-01T00:00:00Z' }], Age: 40, Metadata: { Application: 'hr' } },
  { Key: 'aaaaaaaaaaaaaaaaaaaaaaa2', _t: discriminators('PersonInfo'), CommonName: 'Bob Stone', Department: 'Sales', Tags: ['day'], Addresses: [], CardAssignments: [{ EncodedCardNumber: 2002, ActiveOn: '2025-06-01T12:00:00.000Z' }], Age: 25 },
  { Key: 'aaaaaaaaaaaaaaaaaaaaaaa3', _t: discriminators('AscInputInfo'), CommonName: 'Door contact', Vendor: 'x' },
];

function find(query: unknown): string[] {
  const q = rewriteTypeArrays(normalizeQuery(parseQueryBody(query)));
  const m = compileQuery(q);
  return people.filter((p) => m.test(reviveDates(p) as Record<string, unknown>)).map((p) => p.CommonName);
}

function rejects(query: unknown, code = 'InvalidQuery'): ApiError {
  try {
    find(query);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).code).toBe(code);
    return err as ApiError;
  }
  throw new Error('expected a rejection');
}

describe('query syntax', () => {
  it('accepts a JSON string, a plain object and the relaxed shell syntax alike', () => {
    expect(find('{"_t":"Person","Department":"Engineering"}')).toEqual(['Ann Lee']);
    expect(find({ _t: 'Person', Department: 'Engineering' })).toEqual(['Ann Lee']);
    expect(find("{ '_t': 'Person', 'Department': 'Engineering' }")).toEqual(['Ann Lee']);
    expect(find("{ _t: 'Person', Department: 'Sales', }")).toEqual(['Bob Stone']);
    expect(find('{ _id: ObjectId("AAAAAAAAAAAAAAAAAAAAAAA2") }')).toEqual(['Bob Stone']);
    expect(find('{ "CardAssignments.ActiveOn": { $gte: ISODate("2025-01-01T00:00:00Z") } }')).toEqual(['Bob Stone']);
    expect(find('{ CommonName: /^ann/i }')).toEqual(['Ann Lee']);
  });

  it('points at the problem in a malformed query', () => {
    const err = rejects("{ 'a': }");
    expect(err.message).toMatch(/offset \d+/);
    rejects('{"a": 1');
    rejects('[1,2]');
    rejects('{ a: Foo("x") }');
    rejects('{ a: ObjectId("short") }');
  });
});

describe('operators', () => {
  it('supports every listed operator', () => {
    expect(find({ Age: { $eq: 40 } })).toEqual(['Ann Lee']);
    expect(find({ _t: 'Person', Age: { $ne: 40 } })).toEqual(['Bob Stone']);
    expect(find({ Age: { $gt: 25 } })).toEqual(['Ann Lee']);
    expect(find({ Age: { $gte: 25 } })).toEqual(['Ann Lee', 'Bob Stone']);
    expect(find({ Age: { $lt: 40 } })).toEqual(['Bob Stone']);
    expect(find({ Age: { $lte: 40 } })).toEqual(['Ann Lee', 'Bob Stone']);
    expect(find({ Department: { $in: ['Sales', 'Ops'] } })).toEqual(['Bob Stone']);
    expect(find({ _t: 'Person', Department: { $nin: ['Sales'] } })).toEqual(['Ann Lee']);
    expect(find({ Vendor: { $exists: true } })).toEqual(['Door contact']);
    expect(find({ CommonName: { $regex: 'STONE', $options: 'i' } })).toEqual(['Bob Stone']);
    expect(find({ $and: [{ Age: { $gt: 20 } }, { Tags: 'day' }] })).toEqual(['Bob Stone']);
    expect(find({ $or: [{ Age: 40 }, { Vendor: 'x' }] })).toEqual(['Ann Lee', 'Door contact']);
    expect(find({ _t: 'Person', $nor: [{ Age: 40 }] })).toEqual(['Bob Stone']);
    expect(find({ _t: 'Person', Age: { $not: { $gt: 30 } } })).toEqual(['Bob Stone']);
    expect(find({ CardAssignments: { $elemMatch: { EncodedCardNumber: { $gt: 1500 } } } })).toEqual(['Bob Stone']);
    expect(find({ Tags: { $all: ['vip', 'night'] } })).toEqual(['Ann Lee']);
    expect(find({ Tags: { $size: 1 } })).toEqual(['Bob Stone']);
  });

  it('matches nested paths and dates in both forms', () => {
    expect(find({ 'Addresses.MailTo': 'ann@example.com' })).toEqual(['Ann Lee']);
    expect(find({ 'CardAssignments.EncodedCardNumber': 2002 })).toEqual(['Bob Stone']);
    expect(find({ 'Metadata.Application': 'hr' })).toEqual(['Ann Lee']);
    expect(find({ 'CardAssignments.ActiveOn': { $lt: { $date: '2024-06-01T00:00:00Z' } } })).toEqual(['Ann Lee']);
    expect(find({ 'CardAssignments.ActiveOn': '2024-01-01T00:00:00.000Z' })).toEqual(['Ann Lee']);
  });

  it('reads _t with and without Info, as an array or $in, and matches derived types', () => {
    expect(find({ _t: 'PersonInfo' })).toEqual(['Ann Lee', 'Bob Stone']);
    expect(find({ _t: 'Input' })).toEqual(['Door contact']);
    expect(find({ _t: ['Person', 'AscInput'] })).toEqual(['Ann Lee', 'Bob Stone', 'Door contact']);
    expect(find({ _t: { $in: ['InputInfo'] } })).toEqual(['Door contact']);
    expect(typesSelectedBy('Input', ['PersonInfo', 'AscInputInfo', 'InputInfo'])).toEqual(expect.arrayContaining(['InputInfo', 'AscInputInfo']));
    expect(typesSelectedBy('Input', ['PersonInfo', 'AscInputInfo'])).not.toContain('PersonInfo');
  });
});

describe('query safety', () => {
  it('refuses operators that run code or are unknown', () => {
    for (const op of ['$where', '$function', '$accumulator', '$expr', '$foo', '$jsonSchema', '$mod']) {
      expect(rejects({ [op]: 'x' }).message).toContain(op);
      rejects({ a: { [op]: 1 } });
    }
  });

  it('refuses oversized and deeply nested queries', () => {
    rejects(JSON.stringify({ a: 'x'.repeat(17 * 1024) }));
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = { $and: [{ a: deep }] };
    rejects(deep as object);
  });

  it('answers a catastrophic regular expression fast', () => {
    const evil = { CommonName: 'a'.repeat(5000) + '!', _t: discriminators('PersonInfo') };
    const m = compileQuery(normalizeQuery({ CommonName: { $regex: '^(a+)+$' } }));
    const started = performance.now();
    expect(m.test(evil)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
    rejects({ CommonName: { $regex: '(a)\\1' } });
    rejects({ CommonName: { $regex: 'x'.repeat(600) } });
    rejects({ CommonName: { $regex: 'a', $options: 'g' } });
  });
});

describe('planner', () => {
  const plan = (q: Record<string, unknown>) => {
    const n = normalizeQuery(q);
    return planQuery(n, requestedTypes(n));
  };
  it('prefers keys, then card numbers, then names, then type partitions', () => {
    expect(plan({ _id: { $in: ['a', 'b'] }, CommonName: 'x' })).toEqual({ kind: 'keys', keys: ['a', 'b'] });
    expect(plan({ _t: 'Person', 'CardAssignments.EncodedCardNumber': 1001 })).toEqual({ kind: 'card', number: '1001' });
    expect(plan({ _t: 'Person', CommonName: 'Ann Lee' })).toEqual({ kind: 'name', equals: 'Ann Lee' });
    expect(plan({ $and: [{ CommonName: { $regex: '^Ann' } }] })).toEqual({ kind: 'name', prefix: 'Ann' });
    expect(plan({ CommonName: { $regex: '^Ann|Bob' } })).toEqual({ kind: 'types', types: undefined });
    expect(plan({ CommonName: { $regex: 'Ann', $options: 'i' } })).toEqual({ kind: 'types', types: undefined });
    expect(plan({ _t: ['Person', 'Input'], Age: 3 })).toEqual({ kind: 'types', types: ['Person', 'Input'] });
    expect(parseRelaxed('{}')).toEqual({});
  });
});

describe('string equalities without the engine', () => {
  const doc = (p: (typeof people)[number]) => reviveDates(p) as Record<string, unknown>;
  const q = (query: unknown) => normalizeQuery(parseQueryBody(query));

  it('takes only string equalities on top-level fields and _t', () => {
    for (const plain of [{ CommonName: 'Ann Lee' }, { _id: 'aaaaaaaaaaaaaaaaaaaaaaa1', _t: 'PersonInfo' }, "{CommonName: 'Ann Lee', Department: 'Sales'}"]) {
      expect(equalityMatcher(q(plain)), JSON.stringify(plain)).toBeDefined();
    }
    for (const other of [{}, { Age: 40 }, { 'Addresses.MailTo': 'ann@example.com' }, { CommonName: { $eq: 'Ann Lee' } }, { _t: ['PersonInfo'] }, { CommonName: null }, { 'CardAssignments.ActiveOn': '2024-01-01T00:00:00.000Z' }, { $or: [{ CommonName: 'x' }] }]) {
      expect(equalityMatcher(q(other)), JSON.stringify(other)).toBeUndefined();
    }
  });

  it('answers as the engine does, and leaves to it every field that does not hold a string', () => {
    const m = equalityMatcher(q({ CommonName: 'Ann Lee', _t: 'Person' }))!;
    expect(people.map((p) => m.test(doc(p)))).toEqual([true, false, false]);
    expect(equalityMatcher(q({ Tags: 'vip' }))!.test(doc(people[0]!))).toBeUndefined();
    expect(equalityMatcher(q({ Vendor: 'x' }))!.test(doc(people[0]!))).toBe(false);
    expect(equalityMatcher(q({ constructor: 'x' }))!.test(doc(people[0]!))).toBeUndefined();

    const value = fc.oneof(fc.constantFrom('a', 'b', 'A'), fc.array(fc.constantFrom('a', 'b')), fc.integer({ min: 0, max: 2 }), fc.constant(undefined), fc.record({ a: fc.constant('a') }));
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('F', 'G', 'H'), fc.constantFrom('a', 'b', 'A'), { minKeys: 1 }),
        fc.record({ F: value, G: value, H: value }, { requiredKeys: [] }),
        fc.constantFrom('PersonInfo', 'Door'),
        (query, fields, type) => {
          const d = { ...fields, _t: discriminators(type) } as Record<string, unknown>;
          const withType = { ...query, _t: 'Person' };
          for (const each of [query, withType]) {
            const answer = equalityMatcher(q(each))!.test(d);
            if (answer !== undefined) expect(answer).toBe(compileQuery(rewriteTypeArrays(q(each))).test(d));
          }
        },
      ),
    );
  });
});

describe('the regular expression engine', () => {
  it('loads only for a query holding a $regex, at any depth', async () => {
    // A fresh copy of the engine's module: this file's own copy loaded RE2 up front.
    vi.resetModules();
    const fresh = await import('#shared/query/matcher.ts');
    await fresh.regexFor({ CommonName: 'Ann', Tags: ['regex'], $or: [{ A: '$regex' }] });
    // Compiling a $regex without RE2 is the caller's defect: an internal error (a 500), not a 400.
    let unloaded: unknown;
    try {
      fresh.compileQuery({ CommonName: { $regex: '^A' } });
    } catch (err) {
      unloaded = err;
    }
    expect(String(unloaded)).toMatch(/not loaded/);
    expect(unloaded).not.toBeInstanceOf(ApiError);
    await fresh.regexFor({ $or: [{ A: 1 }, { B: { $elemMatch: { C: { $regex: '^x' } } } }] });
    expect(fresh.compileQuery({ CommonName: { $regex: '^A' } }).test({ CommonName: 'Ann' })).toBe(true);
  });
});
