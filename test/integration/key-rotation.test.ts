/**
 * Signing-key rollover through the real token handler and authenticator on DynamoDB Local, with
 * the local ring (`<data dir>/keys/signing-key.json`) and a key-cache lifetime of 1 s: the JWKS at
 * each stage, tokens of both keys verifying during the overlap, only the new key's after it, and
 * a verifier with a long cache accepting a new `kid` by reading the keys again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeProtectedHeader } from 'jose';
import { createAuthenticator } from '#shared/auth/authenticator.ts';
import { createInstance } from '#shared/auth/provisioning.ts';
import { rotationPolicyOf } from '#shared/auth/keys.ts';
import { fileKeyStore, maintainFileRing } from '#shared/auth/key-files.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { hashPassword } from '#shared/auth/passwords.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { newKey } from '#shared/model/placement.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedUser, uniqueName } from '../support/tokens.ts';

const PASSWORD = 'Corr3ct-Horse!';
const CACHE_MS = 1_000;

let t: TestDb;
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);
let deps: CoreDeps;
let api: ReturnType<typeof createApi>;
let acme: StoredObject;
let user: StoredObject;

async function login(on = api): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'password', username: `${acme.doc.CommonName}\\${user.doc.CommonName}`, password: PASSWORD });
  const res = await on.post('/token', { body: body.toString(), contentType: 'application/x-www-form-urlencoded' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token as string;
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const jwksKids = async (on = api) => {
  const res = await on.get('/.well-known/jwks.json');
  expect(res.status).toBe(200);
  expect(JSON.stringify(res.body)).not.toMatch(/"d":/);
  return (res.body.keys as Array<{ kid: string }>).map((k) => k.kid);
};
/** A new execution environment: nothing cached yet. */
const freshApi = () => createApi(createCoreDeps({ config: t.config, db: t.db, now }));

beforeAll(async () => {
  t = await createTestDb({ GATEHOUSE_KEY_CACHE_SECONDS: '1', GATEHOUSE_ACCESS_TOKEN_TTL: '60', GATEHOUSE_SIGNING_KEY_ROTATION_DAYS: '0' });
  deps = createCoreDeps({ config: t.config, db: t.db, now });
  api = createApi(deps);
  const key = newKey();
  acme = await createInstance(t.db, { key, name: uniqueName('Acme'), license: await localLicenseAuthority(t.config.dataDir).issue({ instanceKey: key }) });
  user = await seedUser(t, acme, 'Operator', uniqueName('kim'), { passwordHash: await hashPassword(PASSWORD) });
});

describe('signing key rollover', () => {
  it('publishes first, signs with the new key after the lead, keeps both valid during the overlap, then only the new one', async () => {
    const policy = rotationPolicyOf(t.config);
    const oldToken = await login();
    const oldKid = kidOf(oldToken);
    expect(await jwksKids()).toEqual([oldKid]);

    // 1. Publish: the next key is in the JWKS (once the 1 s cache has gone by), not signing yet.
    const rotated = await maintainFileRing(t.config.dataDir, policy, { rotate: true, now: now() });
    const newKid = rotated.scheduled!;
    expect(newKid).toBeDefined();
    await sleep(CACHE_MS + 100);
    expect(await jwksKids()).toEqual([oldKid, newKid]);
    // (The server clock held back: a login takes a scrypt, which on a busy machine outlasts the lead.)
    clockOffsetMs -= 10_000;
    expect(kidOf(await login())).toBe(oldKid);

    // 2. Sign: from twice the cache lifetime on, logins get the new key.
    clockOffsetMs += 10_000 + 2 * CACHE_MS + 500;
    const newToken = await login();
    expect(kidOf(newToken)).toBe(newKid);

    // The overlap: both verify, here and in an execution environment that starts now.
    for (const on of [api, freshApi()]) {
      expect((await on.get('/api', { token: oldToken })).status).toBe(200);
      expect((await on.get('/api', { token: newToken })).status).toBe(200);
    }

    // 3. Retire: not before the old key's last token has expired (60 s + one cache lifetime).
    const switchedAt = rotated.ring.keys.find((k) => k.jwk.kid === newKid)!.signsFrom;
    const early = await maintainFileRing(t.config.dataDir, policy, { now: new Date((switchedAt + 60) * 1000) });
    expect(early.dropped).toEqual([]);
    const late = await maintainFileRing(t.config.dataDir, policy, { now: new Date((switchedAt + 61) * 1000) });
    expect(late.dropped).toEqual([oldKid]);
    await sleep(CACHE_MS + 100);
    expect(await jwksKids()).toEqual([newKid]);
    // A token of the dropped key (its exp moved forward with this test's clock) is refused by an
    // environment that verifies it now; the new key's is accepted.
    const after = freshApi();
    const refused = await after.get('/api', { token: oldToken });
    expect(refused.status).toBe(401);
    expect(refused.body.error_description).toMatch(/not valid/);
    expect((await after.get('/api', { token: newToken })).status).toBe(200);
    expect(kidOf(await login(after))).toBe(newKid);
  });

  it('refuses a second rollover while a key waits to sign', async () => {
    const policy = rotationPolicyOf(t.config);
    const first = await maintainFileRing(t.config.dataDir, policy, { rotate: true, now: now() });
    expect(first.scheduled).toBeDefined();
    const second = await maintainFileRing(t.config.dataDir, policy, { rotate: true, now: now() });
    expect(second.scheduled).toBeUndefined();
    clockOffsetMs += 2 * CACHE_MS + 500;
    await sleep(CACHE_MS + 100);
    expect(kidOf(await login())).toBe(first.scheduled);
  });

  it('lets a verifier that cached the keys long before accept a new kid by reading them again', async () => {
    const longCache = fileKeyStore(t.config.dataDir, { cacheMs: 3_600_000 });
    const verifier = createAuthenticator({ config: t.config, keys: longCache, verifiedTokens: 0 });
    await verifier.authenticate(`Bearer ${await login()}`);

    const m = await maintainFileRing(t.config.dataDir, rotationPolicyOf(t.config), { rotate: true, now: now() });
    clockOffsetMs += 2 * CACHE_MS + 500;
    await sleep(CACHE_MS + 100);
    const token = await login();
    expect(kidOf(token)).toBe(m.scheduled);

    await expect(verifier.authenticate(`Bearer ${token}`)).resolves.toMatchObject({ userKey: user.key });
  });
});
