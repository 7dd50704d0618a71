/**
 * Timing loops. Kept apart from the pure arithmetic in `stats.ts`.
 */

/**
 * Runs `a` and `b` alternately `n` times (A B, B A, A B, ...), so a change of machine load during
 * the run hits both series alike, and returns their durations in ms. On a shared, loaded machine
 * this keeps the ratio honest where two back-to-back benchmark tasks would not.
 */
export async function interleaved(n: number, a: (i: number) => Promise<unknown>, b: (i: number) => Promise<unknown>): Promise<{ a: number[]; b: number[] }> {
  const ta: number[] = [];
  const tb: number[] = [];
  const time = async (fn: (i: number) => Promise<unknown>, i: number, into: number[]) => {
    const t0 = performance.now();
    await fn(i);
    into.push(performance.now() - t0);
  };
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      await time(a, i, ta);
      await time(b, i, tb);
    } else {
      await time(b, i, tb);
      await time(a, i, ta);
    }
  }
  return { a: ta, b: tb };
}
