import { describe, expect, it } from 'vitest';
import type { ApiRequest } from '#shared/http/operation-contract.ts';
import { TtlCache } from '#shared/ttl-cache.ts';
import { parsePaging } from '#shared/objects/paging.ts';

const req = (query: Record<string, string>): ApiRequest =>
  ({ query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, [v]])) }) as unknown as ApiRequest;

describe('parsePaging', () => {
  it('defaults to page 0 of 20', () => {
    expect(parsePaging(req({}))).toEqual({ page: 0, pageSize: 20 });
  });

  it('accepts pageSize 1..1000 and any page from 0', () => {
    expect(parsePaging(req({ page: '7', pageSize: '1000' }))).toEqual({ page: 7, pageSize: 1000 });
    expect(parsePaging(req({ pageSize: '1' })).pageSize).toBe(1);
  });

  it('rejects out-of-range and non-integer values instead of clamping them', () => {
    const bad: Array<Record<string, string>> = [{ page: '-1' }, { pageSize: '0' }, { pageSize: '1001' }, { page: '1.5' }, { pageSize: 'ten' }];
    for (const q of bad) {
      expect(() => parsePaging(req(q)), JSON.stringify(q)).toThrow(/page/);
    }
  });
});

describe('TtlCache', () => {
  it('forgets entries after their time to live', () => {
    let now = 0;
    const c = new TtlCache<string>(10, 100, () => now);
    c.set('a', '1');
    now = 99;
    expect(c.get('a')).toBe('1');
    now = 200;
    expect(c.get('a')).toBeUndefined();
  });

  it('evicts the least recently used entry beyond its size', () => {
    const c = new TtlCache<number>(2, 1000);
    c.set('a', 1);
    c.set('b', 2);
    c.get('a');
    c.set('c', 3);
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe(1);
    expect(c.size).toBe(2);
  });
});
