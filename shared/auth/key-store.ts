/**
 * What every key store shares (see keys.ts for where the keys live): the store's interface, the
 * cache of what was read, the choice and the import of a ring's signing key. A module of its own
 * so that the local key files (key-files.ts, loaded on first use where keys live in the data
 * directory) need nothing else of keys.ts: a lazily loaded module that imported keys.ts, and with
 * it the table reads and the SDK, would split the code every cold start loads into more files.
 */
import type { CryptoKey, JSONWebKeySet, JWK } from 'jose';

export interface RingKey {
  /** The private JWK (`kid` = its thumbprint). */
  readonly jwk: JWK;
  /** Epoch seconds from which the key signs (the newest key whose time has come signs). */
  readonly signsFrom: number;
  /** Epoch seconds after which the key is dropped: set when a newer key is scheduled to replace it. */
  readonly dropAfter?: number;
}

export interface KeyRing {
  /** Oldest first. */
  readonly keys: readonly RingKey[];
}

export const JWT_ALG = 'ES256';

export interface SigningKey {
  readonly kid: string;
  readonly key: CryptoKey;
}

export interface KeyStore {
  /** The private key that signs an access token issued at `at` (default: now; token family only). */
  signingKey(at?: Date): Promise<SigningKey>;
  /**
   * The public keys that verify access tokens. `fresh`: read them again now (a token names a
   * `kid` the cached set lacks); a store that cannot re-read answers what it has.
   */
  publicKeys(opts?: { readonly fresh?: boolean }): Promise<JSONWebKeySet>;
}

/** The default key-cache lifetime, as `GATEHOUSE_KEY_CACHE_SECONDS`' default. */
export const DEFAULT_KEY_CACHE_MS = 300_000;

/**
 * A value read by `load`, reused for `ttlMs`, then read again (one read at a time). When a re-read
 * fails, the last value is answered for one more `ttlMs`; after that the failure is.
 */
export function refreshing<T>(load: () => Promise<T>, ttlMs: number, clock: () => number = () => Date.now()): (fresh?: boolean) => Promise<T> {
  let current: { value: T; at: number } | undefined;
  let inflight: Promise<T> | undefined;
  return async (fresh = false) => {
    const now = clock();
    if (current && !fresh && now - current.at < ttlMs) return current.value;
    inflight ??= load()
      .then((value) => {
        current = { value, at: clock() };
        return value;
      })
      .finally(() => {
        inflight = undefined;
      });
    try {
      return await inflight;
    } catch (err) {
      if (current && now - current.at < 2 * ttlMs) return current.value;
      throw err;
    }
  };
}

/**
 * Imports ring keys once per `kid`, with WebCrypto (what jose's `importJWK` calls for an ES256
 * key): the ring's keys are ours, always P-256 private JWKs, and a verifying function that
 * bundled jose's key import (its other formats and ASN.1 code) would load it at every cold start
 * without ever signing.
 */
export function keyImporter(): (jwk: JWK) => Promise<SigningKey> {
  const imported = new Map<string, Promise<SigningKey>>();
  return (jwk) => {
    let k = imported.get(jwk.kid!);
    if (!k) {
      k = crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']).then((key) => ({ kid: jwk.kid!, key }));
      imported.set(jwk.kid!, k);
    }
    return k;
  };
}

/**
 * The key that signs at `nowS`: the newest key whose `signsFrom` has passed. When none has (only
 * a brand-new ring whose clock runs behind), the earliest one.
 */
export function signingKeyAt(ring: KeyRing, nowS: number): RingKey {
  let best: RingKey | undefined;
  for (const k of ring.keys) if (k.signsFrom <= nowS && (!best || k.signsFrom >= best.signsFrom)) best = k;
  return best ?? [...ring.keys].sort((a, b) => a.signsFrom - b.signsFrom)[0]!;
}
