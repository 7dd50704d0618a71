/**
 * The login throttle: a token bucket per client address and one per login name (instance and
 * user name), taken before a password grant reads anything or computes a hash. A login costs a
 * scrypt (a core's worth of work for a noticeable time, the same for unknown names as for real
 * ones), so without it a burst of logins from one client, of any names, starves the logins of
 * everyone else; the name's bucket slows a guesser spread over many addresses down to the same
 * pace for each name (the lockout then stops it for good).
 *
 * An attempt over either bucket is answered 429 with `Retry-After` and the token error body
 * (`too_many_requests`), for known and unknown names alike: the answer says nothing of the user.
 * Clients in the field retry 429s with a back-off.
 *
 * The buckets live in the execution environment: locally one process holds them all; in AWS each
 * token function environment holds its own, so a burst spread over N environments passes up to N
 * times a bucket (the stage throttling of the HTTP API bounds the sum).
 */
import type { Config } from '../config.ts';
import { OAuthError } from '../errors.ts';
import { KeyedBuckets } from '../token-bucket.ts';
import { NO_STORE, splitLoginName, type TokenRequest } from './token-request.ts';

/** Addresses and names whose buckets an environment keeps (the least recently used beyond). */
const MAX_KEYS = 10_000;

/** A password grant over its client address's or its name's rate (status 429). */
class LoginThrottled extends OAuthError {
  override readonly headers: Readonly<Record<string, string>>;
  constructor(retryAfterSeconds: number) {
    super('too_many_requests', 'Too many login attempts; retry after the number of seconds in Retry-After.', 429);
    this.name = 'LoginThrottled';
    this.headers = { ...NO_STORE, 'Retry-After': String(retryAfterSeconds) };
  }
}

export type LoginThrottleConfig = Pick<Config, 'loginAddressRate' | 'loginAddressBurst' | 'loginNameRate' | 'loginNameBurst'>;

/** A bucket per key for `perMinute` and `burst`; undefined when either is 0 (that throttle off). */
const bucketsOf = (perMinute: number, burst: number): KeyedBuckets | undefined =>
  perMinute > 0 && burst > 0 ? new KeyedBuckets({ rateLimit: perMinute / 60, burstLimit: burst }, MAX_KEYS) : undefined;

export interface LoginThrottle {
  /** Takes a token for a password grant from `sourceIp` for `req`'s name; throws {@link LoginThrottled} when either is spent. */
  check(sourceIp: string | undefined, req: Pick<TokenRequest, 'username' | 'instance'>): void;
  /**
   * Takes a token for a single sign-on start from `sourceIp` (the address's bucket only: no name is
   * known yet); throws {@link LoginThrottled} when it is spent. A start writes a pending login.
   */
  checkAddress(sourceIp: string | undefined): void;
}

function createLoginThrottle(cfg: LoginThrottleConfig): LoginThrottle {
  const addresses = bucketsOf(cfg.loginAddressRate, cfg.loginAddressBurst);
  const names = bucketsOf(cfg.loginNameRate, cfg.loginNameBurst);
  return {
    check(sourceIp, req) {
      const { instanceName, userName } = splitLoginName(req.username, req.instance);
      // The address first: a client over its own rate does not spend a name's tokens, so it
      // cannot keep someone else's name throttled from a single address.
      const byAddress = addresses?.take(sourceIp ?? '') ?? 0;
      if (byAddress > 0) throw new LoginThrottled(byAddress);
      const byName = names?.take(`${instanceName ?? ''}\\${userName}`) ?? 0;
      if (byName > 0) throw new LoginThrottled(byName);
    },
    checkAddress(sourceIp) {
      const byAddress = addresses?.take(sourceIp ?? '') ?? 0;
      if (byAddress > 0) throw new LoginThrottled(byAddress);
    },
  };
}

/** One throttle per configuration, i.e. per execution environment (tests make several). */
const throttles = new WeakMap<LoginThrottleConfig, LoginThrottle>();

/** The throttle of this configuration's environment. */
export function loginThrottleOf(cfg: LoginThrottleConfig): LoginThrottle {
  let t = throttles.get(cfg);
  if (!t) throttles.set(cfg, (t = createLoginThrottle(cfg)));
  return t;
}
