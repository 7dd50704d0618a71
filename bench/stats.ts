/**
 * Pure arithmetic of the benchmarks: percentiles of samples, ratios against a floor, and the
 * goal verdicts. No I/O, unit-tested (test/unit/bench-stats.test.ts).
 */

/**
 * The `p`-th percentile (0..100) of `samples` by the nearest-rank method: the smallest sample
 * such that at least p % of the samples are less than or equal to it. NaN for no samples.
 * Nearest rank (not interpolation) so every reported figure is a latency that was observed.
 */
export function percentile(samples: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, not ${p}`);
  const finite = samples.filter((x) => Number.isFinite(x));
  if (finite.length === 0) return Number.NaN;
  const sorted = [...finite].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export interface Summary {
  readonly samples: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
}

/** p50/p90/p99/min/max/mean of a list of samples (ms), rounded to 0.001. */
export function summarize(samples: readonly number[]): Summary {
  const finite = samples.filter((x) => Number.isFinite(x));
  const mean = finite.length ? finite.reduce((s, x) => s + x, 0) / finite.length : Number.NaN;
  return {
    samples: finite.length,
    p50: round(percentile(finite, 50)),
    p90: round(percentile(finite, 90)),
    p99: round(percentile(finite, 99)),
    min: round(finite.length ? Math.min(...finite) : Number.NaN),
    max: round(finite.length ? Math.max(...finite) : Number.NaN),
    mean: round(mean),
  };
}

/** Rounds to `digits` decimals; NaN and infinities become null-friendly NaN. */
export function round(x: number, digits = 3): number {
  if (!Number.isFinite(x)) return Number.NaN;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * `value / floor`, rounded to 0.001. Undefined when either is missing, not finite, or the
 * floor is not positive (a ratio against nothing would be a made-up number).
 */
export function ratioOf(value: number | undefined, floor: number | undefined): number | undefined {
  if (value === undefined || floor === undefined) return undefined;
  if (!Number.isFinite(value) || !Number.isFinite(floor) || floor <= 0) return undefined;
  return round(value / floor);
}

/** A goal on a figure: `figure <= max` (or `< max` when `strict`). */
export interface Bound {
  readonly max: number;
  readonly strict?: boolean;
}

/** True when `figure` is a number within the bound; a figure that was not measured never meets it. */
export function within(figure: number | undefined, bound: Bound): boolean {
  if (figure === undefined || !Number.isFinite(figure)) return false;
  return bound.strict ? figure < bound.max : figure <= bound.max;
}

/** The ratio a set of entries is summarised by: the worst (largest) one, with its name. */
export function worstRatio<T extends { readonly ratio: number | null }>(entries: Readonly<Record<string, T>>): { name: string; ratio: number } | undefined {
  let worst: { name: string; ratio: number } | undefined;
  for (const [name, e] of Object.entries(entries)) {
    if (e.ratio === null || !Number.isFinite(e.ratio)) continue;
    if (!worst || e.ratio > worst.ratio) worst = { name, ratio: e.ratio };
  }
  return worst;
}

/** JSON cannot hold NaN: a figure that was not measured is written as null. */
export const orNull = (x: number | undefined): number | null => (x === undefined || !Number.isFinite(x) ? null : x);

/** One load-generator run (autocannon): throughput, latency percentiles, failures. */
export interface LoadRun {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  readonly errors: number;
  readonly non2xx: number;
}

/**
 * Several runs as one: requests/s over the summed time of the runs; latency percentiles averaged
 * over the runs (the runs' histograms are not kept); failures summed. Undefined for no runs.
 */
export function combineRuns(runs: readonly LoadRun[]): LoadRun | undefined {
  if (!runs.length) return undefined;
  const requests = runs.reduce((s, r) => s + r.requests, 0);
  const seconds = runs.reduce((s, r) => s + (r.rps > 0 ? r.requests / r.rps : 0), 0);
  const mean = (f: (r: LoadRun) => number) => round(runs.reduce((s, r) => s + f(r), 0) / runs.length, 1);
  return {
    rps: seconds > 0 ? round(requests / seconds, 1) : 0,
    p50Ms: mean((r) => r.p50Ms),
    p99Ms: mean((r) => r.p99Ms),
    requests,
    errors: runs.reduce((s, r) => s + r.errors, 0),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
  };
}

/**
 * How many waves of requests a window made: the longest chain of calls each sent after the one
 * before it was answered (calls sent at once are one wave: one round trip of latency).
 */
export function waves(calls: ReadonlyArray<{ readonly startMs: number; readonly endMs: number }>): number {
  const order = [...calls].sort((a, b) => a.startMs - b.startMs);
  const depth: number[] = [];
  order.forEach((c, i) => {
    const before = order.slice(0, i).flatMap((q, j) => (q.endMs <= c.startMs ? [depth[j]!] : []));
    depth[i] = 1 + Math.max(0, ...before);
  });
  return Math.max(0, ...depth);
}
