/** The pacer of searches and event listings: it yields between slices of filtering and ends work that outlasts its limit. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '#shared/errors.ts';
import { FILTER_SLICE_MS, filterPaced, pacer } from '#shared/query/pacer.ts';

describe('pacer', () => {
  it('goes on at once within a slice, yields after it, and throws QueryTooExpensive naming the limit once the work outlasts it', async () => {
    let t = 0;
    const pace = pacer('search', 100, () => t);
    const waits: number[] = [];
    for (let i = 0; i < 100; i++) {
      t += 1;
      const wait = pace();
      if (wait) {
        waits.push(t);
        await wait;
      }
    }
    expect(waits[0]).toBe(FILTER_SLICE_MS);
    expect(waits.length).toBeGreaterThan(5);
    t += 1;
    let thrown: unknown;
    try {
      pace();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ status: 400, code: 'QueryTooExpensive', message: expect.stringContaining('within 0.1 s') });
  });

  it('lets timers run while a long filter works, and keeps what the test accepts', async () => {
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    let firedAt: number | undefined;
    let tested = 0;
    setTimeout(() => (firedAt = tested), 0);
    const kept = await filterPaced(
      Array.from({ length: 60 }, (_, i) => i),
      (i) => {
        tested++;
        busy(1);
        return i % 2 === 0;
      },
      pacer('events listing'),
    );
    expect(kept).toHaveLength(30);
    expect(firedAt).toBeDefined();
    expect(firedAt!).toBeLessThan(60);
  });
});
