/**
 * Where the access-token signing keys live. Locally: the key ring (see key-ring.ts) in one file
 * of the data directory. In AWS: the private ring in a Secrets Manager secret, which only the
 * token function reads (shared/auth/secret-ring.ts), and the public JWKS in one table item, which
 * every verifying function reads with the DynamoDB client it already has
 * (shared/db/published-keys.ts). The stack's key manager (functions/keygen) writes both.
 *
 * Each execution environment reuses what it read for `GATEHOUSE_KEY_CACHE_SECONDS` (default 300 s)
 * and then reads again, so a key published by a rollover is known everywhere within that time; a
 * failed re-read keeps the last value for one more lifetime (a short outage does not stop logins)
 * and is tried again on the next call.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JSONWebKeySet, type JWK } from 'jose';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import { maintainRing, newRing, parseRing, publicJwksOf, serializeRing, signingKeyAt, type KeyRing, type Maintenance, type RotationPolicy } from './key-ring.ts';
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

/** Makes a new ES256 key pair as a private JWK carrying its thumbprint as `kid`. */
export async function generateSigningJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(JWT_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { ...jwk, kid, alg: JWT_ALG, use: 'sig' };
}

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

/** Imports ring keys once per `kid`. */
function keyImporter(): (jwk: JWK) => Promise<SigningKey> {
  const imported = new Map<string, Promise<SigningKey>>();
  return (jwk) => {
    let k = imported.get(jwk.kid!);
    if (!k) {
      k = importJWK(jwk, JWT_ALG).then((key) => ({ kid: jwk.kid!, key: key as CryptoKey }));
      imported.set(jwk.kid!, k);
    }
    return k;
  };
}

/**
 * A private JWK kept in `<dataDir>/keys/<fileName>` (mode 0600), generated on first use. Two
 * processes starting at once agree on one key: the file is created exclusively.
 */
export function persistentJwk(dataDir: string, fileName: string): () => Promise<JWK> {
  const file = join(dataDir, 'keys', fileName);
  let jwk: Promise<JWK> | undefined;
  return () =>
    (jwk ??= (async () => {
      try {
        return JSON.parse(await readFile(file, 'utf8')) as JWK;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      await mkdir(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
      const fresh = await generateSigningJwk();
      try {
        // `wx`: if another process created it first, use theirs.
        await writeFile(file, JSON.stringify(fresh), { flag: 'wx', mode: 0o600 });
        return fresh;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        return JSON.parse(await readFile(file, 'utf8')) as JWK;
      }
    })());
}

/** The local ring's file (a single private JWK in data directories from before rotation: read as a ring of one). */
export const RING_FILE = 'signing-key.json';

/**
 * The local ring in `<dataDir>/keys/signing-key.json`, created with one key on first use (two
 * processes starting at once agree on one: the file is created exclusively).
 */
export async function readFileRing(dataDir: string, now: () => Date = () => new Date()): Promise<KeyRing> {
  const file = join(dataDir, 'keys', RING_FILE);
  const parse = (text: string): KeyRing => {
    const ring = parseRing(text);
    if (!ring) throw new Error(`${file} holds no signing key ring`);
    return ring;
  };
  try {
    return parse(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(join(dataDir, 'keys'), { recursive: true, mode: 0o700 });
  const ring = newRing(await generateSigningJwk(), Math.floor(now().getTime() / 1000));
  try {
    await writeFile(file, serializeRing(ring), { flag: 'wx', mode: 0o600 });
    return ring;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return parse(await readFile(file, 'utf8'));
  }
}

/** Replaces the local ring at once (a new file renamed over the old: readers see one or the other). */
export async function writeFileRing(dataDir: string, ring: KeyRing): Promise<void> {
  const file = join(dataDir, 'keys', RING_FILE);
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, serializeRing(ring), { mode: 0o600 });
  await rename(temp, file);
}

/**
 * Local key store: the ring in `<dataDir>/keys/signing-key.json` (created on first use), re-read
 * after `cacheMs`. The JWKS is the ring's public half.
 */
export function fileKeyStore(dataDir: string, opts: { readonly cacheMs?: number } = {}): KeyStore {
  const ring = refreshing(() => readFileRing(dataDir), opts.cacheMs ?? DEFAULT_KEY_CACHE_MS);
  const importKey = keyImporter();
  // One JWKS object per ring read: the authenticator rebuilds its key set only when it changes.
  const jwksOf = new WeakMap<KeyRing, JSONWebKeySet>();
  return {
    signingKey: async (at = new Date()) => importKey(signingKeyAt(await ring(), Math.floor(at.getTime() / 1000)).jwk),
    publicKeys: async (o) => {
      const r = await ring(o?.fresh);
      let jwks = jwksOf.get(r);
      if (!jwks) jwksOf.set(r, (jwks = publicJwksOf(r)));
      return jwks;
    },
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
  return fileKeyStore(cfg.dataDir, { cacheMs });
}

/**
 * One maintenance step of the local ring (see key-ring.ts `maintainRing`): the local runtime runs
 * it every minute, as the hourly schedule does in AWS, and `npm run admin -- rotate-signing-key`
 * runs it with `rotate`. The file is replaced only when something changed.
 */
export async function maintainFileRing(
  dataDir: string,
  policy: RotationPolicy,
  opts: { readonly rotate?: boolean; readonly now?: Date } = {},
): Promise<Maintenance> {
  const now = opts.now ?? new Date();
  const ring = await readFileRing(dataDir, () => now);
  const m = await maintainRing(ring, Math.floor(now.getTime() / 1000), policy, generateSigningJwk, opts.rotate === true);
  if (serializeRing(m.ring) !== serializeRing(ring)) await writeFileRing(dataDir, m.ring);
  return m;
}
