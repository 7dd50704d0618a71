/**
 * Instance licences: an ES256 JWS signed by a licence authority, naming the instance key (`ins`),
 * an optional expiry (`exp`, epoch seconds) and whether it is a trial (`trial`). A licence is
 * checked at login (not when it is set), on the login instance or its nearest ancestor that has
 * one.
 *
 * The authority's public key comes from `GATEHOUSE_LICENSE_AUTHORITY_KEY` (a public JWK or a JWKS,
 * as JSON) in AWS. Locally, a development authority key pair is generated once in
 * `<dataDir>/keys/license-authority.json` (mode 0600) by the first-start seeding or the admin
 * command, and verifies licences when no authority key is configured. Without either, no licence
 * is valid (`instance_license_tampered`).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JSONWebKeySet, JWK } from 'jose';
import { createLocalJWKSet } from 'jose/jwks/local';
import { compactVerify } from 'jose/jws/compact/verify';
import type { Config } from '../config.ts';
import { publicJwk } from './key-ring.ts';
import { JWT_ALG } from './key-store.ts';

export const LICENSE_TYP = 'gatehouse-license+jwt';
export const LICENSE_ISSUER = 'gatehouse-license-authority';

interface LicenseClaims {
  /** The instance the licence is for. */
  readonly instanceKey: string;
  /** Epoch ms; undefined for a licence without expiry. */
  readonly expiresAt: number | undefined;
  readonly trial: boolean;
}

/** Result of checking a stored licence for the instance that holds it. */
type LicenseStatus =
  | { readonly state: 'valid'; readonly claims: LicenseClaims }
  /** Not signed by the authority, or not a licence at all. */
  | { readonly state: 'tampered' }
  /** Signed, but for another instance: not a valid licence here. */
  | { readonly state: 'other_instance' }
  | { readonly state: 'expired'; readonly claims: LicenseClaims };

export interface LicenseVerifier {
  check(license: string, holderKey: string, now: Date): Promise<LicenseStatus>;
}

/** Parses a JWK or a JWKS given as JSON text into a key set. */
function parseAuthorityKeys(json: string): JSONWebKeySet {
  const parsed = JSON.parse(json) as JWK | JSONWebKeySet;
  const keys = 'keys' in parsed && Array.isArray(parsed.keys) ? parsed.keys : [parsed as JWK];
  // Only public halves are ever used to verify.
  return { keys: keys.map((k) => publicJwk(k)) };
}

/** Verifies licences against a set of authority public keys. */
function licenseVerifier(loadKeys: () => Promise<JSONWebKeySet>): LicenseVerifier {
  let keySet: Promise<ReturnType<typeof createLocalJWKSet> | undefined> | undefined;
  const getKeySet = () => {
    if (!keySet) {
      // No authority key (yet) means no licence can be valid; it is looked for again next time.
      keySet = loadKeys().then(
        (k) => createLocalJWKSet(k),
        (err: unknown) => {
          keySet = undefined;
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
          throw err;
        },
      );
    }
    return keySet;
  };
  return {
    async check(license, holderKey, now) {
      const keys = await getKeySet();
      if (!keys) return { state: 'tampered' };
      let payload: Uint8Array;
      try {
        ({ payload } = await compactVerify(license.trim(), keys, { algorithms: [JWT_ALG] }));
      } catch {
        return { state: 'tampered' };
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
      } catch {
        return { state: 'tampered' };
      }
      if (typeof body.ins !== 'string' || (body.exp !== undefined && typeof body.exp !== 'number')) return { state: 'tampered' };
      const claims: LicenseClaims = {
        instanceKey: body.ins,
        expiresAt: typeof body.exp === 'number' ? body.exp * 1000 : undefined,
        trial: body.trial === true,
      };
      if (claims.instanceKey !== holderKey) return { state: 'other_instance' };
      if (claims.expiresAt !== undefined && claims.expiresAt <= now.getTime()) return { state: 'expired', claims };
      return { state: 'valid', claims };
    },
  };
}

/** Where the local development authority keeps its private JWK. */
export const LOCAL_AUTHORITY_FILE = 'license-authority.json';
const localAuthorityFile = (dataDir: string): string => join(dataDir, 'keys', LOCAL_AUTHORITY_FILE);

/**
 * The verifier for a configuration: the configured authority key in AWS, else the local
 * development authority of the data directory.
 */
export function licenseVerifierFor(cfg: Pick<Config, 'licenseAuthorityKey' | 'dataDir'>): LicenseVerifier {
  if (cfg.licenseAuthorityKey) {
    const keys = parseAuthorityKeys(cfg.licenseAuthorityKey);
    return licenseVerifier(async () => keys);
  }
  // Read only: verifying never creates an authority (the seeding or the admin command does).
  const file = localAuthorityFile(cfg.dataDir);
  return licenseVerifier(async () => ({ keys: [publicJwk(JSON.parse(await readFile(file, 'utf8')) as JWK)] }));
}
