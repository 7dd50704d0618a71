/**
 * Identity providers (single sign-on) through the real handlers over DynamoDB Local: the
 * collection's rules (Administrators only, defaults, https issuers), the client secret sealed in
 * an item of its own and never answered, users linked to a provider, and the one-time items of
 * the flow (pending logins, authorization codes) taken once and never after they expire.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { providerSecret } from '#shared/auth/sso/provider-secret.ts';
import { IDP_SECRET_SK, getProviderSecret, putAuthorizationCode, putPendingLogin, takeAuthorizationCode, takePendingLogin } from '#shared/db/sso-repo.ts';
import { objectPk } from '#shared/db/item-keys.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi, uniqueName } from '../support/tokens.ts';

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let root: string;
let admin: string;

const SECRET = 'provider-secret-0123456789';
const body = (extra: Record<string, unknown> = {}) => ({
  CommonName: uniqueName('idp'),
  Issuer: 'https://login.example.com/tenant/v2.0',
  ClientId: 'gatehouse-client',
  ClientSecret: SECRET,
  ...extra,
});

async function rawItem(pk: string, sk: string): Promise<Record<string, unknown> | undefined> {
  const out = await t.db.doc.send(new GetCommand({ TableName: t.db.tableName, Key: { PK: pk, SK: sk }, ConsistentRead: true }));
  return out.Item;
}

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  root = env.root.instance.key;
  admin = env.root.tokens.Administrator;
});

describe('identity providers', () => {
  it('are created by an Administrator with defaults, the secret sealed in an item of its own and never answered', async () => {
    const res = await env.api.post(`/api/f/${root}/identityproviders`, { token: admin, body: body({ EmailDomains: ['Example.COM'] }) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      Scopes: 'openid email profile',
      EmailDomains: ['example.com'],
      JitProvisioning: false,
      DefaultRole: 'ReadOnly',
      TokenEndpointAuthMethod: 'client_secret_basic',
      Enabled: true,
      RequireEmailVerified: true,
    });
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    expect(res.body.ClientSecret).toBeUndefined();
    const object = await rawItem(objectPk(res.body.Key), 'A');
    expect(JSON.stringify(object)).not.toContain(SECRET);
    const sealed = await getProviderSecret(t.db, res.body.Key);
    expect(sealed).toMatch(/^enc1:/);
    expect(sealed).not.toContain(SECRET);
    expect(await providerSecret(t.config, t.db, res.body.Key)).toBe(SECRET);
    const listed = await env.api.get(`/api/f/${root}/identityproviders`, { token: env.root.tokens.ReadOnly });
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);
  });

  it('keeps the secret on a replace that leaves it out, replaces it when sent, and deletes it with the provider', async () => {
    const created = (await env.api.post(`/api/f/${root}/identityproviders`, { token: admin, body: body() })).body;
    const kept = await env.api.put(created.Href, { token: admin, body: { ...created, Enabled: false } });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(await providerSecret(t.config, t.db, created.Key)).toBe(SECRET);
    const changed = await env.api.put(created.Href, { token: admin, body: { ...kept.body, ClientSecret: 'another-secret' } });
    expect(changed.status).toBe(200);
    expect(await providerSecret(t.config, t.db, created.Key)).toBe('another-secret');
    expect((await env.api.del(created.Href, { token: admin })).status).toBe(204);
    expect(await rawItem(objectPk(created.Key), IDP_SECRET_SK)).toBeUndefined();
  });

  it('refuses a provider without a secret, with an http issuer, and from an Operator', async () => {
    const { ClientSecret: _s, ...noSecret } = body();
    const missing = await env.api.post(`/api/f/${root}/identityproviders`, { token: admin, body: noSecret });
    expect(missing.status).toBe(400);
    expect(missing.body.Message).toContain('ClientSecret');
    for (const Issuer of ['http://idp.example.com', 'http://127.0.0.1:8080', 'ftp://idp.example.com']) {
      const http = await env.api.post(`/api/f/${root}/identityproviders`, { token: admin, body: body({ Issuer }) });
      expect(http.status, Issuer).toBe(400);
      expect(http.body.Message, Issuer).toContain('Issuer');
    }
    const operator = await env.api.post(`/api/f/${root}/identityproviders`, { token: env.root.tokens.Operator, body: body() });
    expect(operator.status).toBe(403);
  });

  it('accepts an http issuer on loopback where the deployment allows it', async () => {
    const local = await setupApi(t, { config: { ...t.config, idpAllowLoopback: true } });
    const res = await local.api.post(`/api/f/${local.root.instance.key}/identityproviders`, {
      token: local.root.tokens.Administrator,
      body: body({ Issuer: 'http://127.0.0.1:8080' }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});

describe('users linked to a provider', () => {
  it('name a provider of their own instance, and an email is unique among a provider\'s users', async () => {
    const provider = (await env.api.post(`/api/f/${root}/identityproviders`, { token: admin, body: body() })).body;
    const user = (extra: Record<string, unknown>) => env.api.post(`/api/f/${root}/users`, { token: admin, body: { CommonName: uniqueName('u'), ...extra } });
    const wrong = await user({ IdentityProviderKey: env.root.users.Operator.key, Email: 'x@example.com' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.Message).toContain('IdentityProviderKey');
    const first = await user({ IdentityProviderKey: provider.Key, Email: 'Ann@Example.com' });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const twin = await user({ IdentityProviderKey: provider.Key, Email: 'ann@example.com' });
    expect(twin.status).toBe(409);
    expect(twin.body.Error).toBe('DuplicateEmail');
    // The same email at no provider is another matter.
    expect((await user({ Email: 'ann@example.com' })).status).toBe(201);
  });
});

describe('the one-time items of a sign-in', () => {
  it('gives a code to one redemption only, and none once expired', async () => {
    const now = Date.now();
    await putAuthorizationCode(t.db, 'code-1', { UserKey: 'u' }, now + 60_000);
    const takes = await Promise.all([1, 2, 3, 4].map(() => takeAuthorizationCode(t.db, 'code-1', now)));
    expect(takes.filter((x) => x !== undefined)).toEqual([{ UserKey: 'u' }]);

    await putAuthorizationCode(t.db, 'code-2', { UserKey: 'u' }, now + 60_000);
    expect(await takeAuthorizationCode(t.db, 'code-2', now + 61_000)).toBeUndefined();
    // Taken (deleted) by that try all the same.
    expect(await takeAuthorizationCode(t.db, 'code-2', now)).toBeUndefined();
  });

  it('keeps a pending login for one callback only', async () => {
    const now = Date.now();
    await putPendingLogin(t.db, 'state-1', { ClientId: 'c' }, now + 600_000);
    expect(await takePendingLogin(t.db, 'state-1', now)).toEqual({ ClientId: 'c' });
    expect(await takePendingLogin(t.db, 'state-1', now)).toBeUndefined();
    expect(await takePendingLogin(t.db, 'never-stored', now)).toBeUndefined();
  });
});
