/**
 * The benchmark's arithmetic: nearest-rank percentiles, summaries, ratios against a floor, goal
 * verdicts, and the combination of load-generator runs.
 */
import { describe, expect, it } from 'vitest';
import { combineRuns, orNull, percentile, ratioOf, round, summarize, waves, within, worstRatio } from '../../bench/stats.ts';

describe('percentile', () => {
  it('answers an observed sample by nearest rank, whatever the input order', () => {
    const xs = [15, 20, 35, 40, 50];
    expect(percentile(xs, 50)).toBe(35);
    expect(percentile([50, 40, 35, 20, 15], 50)).toBe(35);
    expect(percentile(xs, 30)).toBe(20);
    expect(percentile(xs, 40)).toBe(20);
    expect(percentile(xs, 100)).toBe(50);
    expect(percentile(xs, 0)).toBe(15);
  });

  it('takes the 99th of 100 samples as the 99th smallest, and of few samples as the largest', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile([3, 1, 2], 99)).toBe(3);
  });

  it('ignores values that are not finite and answers NaN for no samples', () => {
    expect(percentile([Number.NaN, 2, Number.POSITIVE_INFINITY, 1], 50)).toBe(1);
    expect(percentile([], 50)).toBeNaN();
  });

  it('rejects a percentile outside 0..100', () => {
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], -1)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('gives count, percentiles, extremes and mean, rounded to 0.001', () => {
    expect(summarize([1, 2, 3, 4, 100])).toEqual({ samples: 5, p50: 3, p90: 100, p99: 100, min: 1, max: 100, mean: 22 });
    expect(summarize([1 / 3]).mean).toBe(0.333);
  });

  it('summarises nothing as NaN figures, which JSON writes through orNull as null', () => {
    const s = summarize([]);
    expect(s.samples).toBe(0);
    expect(s.p50).toBeNaN();
    expect(orNull(s.p50)).toBeNull();
    expect(orNull(undefined)).toBeNull();
    expect(orNull(2)).toBe(2);
  });
});

describe('ratioOf and within', () => {
  it('divides the figure by its floor, rounded to 0.001', () => {
    expect(ratioOf(11.3, 8.4)).toBe(1.345);
    expect(ratioOf(2, 1)).toBe(2);
    expect(round(1.23456, 2)).toBe(1.23);
  });

  it('gives no ratio against a missing, zero or negative floor, or for a missing figure', () => {
    expect(ratioOf(1, 0)).toBeUndefined();
    expect(ratioOf(1, -1)).toBeUndefined();
    expect(ratioOf(undefined, 1)).toBeUndefined();
    expect(ratioOf(1, undefined)).toBeUndefined();
    expect(ratioOf(Number.NaN, 1)).toBeUndefined();
  });

  it('meets a bound inclusively unless strict, and never without a figure', () => {
    expect(within(1.25, { max: 1.25 })).toBe(true);
    expect(within(1.251, { max: 1.25 })).toBe(false);
    expect(within(1.25, { max: 1.25, strict: true })).toBe(false);
    expect(within(undefined, { max: 1 })).toBe(false);
    expect(within(Number.NaN, { max: 1 })).toBe(false);
  });
});

describe('worstRatio', () => {
  it('names the largest ratio and skips entries without one', () => {
    expect(worstRatio({ a: { ratio: 1.1 }, b: { ratio: 2 }, c: { ratio: null } })).toEqual({ name: 'b', ratio: 2 });
    expect(worstRatio({ c: { ratio: null } })).toBeUndefined();
    expect(worstRatio({})).toBeUndefined();
  });
});

describe('combineRuns', () => {
  it('adds requests over the summed time and averages latency percentiles', () => {
    const c = combineRuns([
      { rps: 100, p50Ms: 10, p99Ms: 40, requests: 200, errors: 0, non2xx: 1 },
      { rps: 300, p50Ms: 20, p99Ms: 60, requests: 600, errors: 2, non2xx: 0 },
    ]);
    // 800 requests in 2 s + 2 s.
    expect(c).toEqual({ rps: 200, p50Ms: 15, p99Ms: 50, requests: 800, errors: 2, non2xx: 1 });
  });

  it('combines no runs into nothing', () => {
    expect(combineRuns([])).toBeUndefined();
  });
});

describe('waves', () => {
  it('counts calls sent at once as one wave, and each call sent after another answered as one more', () => {
    expect(waves([])).toBe(0);
    expect(waves([{ startMs: 0, endMs: 5 }, { startMs: 0.1, endMs: 4 }, { startMs: 0.2, endMs: 6 }])).toBe(1);
    expect(waves([{ startMs: 0, endMs: 5 }, { startMs: 5, endMs: 9 }])).toBe(2);
    // A read, then two writes at once, then one more write after both.
    expect(waves([{ startMs: 0, endMs: 2 }, { startMs: 3, endMs: 6 }, { startMs: 3, endMs: 7 }, { startMs: 8, endMs: 9 }])).toBe(3);
  });
});
