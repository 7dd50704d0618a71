/**
 * A token bucket: `burstLimit` tokens deep, refilled at `rateLimit` tokens a second. The local
 * runtime's stage throttling (local/throttle.ts), the login throttle
 * (shared/auth/login-throttle.ts) and the tenant rate limits (shared/http/rate-limit.ts) all count
 * with it.
 */

export interface ThrottleSettings {
  /** Requests per second let through on average. */
  readonly rateLimit: number;
  /** Requests let through at once: the bucket's size. */
  readonly burstLimit: number;
}

export class TokenBucket {
  private tokens: number;
  private last: number;

  /** `now` is in milliseconds (injectable for tests). */
  constructor(
    private readonly settings: ThrottleSettings,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(settings.rateLimit > 0) || !(settings.burstLimit >= 1)) {
      throw new RangeError('A token bucket needs a rate above 0 and a burst of at least 1');
    }
    this.tokens = settings.burstLimit;
    this.last = now();
  }

  /**
   * Takes a token for one request: 0 when the request may pass, otherwise the whole seconds
   * (at least 1) until a token is available again, for `Retry-After`.
   */
  take(): number {
    const now = this.now();
    const { rateLimit, burstLimit } = this.settings;
    this.tokens = Math.min(burstLimit, this.tokens + ((now - this.last) / 1000) * rateLimit);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / rateLimit));
  }

  /** Whole tokens left as of the last {@link take}: the requests that may still pass at once. */
  get remaining(): number {
    return Math.floor(this.tokens);
  }

  /** Whole seconds from the last {@link take} until the bucket is full again. */
  get secondsToFull(): number {
    return Math.ceil((this.settings.burstLimit - this.tokens) / this.settings.rateLimit);
  }
}

/**
 * A token bucket per key (a client address, a user name, later a tenant), created on a key's
 * first request, per execution environment. At most `maxKeys` are kept: beyond, the least recently
 * used is dropped (a bucket untouched that long has mostly refilled anyway).
 */
export class KeyedBuckets {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly settings: ThrottleSettings,
    private readonly maxKeys = 10_000,
    private readonly now: () => number = () => performance.now(),
  ) {
    // Fails now, not at the first request, when the settings make no bucket.
    new TokenBucket(settings, now);
  }

  /** Takes a token from `key`'s bucket: 0 when the request may pass, else the seconds to wait. */
  take(key: string): number {
    return this.bucket(key).take();
  }

  /** `key`'s bucket, created when it has none, and now the most recently used. */
  bucket(key: string): TokenBucket {
    let bucket = this.buckets.get(key);
    if (bucket) this.buckets.delete(key);
    else {
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
      bucket = new TokenBucket(this.settings, this.now);
    }
    // Re-inserted: the Map's order is least recently used first.
    this.buckets.set(key, bucket);
    return bucket;
  }

  get size(): number {
    return this.buckets.size;
  }
}
