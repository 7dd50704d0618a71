/**
 * Verifies the bearer token of a protected call inside every family (no separate authorizer:
 * the same code path runs locally and in AWS). Only ES256 is accepted: `alg: none`, HS256 and
 * every other algorithm fail verification.
 *
 * A verified token is remembered per execution environment, keyed by the whole token string,
 * until its `exp` (bounded LRU): the same client sends the same token with every call, and the
 * signature check (an ECDSA verify on the thread pool) is most of a warm call's own time. Reusing
 * the verdict is exactly re-verifying it: the token string, the keys and the issuer and audience
 * do not change, and the entry dies when jose would say "expired". Only successes are kept (a
 * stream of bad tokens cannot fill the cache with anything), and the status hook still runs on
 * every call, so a disabled user or instance is refused as before.
 */
import type { JSONWebKeySet, JWTPayload } from 'jose';
import { createLocalJWKSet } from 'jose/jwks/local';
import { decodeJwt } from 'jose/jwt/decode';
import { jwtVerify } from 'jose/jwt/verify';
import type { Config } from '../config.ts';
import { unauthorized } from '../errors.ts';
import type { Authenticator, Principal, Role } from './principal.ts';
import { TtlCache } from '../ttl-cache.ts';
import { JWT_ALG, type KeyStore } from './keys.ts';

/** At most one re-read of the public keys per this many ms for tokens naming an unknown `kid`. */
const UNKNOWN_KID_RELOAD_MS = 10_000;

/** Verified tokens kept per execution environment: a bound on the cache's memory, whatever the traffic. */
const VERIFIED_TOKENS_MAX = 5_000;

/** Claims Gatehouse puts in an access token beside the registered ones. */
export interface AccessClaims extends JWTPayload {
  /** instance key */
  ins: string;
  /** instance name */
  inm: string;
  /** user name */
  unm: string;
  role: Role;
  /** The user's session generation when the token was issued (absent in tokens issued before it existed: 0). */
  gen?: number;
}

/** The key store failed: carried through jose's verification untouched. */
class KeysUnreadable extends Error {
  constructor(cause: unknown) {
    super('the public keys could not be read', { cause });
  }
}

const ROLES: readonly Role[] = ['Administrator', 'Operator', 'ReadOnly', 'Controller'];

/** Turns verified claims into a principal; rejects tokens missing Gatehouse's claims. */
export function principalFromClaims(p: JWTPayload): Principal {
  const c = p as Partial<AccessClaims>;
  if (
    typeof c.sub !== 'string' ||
    typeof c.ins !== 'string' ||
    typeof c.inm !== 'string' ||
    typeof c.unm !== 'string' ||
    typeof c.jti !== 'string' ||
    !ROLES.includes(c.role as Role) ||
    (c.gen !== undefined && !(Number.isSafeInteger(c.gen) && c.gen >= 0))
  ) {
    throw unauthorized('The access token is missing required claims.');
  }
  return {
    userKey: c.sub,
    userName: c.unm,
    instanceKey: c.ins,
    instanceName: c.inm,
    role: c.role as Role,
    tokenId: c.jti,
    ...(c.gen !== undefined ? { sessionGeneration: c.gen } : {}),
  };
}

export interface AuthenticatorOptions {
  readonly config: Pick<Config, 'issuer' | 'audience'>;
  readonly keys: KeyStore;
  /**
   * Refuses principals whose user or instance was disabled after the token was issued. Called on
   * every verified token; implementations cache per execution environment (at most a minute).
   */
  readonly checkStatus?: (principal: Principal) => Promise<void>;
  /** Verified tokens remembered until their `exp` (0 turns the cache off); default {@link VERIFIED_TOKENS_MAX}. */
  readonly verifiedTokens?: number;
  /**
   * Runs `fn`, sending the reads it starts as one request where they can be (the table's
   * `readTogether`): a new environment reads the public keys and the caller's status together.
   */
  readonly together?: <T>(fn: () => T) => T;
}

export function createAuthenticator(opts: AuthenticatorOptions): Authenticator {
  // The key set follows the store's JWKS (re-read by the store after its cache lifetime).
  let keySet: { jwks: JSONWebKeySet; set: ReturnType<typeof createLocalJWKSet> } | undefined;
  const getKeySet = async (fresh = false) => {
    let jwks: JSONWebKeySet;
    try {
      jwks = await opts.keys.publicKeys({ fresh });
    } catch (err) {
      throw new KeysUnreadable(err);
    }
    if (keySet?.jwks !== jwks) keySet = { jwks, set: createLocalJWKSet(jwks) };
    return keySet.set;
  };
  let lastReload = Number.NEGATIVE_INFINITY;
  const max = opts.verifiedTokens ?? VERIFIED_TOKENS_MAX;
  // `() => Date.now()`, not `Date.now`: the same clock jose reads, fake timers included.
  const verified = max > 0 ? new TtlCache<Principal>(max, 0, () => Date.now()) : undefined;
  const verifyWith = async (token: string, fresh: boolean) =>
    jwtVerify(token, await getKeySet(fresh), {
      algorithms: [JWT_ALG],
      issuer: opts.config.issuer,
      audience: opts.config.audience,
      requiredClaims: ['exp', 'iat', 'sub', 'jti'],
    });

  async function verify(token: string): Promise<Principal> {
    const known = verified?.get(token);
    if (known) return known;
    let payload: JWTPayload;
    try {
      try {
        ({ payload } = await verifyWith(token, false));
      } catch (err) {
        // A kid the cached JWKS lacks: a rollover publishes keys a cache lifetime before they
        // sign, so this is a safety net (read the keys again, at most every 10 s), not the path.
        const now = Date.now();
        if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' || now - lastReload < UNKNOWN_KID_RELOAD_MS) throw err;
        lastReload = now;
        ({ payload } = await verifyWith(token, true));
      }
    } catch (err) {
      // The keys could not be read: the service's failure (503 or 500), not the token's.
      if (err instanceof KeysUnreadable) throw err.cause;
      const code = (err as { code?: string }).code;
      throw unauthorized(code === 'ERR_JWT_EXPIRED' ? 'The access token has expired.' : 'The access token is not valid.');
    }
    const principal = Object.freeze(principalFromClaims(payload));
    // jose calls a token expired once `exp <= now` in whole seconds, i.e. from exp * 1000 ms on:
    // the entry expires at that same instant.
    const ttl = (payload.exp as number) * 1000 - Date.now();
    if (verified && ttl > 0) verified.set(token, principal, ttl);
    return principal;
  }

  function tokenOf(authorization: string | undefined): string {
    if (!authorization) throw unauthorized('Authorization: Bearer <token> is required.');
    const m = /^Bearer\s+([A-Za-z0-9_\-.]+)\s*$/i.exec(authorization);
    if (!m) throw unauthorized('The Authorization header must be "Bearer <token>".');
    return m[1]!;
  }

  /** What the token claims, before any check; undefined when it does not even decode to our claims. */
  function claimedPrincipal(token: string): Principal | undefined {
    try {
      return principalFromClaims(decodeJwt(token));
    } catch {
      return undefined;
    }
  }

  const together = opts.together ?? ((fn) => fn());

  /** The caller a token names, and the promise of its verdict (the verification, then the status). */
  async function deferred(authorization: string | undefined): Promise<{ principal: Principal; status: Promise<void> }> {
    const token = tokenOf(authorization);
    // The environment's first token: the keys are not read yet, and reading them is a round trip
    // (the table's JWKS item in AWS). The caller's status is read with them, from the claims
    // before they are verified (one request: `together`), and a read-only caller's operation need
    // not wait for either: the deferred verdict (signature, expiry, issuer, audience, then the
    // status) decides the answer, which waits for it. The same contract as the status check: a
    // refused caller learns nothing. Once the keys are known, verifying is CPU only and always
    // comes first, so a forged token never starts a read then.
    const claimed = keySet === undefined && !verified?.get(token) ? claimedPrincipal(token) : undefined;
    if (claimed) {
      const [checked, status] = together(() => [
        verify(token).then((principal) => {
          if (JSON.stringify(principal) !== JSON.stringify(claimed)) throw unauthorized('The access token is not valid.');
        }),
        opts.checkStatus ? opts.checkStatus(claimed) : Promise.resolve(),
      ]);
      status.catch(() => {});
      // The token's verdict first: a forged token learns nothing of the status of whom it names.
      return { principal: claimed, status: checked.then(() => status) };
    }
    const principal = await verify(token);
    return { principal, status: opts.checkStatus ? opts.checkStatus(principal) : Promise.resolve() };
  }

  return {
    async authenticate(authorization) {
      // Whatever the caller does next waits here for the whole verdict.
      const { principal, status } = await deferred(authorization);
      await status;
      return principal;
    },
    authenticateDeferred: deferred,
  };
}
