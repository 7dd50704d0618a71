/**
 * The licence authority: signs instance licences (see licenses.ts for what one is and how the
 * token service checks it). The local development authority keeps its private JWK in the data
 * directory; the admin command and the first-start seeding issue with it. No function deployed
 * in AWS signs licences, so none bundles this module.
 */
import type { CryptoKey, JWK } from 'jose';
import { CompactSign } from 'jose/jws/compact/sign';
import { importJWK } from 'jose/key/import';
import { persistentJwk } from './key-files.ts';
import { publicJwk } from './key-ring.ts';
import { JWT_ALG } from './key-store.ts';
import { LICENSE_ISSUER, LICENSE_TYP, LOCAL_AUTHORITY_FILE } from './licenses.ts';

interface LicenseIssueOptions {
  readonly instanceKey: string;
  /** Days of validity; no expiry when omitted (trials default to 30 days). */
  readonly days?: number;
  readonly trial?: boolean;
  readonly now?: Date;
}

export interface LicenseAuthority {
  issue(opts: LicenseIssueOptions): Promise<string>;
  publicJwk(): Promise<JWK>;
}

/** Signs licences with a private authority JWK. */
export function licenseAuthorityFromJwk(load: () => Promise<JWK>): LicenseAuthority {
  let key: Promise<CryptoKey> | undefined;
  return {
    async issue(opts) {
      const jwk = await load();
      key ??= importJWK(jwk, JWT_ALG) as Promise<CryptoKey>;
      const now = opts.now ?? new Date();
      const iat = Math.floor(now.getTime() / 1000);
      const days = opts.days ?? (opts.trial ? 30 : undefined);
      const payload = {
        iss: LICENSE_ISSUER,
        ins: opts.instanceKey,
        iat,
        ...(days !== undefined ? { exp: iat + Math.round(days * 86400) } : {}),
        trial: opts.trial === true,
      };
      return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: JWT_ALG, typ: LICENSE_TYP, kid: jwk.kid! })
        .sign(await key);
    },
    publicJwk: async () => publicJwk(await load()),
  };
}

/** The local development authority's private JWK, created on first use in the data directory. */
function localAuthorityJwk(dataDir: string): () => Promise<JWK> {
  return persistentJwk(dataDir, LOCAL_AUTHORITY_FILE);
}

/** The local development licence authority kept in the data directory. */
export function localLicenseAuthority(dataDir: string): LicenseAuthority {
  return licenseAuthorityFromJwk(localAuthorityJwk(dataDir));
}
