/**
 * Single sign-on end to end: a local runtime of its own, a real OpenID provider (oidc-provider on
 * a loopback port, test/support/oidc-provider.ts) and a provider that misbehaves on purpose for
 * the refusals a certified one will not produce (test/support/rogue-idp.ts, on jose). A browser
 * with a cookie jar walks the whole flow over HTTP (test/support/sso-browser.ts); the client then
 * redeems its code at POST /token with its PKCE verifier.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminToken, newRuntimeAdmin, spawnSeededRuntime, type RuntimeAdmin, type SpawnedRuntime } from '../support/runtime.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { startOidcProvider, type RunningProvider, type TestAccount } from '../support/oidc-provider.ts';
import { startRogueIdp, type RogueIdp } from '../support/rogue-idp.ts';
import { signInThroughBrowser, type SsoOutcome } from '../support/sso-browser.ts';

const CLIENT_ID = 'e2e-app';
const CLIENT_REDIRECT = 'http://127.0.0.1:9/app/callback';
const IDP_CLIENT_ID = 'gatehouse-e2e';
const IDP_CLIENT_SECRET = `idp-secret-${randomBytes(8).toString('hex')}`;

let runtime: SpawnedRuntime;
let admin: RuntimeAdmin;
let token: string;
let root: string;
let op: RunningProvider;
let rogue: RogueIdp;
let realProvider: any;
const accounts = new Map<string, TestAccount>([
  ['alice', { email: 'alice@example.com', email_verified: true, name: 'Alice', groups: ['gh-admins'] }],
  ['bob', { email: 'bob@example.com', email_verified: false, name: 'Bob' }],
  ['carol', { email: 'carol@elsewhere.org', email_verified: true, name: 'Carol' }],
  ['dave', { email: 'dave@example.com', email_verified: true, name: 'Dave' }],
  ['erin', { email: 'erin@example.com', email_verified: true, name: 'Erin', groups: ['staff'] }],
]);

async function call(method: string, path: string, body?: unknown, bearer = token): Promise<{ status: number; body: any }> {
  const res = await documentedFetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function postToken(fields: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await documentedFetch(`${runtime.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  return { status: res.status, body: await res.json() };
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

function authorizeUrl(challenge: string, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: CLIENT_REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: `client-${randomBytes(6).toString('hex')}`,
    instance: admin.instanceName,
    login_hint: 'someone@example.com',
    ...extra,
  });
  return `${runtime.url}/oauth/authorize?${q}`;
}

/** A whole sign-in as `login`; the client's redirect with its query. */
async function signIn(login: string, extra: Record<string, string> = {}): Promise<{ outcome: SsoOutcome; verifier: string; state: string }> {
  const { verifier, challenge } = pkce();
  const url = authorizeUrl(challenge, extra);
  const outcome = await signInThroughBrowser(url, { gatehouse: runtime.url, clientRedirect: CLIENT_REDIRECT, login });
  return { outcome, verifier, state: new URL(url).searchParams.get('state')! };
}

const redeem = (code: string, verifier: string) =>
  postToken({ grant_type: 'authorization_code', client_id: CLIENT_ID, redirect_uri: CLIENT_REDIRECT, code, code_verifier: verifier });

/** A sign-in that must succeed: the tokens its code buys. */
async function tokensOf(login: string): Promise<any> {
  const { outcome, verifier, state } = await signIn(login);
  expect(outcome.redirect, outcome.visited.join('\n')).toBeDefined();
  expect(outcome.redirect!.searchParams.get('state')).toBe(state);
  const code = outcome.redirect!.searchParams.get('code');
  expect(code, outcome.redirect!.toString()).toBeTruthy();
  const res = await redeem(code!, verifier);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** A sign-in that must come back to the client as access_denied. */
async function expectDenied(login: string, extra: Record<string, string> = {}): Promise<void> {
  const { outcome, state } = await signIn(login, extra);
  expect(outcome.redirect, outcome.visited.join('\n')).toBeDefined();
  expect(outcome.redirect!.searchParams.get('error')).toBe('access_denied');
  expect(outcome.redirect!.searchParams.get('code')).toBeNull();
  expect(outcome.redirect!.searchParams.get('state')).toBe(state);
  // Nothing that helps an attacker: no reason, no stack.
  expect(outcome.redirect!.searchParams.get('error_description')).toBe('The sign-in was refused.');
}

beforeAll(async () => {
  admin = newRuntimeAdmin('Sso');
  ({ runtime } = await spawnSeededRuntime(inject('runtimeDynamoEndpoint'), admin, {
    GATEHOUSE_OAUTH_CLIENTS: JSON.stringify([{ clientId: CLIENT_ID, redirectUris: [CLIENT_REDIRECT] }]),
    // Logs on: the runtime's output is checked for the client secrets below.
    GATEHOUSE_LOG_LEVEL: 'INFO',
  }));
  token = await adminToken(runtime.url, admin);
  root = runtime.instanceKey;
  op = await startOidcProvider({
    clients: [{ client_id: IDP_CLIENT_ID, client_secret: IDP_CLIENT_SECRET, redirect_uris: [`${runtime.url}/oauth/callback`] }],
    accounts,
  });
  rogue = await startRogueIdp();
  const created = await call('POST', `/api/f/${root}/identityproviders`, {
    CommonName: 'Example IdP',
    Issuer: op.issuer,
    ClientId: IDP_CLIENT_ID,
    ClientSecret: IDP_CLIENT_SECRET,
    EmailDomains: ['Example.com'],
    JitProvisioning: true,
    RoleClaim: 'groups',
    RoleMapping: { 'gh-admins': 'Administrator' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  realProvider = created.body;
  const r = await call('POST', `/api/f/${root}/identityproviders`, {
    CommonName: 'Rogue IdP',
    Issuer: rogue.issuer,
    ClientId: rogue.clientId,
    ClientSecret: rogue.clientSecret,
    EmailDomains: ['rogue.test'],
    JitProvisioning: true,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
  await op?.stop();
  await rogue?.stop();
});

describe('single sign-on through a real OpenID provider', () => {
  it('describes itself (RFC 8414) and keeps the client secret out of every answer', async () => {
    const meta = await documentedFetch(`${runtime.url}/.well-known/oauth-authorization-server`);
    expect(meta.status).toBe(200);
    expect(await meta.json()).toMatchObject({
      issuer: runtime.url,
      authorization_endpoint: `${runtime.url}/oauth/authorize`,
      token_endpoint: `${runtime.url}/token`,
      code_challenge_methods_supported: ['S256'],
    });
    expect(realProvider).toMatchObject({ Scopes: 'openid email profile', EmailDomains: ['example.com'], DefaultRole: 'ReadOnly', Enabled: true, RequireEmailVerified: true });
    expect(realProvider.ClientSecret).toBeUndefined();
    const list = await call('GET', `/api/f/${root}/identityproviders`);
    expect(JSON.stringify(list.body)).not.toContain(IDP_CLIENT_SECRET);
    expect(runtime.output()).not.toContain(IDP_CLIENT_SECRET);
  });

  it('signs a new user in (provisioned just in time, role mapped), whose token works and refreshes', async () => {
    const tokens = await tokensOf('alice');
    expect(tokens).toMatchObject({ userName: `${admin.instanceName}\\alice@example.com`, token_type: 'bearer', 'as:client_id': CLIENT_ID, instance: root });
    const api = await call('GET', '/api', undefined, tokens.access_token);
    expect(api.status).toBe(200);
    expect(api.body.Key).toBe(root);
    const users = await call('GET', `/api/f/${root}/users`);
    const alice = users.body.find((u: any) => u.CommonName === 'alice@example.com');
    expect(alice).toMatchObject({ Email: 'alice@example.com', IdentityProviderKey: realProvider.Key, IdentityProviderSubject: 'alice', Role: 'Administrator' });
    // The refresh token of a public client is refreshed without a secret.
    const refreshed = await postToken({ grant_type: 'refresh_token', client_id: CLIENT_ID, refresh_token: tokens.refresh_token });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.access_token).toBeTruthy();
  });

  it('refuses a code used twice, a wrong code_verifier and another redirect_uri', async () => {
    const first = await signIn('alice');
    const code = first.outcome.redirect!.searchParams.get('code')!;
    expect((await redeem(code, first.verifier)).status).toBe(200);
    const again = await redeem(code, first.verifier);
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const second = await signIn('alice');
    const wrong = await redeem(second.outcome.redirect!.searchParams.get('code')!, pkce().verifier);
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The failed try used the code up.
    expect((await redeem(second.outcome.redirect!.searchParams.get('code')!, second.verifier)).status).toBe(400);

    const third = await signIn('alice');
    const other = await postToken({
      grant_type: 'authorization_code',
      client_id: CLIENT_ID,
      redirect_uri: 'http://127.0.0.1:9/elsewhere',
      code: third.outcome.redirect!.searchParams.get('code')!,
      code_verifier: third.verifier,
    });
    expect(other).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('answers an unregistered redirect_uri or an unknown client with a 400 page, never a redirect', async () => {
    const { challenge } = pkce();
    for (const url of [
      authorizeUrl(challenge, { redirect_uri: 'https://attacker.example/steal' }),
      authorizeUrl(challenge, { client_id: 'nobody' }),
    ]) {
      const res = await documentedFetch(url, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('text/html');
    }
  });

  it('refuses an unverified email, a domain not allowed, and an unknown email when provisioning is off', async () => {
    await expectDenied('bob');
    // The hint routes to the provider; the account's domain is not one of its EmailDomains.
    await expectDenied('carol');
    const current = (await call('GET', `/api/f/${root}/identityproviders/${realProvider.Key}`)).body;
    // A replace without ClientSecret keeps the sealed secret (the next sign-ins still redeem codes).
    const off = await call('PUT', `/api/f/${root}/identityproviders/${realProvider.Key}`, { ...current, JitProvisioning: false });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    await expectDenied('dave');
    expect((await call('GET', `/api/f/${root}/users`)).body.some((u: any) => u.Email === 'dave@example.com')).toBe(false);
    // A known user still signs in.
    expect((await tokensOf('alice')).access_token).toBeTruthy();
    const on = await call('PUT', `/api/f/${root}/identityproviders/${realProvider.Key}`, { ...off.body, JitProvisioning: true });
    expect(on.status).toBe(200);
  });

  it('refuses a disabled user, and lets it in again once enabled', async () => {
    await tokensOf('erin');
    const users = (await call('GET', `/api/f/${root}/users`)).body;
    const erin = users.find((u: any) => u.Email === 'erin@example.com');
    expect(erin.Role).toBe('ReadOnly');
    const disabled = await call('PUT', erin.Href, { ...erin, IsDisabled: true });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    await expectDenied('erin');
    const enabled = await call('PUT', erin.Href, { ...disabled.body, IsDisabled: false });
    expect(enabled.status).toBe(200);
    expect((await tokensOf('erin')).access_token).toBeTruthy();
  });

  it('keeps signing users in when the provider rotates its signing key', async () => {
    const before = op.kid();
    await tokensOf('alice');
    await op.rotateKey();
    expect(op.kid()).not.toBe(before);
    expect((await tokensOf('alice')).access_token).toBeTruthy();
  });

  it('answers invalid_grant to an SSO user\'s password login, and the break-glass administrator\'s password still works', async () => {
    const users = (await call('GET', `/api/f/${root}/users`)).body;
    const alice = users.find((u: any) => u.Email === 'alice@example.com');
    const password = `Pw-${randomBytes(9).toString('base64url')}1a`;
    const set = await call('PUT', alice.Href, { ...alice, Password: password });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const login = await postToken({ grant_type: 'password', client_id: 'consoleApp', instance: admin.instanceName, username: 'alice@example.com', password });
    expect(login).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await adminToken(runtime.url, admin)).toBeTruthy();
  });
});

describe('single sign-on refuses a provider that misbehaves', () => {
  const rogueSignIn = () => expectDenied('', { login_hint: 'mallory@rogue.test' });

  it('signs in when it behaves', async () => {
    rogue.defect = 'none';
    rogue.claims = { sub: 'mallory', email: 'mallory@rogue.test', email_verified: true };
    const { outcome, verifier } = await signIn('', { login_hint: 'mallory@rogue.test' });
    expect(outcome.redirect?.searchParams.get('code'), outcome.visited.join('\n')).toBeTruthy();
    expect((await redeem(outcome.redirect!.searchParams.get('code')!, verifier)).status).toBe(200);
  });

  for (const defect of ['wrong-issuer', 'wrong-audience', 'expired', 'wrong-nonce', 'unknown-key'] as const) {
    it(`refuses an ID token: ${defect}`, async () => {
      rogue.defect = defect;
      rogue.claims = { sub: 'mallory', email: 'mallory@rogue.test', email_verified: true };
      await rogueSignIn();
      expect(runtime.output()).not.toContain(rogue.clientSecret);
    });
  }
});
