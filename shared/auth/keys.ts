/**
 * Where the access-token signing key lives. Locally: a private JWK generated once and kept in the
 * data directory. In AWS: a Secrets Manager secret per region, generated at deploy time (the token
 * function reads the private key; every other family reads only the public JWKS secret).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JSONWebKeySet, type JWK } from 'jose';
import type { Config } from '../config.ts';

export const JWT_ALG = 'ES256';

export interface SigningKey {
  readonly kid: string;
  readonly key: CryptoKey;
}

export interface KeyStore {
  /** The private key that signs access tokens (token family only). */
  signingKey(): Promise<SigningKey>;
  /** The public keys that verify access tokens. */
  publicKeys(): Promise<JSONWebKeySet>;
}

/** Makes a new ES256 key pair as a private JWK carrying its thumbprint as `kid`. */
export async function generateSigningJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(JWT_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { ...jwk, kid, alg: JWT_ALG, use: 'sig' };
}

/** The public half of a private JWK. */
export function publicJwk(jwk: JWK): JWK {
  const { d: _d, ...pub } = jwk;
  void _d;
  return pub;
}

async function toSigningKey(jwk: JWK): Promise<SigningKey> {
  return { kid: jwk.kid!, key: (await importJWK(jwk, JWT_ALG)) as CryptoKey };
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

/** Local key store: `<dataDir>/keys/signing-key.json`, created on first use (mode 0600). */
export function fileKeyStore(dataDir: string): KeyStore {
  const load = persistentJwk(dataDir, 'signing-key.json');
  return {
    signingKey: async () => toSigningKey(await load()),
    publicKeys: async () => ({ keys: [publicJwk(await load())] }),
  };
}

/**
 * AWS key store: the private JWK in one secret, the public JWKS in another (written together by
 * the stack's key generator). Each is read once per execution environment, on first use; the
 * client is created then too, so a family that never checks a token never makes one.
 */
export function secretsKeyStore(cfg: Pick<Config, 'region' | 'signingKeySecret' | 'publicKeysSecret'>): KeyStore {
  let client: SecretsManagerClient | undefined;
  const read = async (id: string | undefined, what: string): Promise<string> => {
    if (!id) throw new Error(`${what} secret is not configured`);
    client ??= new SecretsManagerClient({ region: cfg.region });
    const out = await client.send(new GetSecretValueCommand({ SecretId: id }));
    if (!out.SecretString) throw new Error(`${what} secret is empty`);
    return out.SecretString;
  };
  let signing: Promise<SigningKey> | undefined;
  let jwks: Promise<JSONWebKeySet> | undefined;
  return {
    signingKey: () =>
      (signing ??= read(cfg.signingKeySecret, 'signing key').then((s) => toSigningKey(JSON.parse(s) as JWK))),
    publicKeys: () => (jwks ??= read(cfg.publicKeysSecret, 'public keys').then((s) => JSON.parse(s) as JSONWebKeySet)),
  };
}

/** The key store for a configuration: Secrets Manager when its secrets are named, else the data directory. */
export function keyStoreFor(cfg: Config): KeyStore {
  return cfg.publicKeysSecret || cfg.signingKeySecret ? secretsKeyStore(cfg) : fileKeyStore(cfg.dataDir);
}
