/**
 * The keyed token buckets of the login throttle (and later tenant limits): each key has its own
 * bucket, refilled with time; at most `maxKeys` are kept, the least recently used dropped first.
 */
import { describe, expect, it } from 'vitest';
import { KeyedBuckets } from '#shared/token-bucket.ts';

describe('KeyedBuckets', () => {
  it('gives each key its own bucket, refilled at the rate', () => {
    let now = 0;
    const buckets = new KeyedBuckets({ rateLimit: 0.5, burstLimit: 2 }, 100, () => now);
    expect([buckets.take('a'), buckets.take('a'), buckets.take('a')]).toEqual([0, 0, 2]);
    expect(buckets.take('b')).toBe(0);
    now = 2000;
    expect([buckets.take('a'), buckets.take('a')]).toEqual([0, 2]);
  });

  it('keeps at most maxKeys buckets, dropping the least recently used', () => {
    const now = 0;
    const buckets = new KeyedBuckets({ rateLimit: 1, burstLimit: 1 }, 2, () => now);
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('b')).toBe(0);
    // 'a' used again: 'b' is now the least recently used, and goes when 'c' comes.
    expect(buckets.take('a')).toBe(1);
    expect(buckets.take('c')).toBe(0);
    expect(buckets.size).toBe(2);
    expect(buckets.take('a')).toBe(1);
    expect(buckets.take('b')).toBe(0);
  });

  it('tells the tokens left and the seconds until the bucket is full, for the RateLimit header', () => {
    let now = 0;
    const bucket = new KeyedBuckets({ rateLimit: 2, burstLimit: 4 }, 100, () => now).bucket('a');
    expect([bucket.take(), bucket.take(), bucket.take()]).toEqual([0, 0, 0]);
    expect([bucket.remaining, bucket.secondsToFull]).toEqual([1, 2]);
    now = 250;
    expect(bucket.take()).toBe(0);
    expect([bucket.remaining, bucket.secondsToFull]).toEqual([0, 2]);
    now = 1750;
    expect(bucket.take()).toBe(0);
    expect([bucket.remaining, bucket.secondsToFull]).toEqual([2, 1]);
  });

  it('rejects settings that make no bucket', () => {
    expect(() => new KeyedBuckets({ rateLimit: 0, burstLimit: 1 })).toThrow(RangeError);
  });
});
