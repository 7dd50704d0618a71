/**
 * Bounded, interruptible filtering work on the main thread: a search or an events listing tests
 * its query against every object or event it read, which a large `$in` or `$all` makes costly. The
 * pacer lets other requests run between slices of that work (it yields to the event loop), and
 * ends a request whose work outlasts {@link MAX_FILTER_SECONDS} with 400 QueryTooExpensive.
 * Aggregation pipelines run in a worker thread instead (shared/events/aggregate-pool.ts).
 */
import { ApiError } from '../errors.ts';

/**
 * How long one search or listing may filter (seconds, from its first test to its last, its reads
 * between them included): queryTimeout's default and maximum for aggregations.
 */
const MAX_FILTER_SECONDS = 25;
/** Work done at once before other requests get their turn (milliseconds). */
export const FILTER_SLICE_MS = 10;

/**
 * Called before each unit of work (one document's test): undefined to go on at once, a promise to
 * await first (the event loop's turn); throws QueryTooExpensive once the work outlasts `limitMs`.
 */
export type Pace = () => Promise<void> | undefined;

export function pacer(what: string, limitMs = MAX_FILTER_SECONDS * 1000, now: () => number = () => performance.now()): Pace {
  const started = now();
  let slice = started;
  return () => {
    const t = now();
    if (t - started > limitMs) {
      throw new ApiError(400, 'QueryTooExpensive', `The ${what} did not finish filtering within ${limitMs / 1000} s: narrow its query.`);
    }
    if (t - slice < FILTER_SLICE_MS) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      slice = now();
    });
  };
}

/** The items `keep` accepts, tested at the pace of `pace`. */
export async function filterPaced<T>(items: readonly T[], keep: (item: T) => boolean, pace: Pace): Promise<T[]> {
  const out: T[] = [];
  for (const item of items) {
    const wait = pace();
    if (wait) await wait;
    if (keep(item)) out.push(item);
  }
  return out;
}
