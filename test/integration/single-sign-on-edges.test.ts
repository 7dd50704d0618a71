/**
 * Single sign-on's edges through the real handlers over DynamoDB Local: what a sign-in page may
 * learn of an instance's providers (`GET /oauth/providers`: enabled ones by name, the same empty
 * answer for an unknown instance), a provider that users sign in through is not deleted (409), and
 * the one-time code of a completed sign-in is refused at `POST /token` once its 60 s are over.
 */
import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { CODE_TTL_MS } from '#shared/auth/sso/flow.ts';
import { createInstance } from '#shared/auth/provisioning.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { putAuthorizationCode } from '#shared/db/sso-repo.ts';
import { newKey } from '#shared/model/placement.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { mintToken, seedInstance, seedUser, setupApi, testDeps, uniqueName } from '../support/tokens.ts';

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let root: string;
let admin: string;

const provider = (extra: Record<string, unknown> = {}) => ({
  CommonName: uniqueName('idp'),
  Issuer: 'https://login.example.com/tenant/v2.0',
  ClientId: 'gatehouse-client',
  ClientSecret: 'provider-secret-0123456789',
  ...extra,
});

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  root = env.root.instance.key;
  admin = env.root.tokens.Administrator;
});

describe('GET /oauth/providers', () => {
  it('answers the enabled providers of an instance by name and Key, to anyone, without anything secret', async () => {
    const on = (await env.api.post(`/api/f/${root}/identityproviders`, { token: admin, body: provider({ CommonName: 'Contoso Entra ID' }) })).body;
    const off = await env.api.post(`/api/f/${root}/identityproviders`, { token: admin, body: provider({ CommonName: 'Old Okta', Enabled: false }) });
    expect(off.status).toBe(201);
    const res = await env.api.get('/oauth/providers', { query: { instance: String(env.root.instance.doc.CommonName) } });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual([{ CommonName: 'Contoso Entra ID', Key: on.Key }]);
    expect(res.text).not.toContain('provider-secret');
    expect(res.text).not.toContain('login.example.com');
  });

  it('answers an unknown instance, a disabled one and one without providers alike: an empty list', async () => {
    const bare = await seedInstance(t);
    const disabled = await seedInstance(t, uniqueName('Off'), undefined, { IsDisabled: true });
    const local = createApi(testDeps(t));
    for (const instance of [`nobody-${randomBytes(4).toString('hex')}`, String(bare.doc.CommonName), String(disabled.doc.CommonName)]) {
      const res = await local.get('/oauth/providers', { query: { instance } });
      expect({ instance, status: res.status, text: res.text }).toEqual({ instance, status: 200, text: '[]' });
    }
    const missing = await local.get('/oauth/providers');
    expect(missing.status).toBe(400);
    expect(missing.body.Error).toBe('ValidationFailed');
  });
});

describe('deleting an identity provider', () => {
  it('is refused while users sign in through it, and done once they no longer do', async () => {
    const idp = (await env.api.post(`/api/f/${root}/identityproviders`, { token: admin, body: provider() })).body;
    const user = await env.api.post(`/api/f/${root}/users`, { token: admin, body: { CommonName: uniqueName('sso'), Email: 'ann@example.com', IdentityProviderKey: idp.Key } });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const refused = await env.api.del(idp.Href, { token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ Error: 'IdentityProviderInUse' });
    expect(refused.body.Message).toMatch(/IdentityProviderKey/);
    expect((await env.api.get(idp.Href, { token: admin })).status).toBe(200);

    // The administrator moves the user to passwords: the link cleared, a password given.
    const { IdentityProviderKey: _k, ...unlinked } = user.body;
    const moved = await env.api.put(user.body.Href, { token: admin, body: { ...unlinked, Password: `Pw-${randomBytes(6).toString('hex')}-Aa1!` } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await env.api.del(idp.Href, { token: admin })).status).toBe(204);
    expect((await env.api.get(idp.Href, { token: admin })).status).toBe(404);
  });

  it('finds a linked user beyond the first page of the instance\'s users', async () => {
    const instance = await seedInstance(t);
    const deps = testDeps(t);
    const local = createApi(deps);
    const tenantAdmin = await seedUser(t, instance, 'Administrator');
    const token = await mintToken(deps.config, deps.keys, tenantAdmin, instance);
    const idp = (await local.post(`/api/f/${instance.key}/identityproviders`, { token, body: provider() })).body;
    for (let i = 0; i < 205; i++) await seedUser(t, instance, 'ReadOnly', `plain-${String(i).padStart(3, '0')}`);
    // Keys grow with time and a counter (newKey): created last, the linked user is listed last, past the first page.
    await seedUser(t, instance, 'ReadOnly', 'zz-linked', { doc: { Email: 'zz@example.com', IdentityProviderKey: idp.Key } });
    const refused = await local.del(idp.Href, { token });
    expect(refused.status).toBe(409);
  });
});

describe('the one-time code of a completed sign-in at POST /token', () => {
  it('buys tokens within its 60 s, and nothing after them (used up by the try)', async () => {
    let offsetMs = 0;
    const deps = testDeps(t, { now: () => new Date(Date.now() + offsetMs) });
    const api = createApi(deps);
    const key = newKey();
    const instance = await createInstance(t.db, { key, name: uniqueName('SsoCode'), license: await localLicenseAuthority(t.config.dataDir).issue({ instanceKey: key }) });
    const user = await seedUser(t, instance, 'Operator');
    const redirectUri = 'https://gatehouse.example.com/console/callback';
    // The code as the callback stores it (flow.ts): its client, redirect URI and PKCE challenge, CODE_TTL_MS from now.
    const issue = async () => {
      const code = randomBytes(32).toString('base64url');
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      await putAuthorizationCode(t.db, code, { UserKey: user.key, InstanceKey: instance.key, ClientId: 'gatehouseConsole', RedirectUri: redirectUri, CodeChallenge: challenge }, deps.now().getTime() + CODE_TTL_MS);
      return { code, verifier };
    };
    const redeem = (c: { code: string; verifier: string }) =>
      api.post('/token', {
        headers: { 'x-gatehouse-csrf': '1' },
        contentType: 'application/x-www-form-urlencoded',
        body: new URLSearchParams({ grant_type: 'authorization_code', client_id: 'gatehouseConsole', redirect_uri: redirectUri, code: c.code, code_verifier: c.verifier }).toString(),
      });

    const fresh = await issue();
    offsetMs = CODE_TTL_MS - 2_000;
    const inTime = await redeem(fresh);
    expect(inTime.status, JSON.stringify(inTime.body)).toBe(200);
    expect(inTime.body.access_token).toBeTruthy();

    offsetMs = 0;
    const late = await issue();
    offsetMs = CODE_TTL_MS + 1_000;
    expect(await redeem(late)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The late try used it up: back in time it is still refused.
    offsetMs = 0;
    expect(await redeem(late)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});
