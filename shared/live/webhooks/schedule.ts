/**
 * The retry schedule of a delivery: the first attempt at once, then after 5 s, 5 min, 30 min, 2 h,
 * 5 h, 10 h, 14 h, 20 h and 24 h (about three days in all), each delay with up to ±10 % jitter so
 * retries of many deliveries spread out. After the tenth attempt the delivery is dead-lettered.
 */

/** Delays before attempts 2..10, in seconds. */
export const RETRY_DELAYS_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400];

/** Attempts per delivery, the first included. */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** A subscription failing this long without one success is disabled. */
export const FAILING_DISABLE_MS = 5 * 24 * 3600 * 1000;

/** The 24 hours a rotated secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 3600 * 1000;

/**
 * Milliseconds to wait after attempt `attempt` (1-based) failed, or undefined when it was the
 * last. `scale` shortens the schedule in tests; `random` is in [0, 1).
 */
export function retryDelayMs(attempt: number, scale = 1, random: number = Math.random()): number | undefined {
  const base = RETRY_DELAYS_SECONDS[attempt - 1];
  if (base === undefined) return undefined;
  const jitter = 1 + (random * 2 - 1) * 0.1;
  return Math.round(base * 1000 * scale * jitter);
}
