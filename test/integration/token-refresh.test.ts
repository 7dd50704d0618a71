/**
 * POST /token, refresh grant (rotation, reuse detection, parallel race, expiry), the JWKS, and
 * protected calls refused after the user or instance is disabled — through the real token
 * handler on DynamoDB Local.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createInstance } from '#shared/auth/provisioning.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { hashPassword } from '#shared/auth/passwords.ts';
import { seedDeployment } from '#shared/auth/bootstrap.ts';
import { getObject } from '#shared/db/objects-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { replaceObject } from '#shared/db/object-writes.ts';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { OAuthError } from '#shared/errors.ts';
import { newKey } from '#shared/model/placement.ts';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedUser } from '../support/tokens.ts';

const PASSWORD = 'Corr3ct-Horse!';
const FORM = 'application/x-www-form-urlencoded';

let t: TestDb;
let hash: string;
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);
let deps: CoreDeps;
let api: ReturnType<typeof createApi>;
let acme: StoredObject;
let seq = 0;

const makeUser = (instance: StoredObject, doc: Record<string, unknown> = {}) =>
  seedUser(t, instance, 'Operator', `user${++seq}`, { doc, passwordHash: hash });

async function edit(o: StoredObject, changes: Record<string, unknown>): Promise<StoredObject> {
  const current = (await getObject(t.db, o.key, true))!;
  const next = { ...current, version: current.version + 1, doc: { ...current.doc, ...changes } };
  await replaceObject(t.db, next, current.version);
  return next;
}

const post = (fields: Record<string, string>) => api.post('/token', { body: new URLSearchParams(fields).toString(), contentType: FORM });

async function loginAs(instance: StoredObject, user: StoredObject) {
  const res = await post({ grant_type: 'password', username: `${instance.doc.CommonName}\\${user.doc.CommonName}`, password: PASSWORD });
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string; instance: string; userName: string };
}

const refresh = (token: string, extra: Record<string, string> = {}) => post({ grant_type: 'refresh_token', refresh_token: token, ...extra });

function expectTicketNotValid(res: { status: number; body: any }) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: 'RefreshTokenTicketNotValid', error_description: expect.any(String) });
}

async function unauthorizedReason(token: string): Promise<string | undefined> {
  try {
    await deps.authenticator.authenticate(`Bearer ${token}`);
    return undefined;
  } catch (err) {
    if (err instanceof OAuthError && err.status === 401) return err.code;
    throw err;
  }
}

beforeAll(async () => {
  t = await createTestDb();
  deps = createCoreDeps({ config: t.config, db: t.db, now });
  api = createApi(deps);
  hash = await hashPassword(PASSWORD);
  const key = newKey();
  acme = await createInstance(t.db, { key, name: 'Acme', license: await localLicenseAuthority(t.config.dataDir).issue({ instanceKey: key }) });
});

describe('refresh grant', () => {
  it('rotates: a new access and refresh token with the login fields; the old one is then spent', async () => {
    const user = await makeUser(acme);
    const first = await loginAs(acme, user);
    const res = await refresh(first.refresh_token);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ userName: `Acme\\${user.doc.CommonName}`, token_type: 'bearer', expires_in: 86399, instance: acme.key });
    expect(res.body.refresh_token).not.toBe(first.refresh_token);
    expect(res.body.access_token).not.toBe(first.access_token);
    expect(await unauthorizedReason(res.body.access_token)).toBeUndefined();
    const again = await refresh(res.body.refresh_token);
    expect(again.status).toBe(200);
  });

  it('detects reuse: a spent token is refused and revokes every token of that login, not other logins', async () => {
    const user = await makeUser(acme);
    const login1 = await loginAs(acme, user);
    const login2 = await loginAs(acme, user);
    const r1 = await refresh(login1.refresh_token);
    expect(r1.status).toBe(200);
    expectTicketNotValid(await refresh(login1.refresh_token));
    // The legitimate holder's newer token is revoked too (RFC 9700 reuse detection) ...
    expectTicketNotValid(await refresh(r1.body.refresh_token));
    // ... access tokens already issued stay valid until they expire, and the other login is untouched.
    expect(await unauthorizedReason(r1.body.access_token)).toBeUndefined();
    expect((await refresh(login2.refresh_token)).status).toBe(200);
  });

  it('lets at most one of two parallel refreshes with one token win', async () => {
    const user = await makeUser(acme);
    const login = await loginAs(acme, user);
    const results = await Promise.all([refresh(login.refresh_token), refresh(login.refresh_token), refresh(login.refresh_token)]);
    const winners = results.filter((r) => r.status === 200);
    expect(winners.length).toBeLessThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 200)) expectTicketNotValid(r);
  });

  it('refuses an unknown, a malformed and a missing refresh token', async () => {
    expectTicketNotValid(await refresh('A'.repeat(43)));
    expectTicketNotValid(await refresh('not a token at all'));
    expectTicketNotValid(await post({ grant_type: 'refresh_token' }));
  });

  it('refuses a refresh token after its absolute expiry (30 days from the login)', async () => {
    const user = await makeUser(acme);
    const login = await loginAs(acme, user);
    clockOffsetMs = 20 * 86400_000;
    try {
      const mid = await refresh(login.refresh_token);
      expect(mid.status).toBe(200);
      clockOffsetMs = 30 * 86400_000 + 60_000;
      expectTicketNotValid(await refresh(mid.body.refresh_token));
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('refuses a refresh token of another client, and a disabled user', async () => {
    const user = await makeUser(acme);
    const login = await loginAs(acme, user);
    expect((await refresh(login.refresh_token, { client_secret: 'wrong' })).body.error).toBe('invalid_client');
    await edit(user, { IsDisabled: true });
    expectTicketNotValid(await refresh(login.refresh_token));
  });

  it('stores refresh tokens only as hashes', async () => {
    const user = await makeUser(acme);
    const login = await loginAs(acme, user);
    const { createHash } = await import('node:crypto');
    const digest = createHash('sha256').update(login.refresh_token).digest('hex');
    const { getRefreshToken } = await import('#shared/db/auth-repo.ts');
    const stored = await getRefreshToken(t.db, digest);
    expect(stored).toMatchObject({ userKey: user.key, instanceKey: acme.key, clientId: 'consoleApp' });
    expect(JSON.stringify(stored)).not.toContain(login.refresh_token);
  });
});

describe('protected calls after a change of status', () => {
  it('refuses the token of a user disabled after it was issued, within a minute', async () => {
    const user = await makeUser(acme);
    const login = await loginAs(acme, user);
    expect(await unauthorizedReason(login.access_token)).toBeUndefined();
    await edit(user, { IsDisabled: true });
    clockOffsetMs = 60_000;
    try {
      expect(await unauthorizedReason(login.access_token)).toBe('unauthorized');
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('refuses the token of an instance disabled after it was issued, within a minute, over HTTP too', async () => {
    const key = newKey();
    const beta = await createInstance(t.db, { key, name: 'Beta', license: await localLicenseAuthority(t.config.dataDir).issue({ instanceKey: key }) });
    const user = await makeUser(beta);
    const login = await loginAs(beta, user);
    await edit(beta, { IsDisabled: true });
    clockOffsetMs = 60_000;
    try {
      expect(await unauthorizedReason(login.access_token)).toBe('unauthorized');
      const res = await api.get('/api', { token: login.access_token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
    } finally {
      clockOffsetMs = 0;
    }
  });
});

describe('JWKS', () => {
  it('publishes the public key that verifies access tokens, without its private part', async () => {
    const user = await makeUser(acme);
    const login = await loginAs(acme, user);
    const res = await api.get('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.body.keys).toHaveLength(1);
    expect(res.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(res.body.keys[0]).not.toHaveProperty('d');
    const { payload, protectedHeader } = await jwtVerify(login.access_token, createLocalJWKSet(res.body), {
      issuer: t.config.issuer,
      audience: t.config.audience,
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: res.body.keys[0].kid });
    expect(payload).toMatchObject({ sub: user.key, ins: acme.key });
  });
});

describe('first-start seeding', () => {
  it('creates a licensed root instance and its administrator once, with a generated password in a 0600 file', async () => {
    const opts = { instanceName: 'Seeded', adminUser: 'admin', clientSecret: 'consoleSecret', dataDir: t.config.dataDir };
    const first = await seedDeployment(deps, opts);
    expect(first).toMatchObject({ created: true, passwordWasGenerated: true });
    const file = join(t.config.dataDir, 'admin-password');
    expect((await readFile(file, 'utf8')).trim()).toBe(first.adminPassword);
    expect((await stat(file)).mode & 0o077).toBe(0);
    const second = await seedDeployment(deps, opts);
    expect(second).toEqual({ instanceKey: first.instanceKey, passwordWasGenerated: false, created: false });
    const res = await post({ username: 'Seeded\\admin', password: first.adminPassword! });
    expect(res.status).toBe(200);
    const principal = await deps.authenticator.authenticate(`Bearer ${res.body.access_token}`);
    expect(principal).toMatchObject({ role: 'Administrator', instanceKey: first.instanceKey });
  });
});
