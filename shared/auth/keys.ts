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
import type { JSONWebKeySet } from 'jose';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import type { RotationPolicy } from './key-ring.ts';
import { getItems } from '../db/item-reads.ts';
import { PUBLIC_KEYS_PK, PUBLIC_KEYS_SK } from '../db/item-keys.ts';
import { DEFAULT_KEY_CACHE_MS, keyImporter, refreshing, signingKeyAt, type KeyRing, type KeyStore } from './key-store.ts';
import { onFirstUse } from '../first-use.ts';

export { JWT_ALG, refreshing, type KeyStore } from './key-store.ts';

/** The rotation policy of a configuration. */
export const rotationPolicyOf = (cfg: Pick<Config, 'keyCacheSeconds' | 'accessTokenTtl' | 'signingKeyRotationDays'>): RotationPolicy => ({
  keyCacheSeconds: cfg.keyCacheSeconds,
  accessTokenTtl: cfg.accessTokenTtl,
  rotationDays: cfg.signingKeyRotationDays,
});

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
    // Through getItems (an eventually consistent read, as keygen publishes a key a cache lifetime
    // before it signs): a cold start's first call reads the keys and the caller's status together.
    const [item] = await getItems(db, [{ PK: PUBLIC_KEYS_PK, SK: PUBLIC_KEYS_SK }]);
    const text = typeof item?.Jwks === 'string' ? item.Jwks : undefined;
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
  // The file store (key-files.ts) loads with the first key asked for: in AWS it is never used, and
  // at start it would carry most of the functions over the bench's bundle-size goal (docs/cost.md).
  const store = onFirstUse(() => import('./key-files.ts').then((m) => m.fileKeyStore(cfg.dataDir, { cacheMs })));
  return {
    signingKey: async (at) => (await store()).signingKey(at),
    publicKeys: async (opts) => (await store()).publicKeys(opts),
  };
}

