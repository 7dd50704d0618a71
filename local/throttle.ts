/**
 * The stage throttling of API Gateway, for the local runtime: one token bucket for the whole
 * stage (every route, every client), `burstLimit` tokens deep and refilled at `rateLimit` tokens a
 * second, as `DEFAULT_THROTTLE` in infra/http-api.ts configures the HTTP API in AWS. A request
 * that finds the bucket empty is answered 429 before it reaches a handler.
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
}

/** The bucket for these settings, or undefined when either limit is 0 (throttling off). */
export function stageThrottle(settings: ThrottleSettings | undefined): TokenBucket | undefined {
  if (!settings || settings.rateLimit <= 0 || settings.burstLimit <= 0) return undefined;
  return new TokenBucket(settings);
}
