import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publicJwk } from '#shared/auth/key-ring.ts';
import { generateSigningJwk } from '#shared/auth/key-files.ts';
import { licenseVerifierFor } from '#shared/auth/licenses.ts';
import { licenseAuthorityFromJwk, localLicenseAuthority } from '#shared/auth/license-authority.ts';

const KEY = '0123456789abcdef01234567';
const OTHER = 'fedcba9876543210fedcba98';
const now = new Date('2030-06-01T00:00:00Z');

describe('licences', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gh-lic-'));
  const authority = localLicenseAuthority(dataDir);
  const verifier = licenseVerifierFor({ dataDir, licenseAuthorityKey: undefined });

  it('keeps the local authority key in the data directory, readable by the owner only', async () => {
    await authority.issue({ instanceKey: KEY });
    expect(statSync(join(dataDir, 'keys', 'license-authority.json')).mode & 0o077).toBe(0);
  });

  it('accepts a perpetual licence for the instance that holds it', async () => {
    const lic = await authority.issue({ instanceKey: KEY, now });
    expect(await verifier.check(lic, KEY, now)).toEqual({ state: 'valid', claims: { instanceKey: KEY, expiresAt: undefined, trial: false } });
  });

  it('accepts a trial before its expiry and reports it expired after', async () => {
    const lic = await authority.issue({ instanceKey: KEY, trial: true, days: 30, now });
    expect((await verifier.check(lic, KEY, new Date(now.getTime() + 29 * 86400_000))).state).toBe('valid');
    const later = await verifier.check(lic, KEY, new Date(now.getTime() + 31 * 86400_000));
    expect(later).toMatchObject({ state: 'expired', claims: { trial: true } });
  });

  it('reports a licence of another instance', async () => {
    const lic = await authority.issue({ instanceKey: OTHER, now });
    expect((await verifier.check(lic, KEY, now)).state).toBe('other_instance');
  });

  it('reports a changed payload, a foreign signer and garbage as tampered', async () => {
    const lic = await authority.issue({ instanceKey: OTHER, now });
    const [h, , s] = lic.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ins: KEY, trial: false })).toString('base64url')}.${s}`;
    expect((await verifier.check(forged, KEY, now)).state).toBe('tampered');
    const foreignJwk = await generateSigningJwk();
    const foreign = await licenseAuthorityFromJwk(async () => foreignJwk).issue({ instanceKey: KEY, now });
    expect((await verifier.check(foreign, KEY, now)).state).toBe('tampered');
    expect((await verifier.check('not a licence', KEY, now)).state).toBe('tampered');
  });

  it('finds no licence valid while there is no authority, and never creates one itself', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'gh-lic-'));
    const v = licenseVerifierFor({ dataDir: empty, licenseAuthorityKey: undefined });
    const foreign = await authority.issue({ instanceKey: KEY, now });
    expect((await v.check(foreign, KEY, now)).state).toBe('tampered');
    expect(() => statSync(join(empty, 'keys', 'license-authority.json'))).toThrow();
    // Once the seeding creates the local authority, its licences verify (the miss was not cached).
    const lic = await localLicenseAuthority(empty).issue({ instanceKey: KEY, now });
    expect((await v.check(lic, KEY, now)).state).toBe('valid');
  });

  it('verifies against a configured authority key (AWS) given as a JWK or a JWKS', async () => {
    const jwk = await generateSigningJwk();
    const lic = await licenseAuthorityFromJwk(async () => jwk).issue({ instanceKey: KEY, now });
    for (const text of [JSON.stringify(publicJwk(jwk)), JSON.stringify({ keys: [publicJwk(jwk)] })]) {
      const v = licenseVerifierFor({ dataDir, licenseAuthorityKey: text });
      expect((await v.check(lic, KEY, now)).state).toBe('valid');
      expect((await v.check(await authority.issue({ instanceKey: KEY, now }), KEY, now)).state).toBe('tampered');
    }
  });
});
