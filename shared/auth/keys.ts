/**
 * Where the access-token signing keys live. Locally: the key ring (see key-ring.ts) in one file
 * of the data directory (key-files.ts, loaded with the first key asked for). In AWS: the private ring in a Secrets Manager secret, which only the
 * token function reads (shared/auth/secret-ring.ts), and the public JWKS in one table item, which
 * every verifying function reads with the DynamoDB client it already has
 * (shared/db/published-keys.ts). The stack's key manager (functions/keygen) writes both.
 *
 * Each execution environment reuses what it read for `GATEHOUSE_KEY_CACHE_SECONDS` (default 300 s)
 * and then reads again, so a key published by a rollover is known everywhere within that time; a
 * failed re-read keeps the last value for one more lifetime (a short outage does not stop logins)
 * and is tried again on the next call.
 */
import type { CryptoKey, JSONWebKeySet, JWK } from 'jose';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { signingKeyAt, type KeyRing, type RotationPolicy } from './key-ring.ts';
import { readPublishedJwks } from '../db/published-keys.ts';

export { publicJwk } from './key-ring.ts';

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

/** The rotation policy of a configuration. */
export const rotationPolicyOf = (cfg: Pick<Config, 'keyCacheSeconds' | 'accessTokenTtl' | 'signingKeyRotationDays'>): RotationPolicy => ({
  keyCacheSeconds: cfg.keyCacheSeconds,
  accessTokenTtl: cfg.accessTokenTtl,
  rotationDays: cfg.signingKeyRotationDays,
});

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
 * Imports ring keys once per `kid`. jose's key import loads with the first key imported: only
 * the function that signs (the token function) imports one.
 */
export function keyImporter(): (jwk: JWK) => Promise<SigningKey> {
  const imported = new Map<string, Promise<SigningKey>>();
  return (jwk) => {
    let k = imported.get(jwk.kid!);
    if (!k) {
      k = import('./jwk-import.ts').then(async ({ importJWK }) => ({ kid: jwk.kid!, key: (await importJWK(jwk, JWT_ALG)) as CryptoKey }));
      imported.set(jwk.kid!, k);
    }
    return k;
  };
}

/** A ring loader: the ring, read again after its cache lifetime or when `fresh`. */
export type RingSource = (fresh?: boolean) => Promise<KeyRing>;

/**
 * AWS key store: the public JWKS from its table item (shared/db/published-keys.ts), read on first use and
 * again after `cacheMs`. Only a store given the ring (the token function's, from its secret) signs.
 */
export function tableKeyStore(
  db: Pick<Db, 'raw' | 'tableName'>,
  opts: { readonly cacheMs?: number; readonly ring?: RingSource } = {},
): KeyStore {
  const jwks = refreshing(async () => {
    const text = await readPublishedJwks(db.raw, db.tableName);
    if (!text) throw new Error('no public keys are published in the table (the key manager writes them when the stack deploys)');
    return JSON.parse(text) as JSONWebKeySet;
  }, opts.cacheMs ?? DEFAULT_KEY_CACHE_MS);
  const importKey = keyImporter();
  const ring = opts.ring;
  return {
    signingKey: async (at = new Date()) => {
      if (!ring) throw new Error('this function does not sign access tokens (only the token function reads the signing key ring)');
      return importKey(signingKeyAt(await ring(), Math.floor(at.getTime() / 1000)).jwk);
    },
    publicKeys: (o) => jwks(o?.fresh),
  };
}

/**
 * The key store for a configuration: with `GATEHOUSE_PUBLIC_KEYS=table` the published JWKS (signing
 * with `ring` when given: the token function's), else the ring in the data directory.
 */
export function keyStoreFor(cfg: Config, db: Pick<Db, 'raw' | 'tableName'>, ring?: RingSource): KeyStore {
  const cacheMs = cfg.keyCacheSeconds * 1000;
  if (cfg.publicKeys === 'table') return tableKeyStore(db, { cacheMs, ...(ring ? { ring } : {}) });
  if (ring) throw new Error('a signing key ring outside the data directory needs GATEHOUSE_PUBLIC_KEYS=table: its public keys are published there');
  // The file store (key-files.ts) loads with the first key asked for: in AWS it is never used.
  let file: Promise<KeyStore> | undefined;
  const store = (): Promise<KeyStore> => (file ??= import('./key-files.ts').then((m) => m.fileKeyStore(cfg.dataDir, { cacheMs })));
  return {
    signingKey: async (at) => (await store()).signingKey(at),
    publicKeys: async (opts) => (await store()).publicKeys(opts),
  };
}

