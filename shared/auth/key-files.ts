/**
 * The signing keys of the local runtime, kept in files of the data directory: the key ring
 * (`<dataDir>/keys/signing-key.json`, see key-ring.ts), other private JWKs (the local licence
 * authority's), and the making of new keys (the key manager's too). `keyStoreFor` (keys.ts) loads
 * this module with the first key a local store is asked for; functions in AWS read the published
 * keys instead and never load it.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JSONWebKeySet, JWK } from 'jose';
import { calculateJwkThumbprint } from 'jose/jwk/thumbprint';
import { exportJWK } from 'jose/key/export';
import { generateKeyPair } from 'jose/key/generate/keypair';
import { maintainRing, newRing, parseRing, publicJwksOf, serializeRing, signingKeyAt, type Maintenance, type RotationPolicy } from './key-ring.ts';
import { DEFAULT_KEY_CACHE_MS, JWT_ALG, keyImporter, refreshing, type KeyRing, type KeyStore } from './key-store.ts';

/** Makes a new ES256 key pair as a private JWK carrying its thumbprint as `kid`. */
export async function generateSigningJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(JWT_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { ...jwk, kid, alg: JWT_ALG, use: 'sig' };
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
