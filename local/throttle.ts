/**
 * The stage throttling of API Gateway, for the local runtime: one token bucket for the whole
 * stage (every route, every client), `burstLimit` tokens deep and refilled at `rateLimit` tokens a
 * second, as `DEFAULT_THROTTLE` in infra/http-api.ts configures the HTTP API in AWS. A request
 * that finds the bucket empty is answered 429 before it reaches a handler.
 */
import { TokenBucket, type ThrottleSettings } from '#shared/token-bucket.ts';

export { TokenBucket, type ThrottleSettings };

/** The bucket for these settings, or undefined when either limit is 0 (throttling off). */
export function stageThrottle(settings: ThrottleSettings | undefined): TokenBucket | undefined {
  if (!settings || settings.rateLimit <= 0 || settings.burstLimit <= 0) return undefined;
  return new TokenBucket(settings);
}
