/**
 * Revoking a user's sessions, through the real token and folders handlers on DynamoDB Local: a
 * new password, disabling the user, and an administrator's `POST <user Href>/revokesessions`
 * each refuse the user's refresh tokens at once and its access tokens once the status check's
 * cache time (30 s, moved past with the server clock) has gone by; and who may sign a user out.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createInstance } from '#shared/auth/provisioning.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { hashPassword } from '#shared/auth/passwords.ts';
import { STATUS_CACHE_MS } from '#shared/auth/status-check.ts';
import { getObject } from '#shared/db/objects-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { newKey } from '#shared/model/placement.ts';
import { createApi } from '../support/api.ts';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { mintToken, seedUser, uniqueName } from '../support/tokens.ts';

const PASSWORD = 'Corr3ct-Horse!';
const FORM = 'application/x-www-form-urlencoded';

let t: TestDb;
let hash: string;
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);
let deps: CoreDeps;
let api: ReturnType<typeof createApi>;
let acme: StoredObject;
let child: StoredObject;
let adminToken: string;

const post = (fields: Record<string, string>) => api.post('/token', { body: new URLSearchParams(fields).toString(), contentType: FORM });

async function login(user: StoredObject, password = PASSWORD) {
  const res = await post({ grant_type: 'password', username: `${acme.doc.CommonName}\\${user.doc.CommonName}`, password });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { access_token: string; refresh_token: string };
}

const refresh = (token: string) => post({ grant_type: 'refresh_token', refresh_token: token });
const userHref = (u: StoredObject) => `/api/f/${u.folder}/users/${u.key}`;
const me = (token: string) => api.get('/api', { token });

/** Moves the server clock past the status check's cache time, then calls with `token`. */
async function afterStatusWindow(token: string) {
  clockOffsetMs += STATUS_CACHE_MS + 1_000;
  return me(token);
}

function expectRefreshRefused(res: { status: number; body: any }) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: 'RefreshTokenTicketNotValid', error_description: expect.any(String) });
}

async function replaceUser(user: StoredObject, changes: Record<string, unknown>) {
  const current = await api.get(userHref(user), { token: adminToken });
  expect(current.status).toBe(200);
  const { Links: _links, ...doc } = current.body as Record<string, unknown>;
  void _links;
  return api.put(userHref(user), { token: adminToken, body: { ...doc, ...changes } });
}

beforeAll(async () => {
  t = await createTestDb();
  deps = createCoreDeps({ config: t.config, db: t.db, now });
  api = createApi(deps);
  hash = await hashPassword(PASSWORD);
  const key = newKey();
  const authority = localLicenseAuthority(t.config.dataDir);
  acme = await createInstance(t.db, { key, name: uniqueName('Acme'), license: await authority.issue({ instanceKey: key }) });
  child = await createInstance(t.db, { name: uniqueName('Child'), parent: acme });
  const admin = await seedUser(t, acme, 'Administrator');
  adminToken = await mintToken(deps.config, deps.keys, admin, acme, { ttlSeconds: 86_400 });
});

describe('sign out everywhere (POST <user Href>/revokesessions)', () => {
  it('refuses the refresh token at once and the access token after the status window; a new login works', async () => {
    const bob = await seedUser(t, acme, 'Operator', uniqueName('bob'), { passwordHash: hash });
    const first = await login(bob);
    const second = await login(bob);
    expect((await me(first.access_token)).status).toBe(200);

    const res = await api.post(`${userHref(bob)}/revokesessions`, { token: adminToken });
    expect(res.status).toBe(204);

    expectRefreshRefused(await refresh(first.refresh_token));
    expectRefreshRefused(await refresh(second.refresh_token));
    expect((await afterStatusWindow(first.access_token)).status).toBe(401);
    expect((await me(second.access_token)).body).toEqual({ error: 'unauthorized', error_description: expect.stringMatching(/sessions of this user were revoked/) });

    const fresh = await login(bob);
    expect((await me(fresh.access_token)).status).toBe(200);
    expect((await refresh(fresh.refresh_token)).status).toBe(200);
    // The generation is internal: the user's document does not show it.
    const shown = await api.get(userHref(bob), { token: adminToken });
    expect(JSON.stringify(shown.body)).not.toMatch(/SessionGeneration/);
    expect((await getObject(t.db, bob.key, true))?.sessionGeneration).toBe(1);
  });

  it('is for Administrators of the user instance or an ancestor: 403 for others, 404 for an unknown user', async () => {
    const carol = await seedUser(t, child, 'Operator', uniqueName('carol'));
    const childAdmin = await seedUser(t, child, 'Administrator');
    const childAdminToken = await mintToken(deps.config, deps.keys, childAdmin, child);
    const operator = await seedUser(t, acme, 'Operator');
    const operatorToken = await mintToken(deps.config, deps.keys, operator, acme);
    const acmeUser = await seedUser(t, acme, 'ReadOnly');

    // An ancestor's administrator, and the user's own instance's.
    expect((await api.post(`${userHref(carol)}/revokesessions`, { token: adminToken })).status).toBe(204);
    expect((await api.post(`${userHref(carol)}/revokesessions`, { token: childAdminToken })).status).toBe(204);
    // A child instance's administrator may not sign out a user of the parent; nor may an Operator.
    expect((await api.post(`${userHref(acmeUser)}/revokesessions`, { token: childAdminToken })).status).toBe(403);
    expect((await api.post(`${userHref(acmeUser)}/revokesessions`, { token: operatorToken })).status).toBe(403);
    expect((await api.post(`/api/f/${acme.key}/users/${newKey()}/revokesessions`, { token: adminToken })).body).toMatchObject({
      Error: 'NotFound',
    });
    // Not a user: a person's key under users answers 404 like any object of another collection.
    expect((await api.post(`/api/f/${acme.key}/users/${child.key}/revokesessions`, { token: adminToken })).status).toBe(404);
    expect((await getObject(t.db, acmeUser.key, true))?.sessionGeneration).toBeUndefined();
    expect((await getObject(t.db, carol.key, true))?.sessionGeneration).toBe(2);
  });
});

describe('cost', () => {
  it('revokes with one read and one write; the status check reads no more than before', async () => {
    const hank = await seedUser(t, acme, 'Operator', uniqueName('hank'));
    const hankToken = await mintToken(deps.config, deps.keys, hank, acme);
    await me(adminToken); // the caller's own status is cached: only the call's requests are counted
    const revoke = await commandsOf(t, () => api.post(`${userHref(hank)}/revokesessions`, { token: adminToken }));
    expect(revoke.result.status).toBe(204);
    expect(revoke.commands).toEqual(['GetItem', 'TransactWriteItems']);
    // A status miss (the user and its root instance): one BatchGetItem, as without sessions.
    clockOffsetMs += STATUS_CACHE_MS + 1_000;
    const call = await commandsOf(t, () => me(hankToken));
    expect(call.result.status).toBe(401);
    expect(call.commands.filter((c) => c === 'BatchGetItem')).toHaveLength(1);
  });
});

describe('a new password', () => {
  it('set by an administrator revokes the refresh token at once and the access token after the window', async () => {
    const dave = await seedUser(t, acme, 'Operator', uniqueName('dave'), { passwordHash: hash });
    const tokens = await login(dave);
    expect((await me(tokens.access_token)).status).toBe(200);

    const res = await replaceUser(dave, { Password: 'N3w-Passw0rd!x' });
    expect(res.status).toBe(200);

    expectRefreshRefused(await refresh(tokens.refresh_token));
    expect((await afterStatusWindow(tokens.access_token)).status).toBe(401);
    const again = await login(dave, 'N3w-Passw0rd!x');
    expect((await me(again.access_token)).status).toBe(200);
  });

  it('chosen at login (expired password) ends the other sessions; the new login keeps working', async () => {
    const gina = await seedUser(t, acme, 'Operator', uniqueName('gina'), { passwordHash: hash });
    const before = await login(gina);
    expect((await replaceUser(gina, { PasswordExpiresOn: new Date(now().getTime() - 60_000).toISOString() })).status).toBe(200);

    const res = await post({
      grant_type: 'password',
      username: `${acme.doc.CommonName}\\${gina.doc.CommonName}`,
      password: PASSWORD,
      newpassword: 'Fr3sh-Passw0rd!',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);

    expectRefreshRefused(await refresh(before.refresh_token));
    expect((await afterStatusWindow(before.access_token)).status).toBe(401);
    expect((await me(res.body.access_token)).status).toBe(200);
    expect((await refresh(res.body.refresh_token)).status).toBe(200);
  });

  it('leaves sessions alone when the same user is saved without a password', async () => {
    const erin = await seedUser(t, acme, 'Operator', uniqueName('erin'), { passwordHash: hash });
    const tokens = await login(erin);
    expect((await replaceUser(erin, { Email: 'erin@example.com' })).status).toBe(200);
    expect((await afterStatusWindow(tokens.access_token)).status).toBe(200);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });
});

describe('disabling a user', () => {
  it('revokes its sessions for good: enabling it again does not bring them back', async () => {
    const frank = await seedUser(t, acme, 'Operator', uniqueName('frank'), { passwordHash: hash });
    const tokens = await login(frank);
    expect((await me(tokens.access_token)).status).toBe(200);

    expect((await replaceUser(frank, { IsDisabled: true })).status).toBe(200);
    expectRefreshRefused(await refresh(tokens.refresh_token));
    expect((await afterStatusWindow(tokens.access_token)).status).toBe(401);

    expect((await replaceUser(frank, { IsDisabled: false })).status).toBe(200);
    expectRefreshRefused(await refresh(tokens.refresh_token));
    expect((await afterStatusWindow(tokens.access_token)).status).toBe(401);
    const again = await login(frank);
    expect((await me(again.access_token)).status).toBe(200);
  });
});
