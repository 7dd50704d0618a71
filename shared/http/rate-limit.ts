/**
 * Tenant rate limits: a token bucket per instance and one per user, taken for every call with a
 * bearer token once the token is verified, before the operation reads or writes anything. Without
 * them one tenant's runaway script can use a region's whole capacity (and its pay-per-request
 * bill); with them it is answered 429 `TooManyRequests` with `Retry-After`, which clients in the
 * field (the public CSV importer, the typed client) wait out and retry.
 *
 * `GATEHOUSE_RATE_LIMIT_PER_INSTANCE` and `GATEHOUSE_RATE_LIMIT_PER_USER` are requests a second;
 * each bucket holds twice that (the burst). 0 turns a limit off (the local default). Calls without
 * a token (sysinfo, `POST /token`, the documents) are not counted here: the login throttle
 * (shared/auth/login-throttle.ts) limits `POST /token`, the stage throttling everything.
 *
 * Every answer of a limited call carries the headers of draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit-Policy: "instance";q=200;w=2, "user";q=40;w=2` (a bucket of q requests, refilled in
 * w seconds: q/w a second on average, q at once) and `RateLimit: "instance";r=…;t=…, "user";r=…;t=…`
 * (the requests left in each bucket, and the seconds until it is full again).
 *
 * The buckets live in the execution environment: the local runtime's one process holds them all,
 * exact; in AWS each function environment holds its own, so with N environments serving a tenant
 * it may pass up to N times a limit (the HTTP API's stage throttling bounds the sum).
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { KeyedBuckets } from '../token-bucket.ts';
import type { Principal } from '../auth/principal.ts';

export type RateLimitConfig = Pick<Config, 'rateLimitPerInstance' | 'rateLimitPerUser'>;

/** Instances and users whose buckets an environment keeps (the least recently used beyond). */
const MAX_KEYS = 10_000;
/** A bucket holds this many seconds of its rate: the burst is twice the limit. */
const BURST_SECONDS = 2;

type Scope = 'instance' | 'user';

interface Limit {
  readonly scope: Scope;
  /** The bucket's size: requests at once. */
  readonly burst: number;
  readonly buckets: KeyedBuckets;
  readonly keyOf: (principal: Principal) => string;
}

/** A call over its user's or its instance's rate (status 429, the spec's error body). */
class RateLimited extends ApiError {
  constructor(scope: Scope, retryAfterSeconds: number, headers: Readonly<Record<string, string>>) {
    super(429, 'TooManyRequests', `Too many requests for this ${scope}; retry after the number of seconds in Retry-After.`, {
      ...headers,
      'Retry-After': String(retryAfterSeconds),
    });
    this.name = 'RateLimited';
  }
}

export interface RateLimiter {
  /**
   * Takes a token for a call of `principal` from its user's bucket, then from its instance's: the
   * RateLimit headers to answer with; throws {@link RateLimited} (with them) when either is empty.
   */
  check(principal: Principal): Readonly<Record<string, string>>;
}

/** The limiter of these limits; undefined when both are 0 (nothing limited, no headers). */
function createRateLimiter(cfg: RateLimitConfig): RateLimiter | undefined {
  const limits: Limit[] = [];
  const add = (scope: Scope, perSecond: number, keyOf: Limit['keyOf']) => {
    if (perSecond <= 0) return;
    const burst = perSecond * BURST_SECONDS;
    limits.push({ scope, burst, buckets: new KeyedBuckets({ rateLimit: perSecond, burstLimit: burst }, MAX_KEYS), keyOf });
  };
  // The user first: a user over its own limit is refused without spending its instance's tokens,
  // so a runaway script of one user cannot keep the rest of its instance waiting.
  add('user', cfg.rateLimitPerUser, (p) => p.userKey);
  add('instance', cfg.rateLimitPerInstance, (p) => p.instanceKey);
  if (limits.length === 0) return undefined;
  const policy = limits.map((l) => `"${l.scope}";q=${l.burst};w=${BURST_SECONDS}`).join(', ');
  return {
    check(principal) {
      const states: string[] = [];
      let refused: { scope: Scope; retryAfter: number } | undefined;
      for (const limit of limits) {
        const bucket = limit.buckets.bucket(limit.keyOf(principal));
        // Once a bucket refuses, the others are only read (their state as of their last call).
        const retryAfter = refused ? 0 : bucket.take();
        if (retryAfter > 0) refused = { scope: limit.scope, retryAfter };
        states.push(`"${limit.scope}";r=${bucket.remaining};t=${bucket.secondsToFull}`);
      }
      const headers = { 'RateLimit-Policy': policy, RateLimit: states.join(', ') };
      if (refused) throw new RateLimited(refused.scope, refused.retryAfter, headers);
      return headers;
    },
  };
}

/** One limiter per configuration, i.e. per execution environment (tests make several). */
const limiters = new WeakMap<RateLimitConfig, RateLimiter | undefined>();

/** The limiter of this configuration's environment; undefined when no limit is set. */
function rateLimiterOf(cfg: RateLimitConfig): RateLimiter | undefined {
  if (!limiters.has(cfg)) limiters.set(cfg, createRateLimiter(cfg));
  return limiters.get(cfg);
}

/**
 * The pipeline step after authentication: limits a call with a principal and adds the RateLimit
 * headers to its answer (a refused call's 429 carries them already).
 */
export function rateLimit<R extends { response: APIGatewayProxyStructuredResultV2 | undefined }>(
  configOf: () => RateLimitConfig,
  principalOf: (request: R) => Principal | undefined,
) {
  const answered = new WeakMap<R, Readonly<Record<string, string>>>();
  return {
    before: (request: R) => {
      const principal = principalOf(request);
      if (!principal) return;
      const headers = rateLimiterOf(configOf())?.check(principal);
      if (headers) answered.set(request, headers);
    },
    after: (request: R) => {
      const headers = answered.get(request);
      if (headers && request.response) request.response.headers = { ...request.response.headers, ...headers };
    },
  };
}
