/**
 * The typed client's token renewal, paging and errors against a fake Gatehouse behind its `fetch`
 * option (the network is not ours to mock, our modules are real): the fake rotates refresh tokens
 * and revokes a login whose refresh token comes back, as the token service does, so any second
 * renewal from the same token shows up as a revoked login. test/e2e/typed-client.test.ts proves
 * the same against the local runtime.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { GatehouseClient, GatehouseError, type FetchLike } from '../../clients/typescript/src/index.ts';

const BASE = 'http://gatehouse.test';
const TTL = 3600;

interface FakeOptions {
  /** People the list answers. @default 0 */
  readonly people?: number;
}

/** A fake Gatehouse: the token endpoint (password and refresh grants, rotation, reuse detection), `GET /api` and the people list. */
function fakeGatehouse(opts: FakeOptions = {}) {
  let serial = 0;
  const refreshTokens = new Map<string, { family: number; used: boolean }>();
  const revokedFamilies = new Set<number>();
  const accessTokens = new Set<string>();
  const forms: URLSearchParams[] = [];
  const state = { refreshGrants: 0, passwordGrants: 0, reuse: 0, failRefreshes: 0, refuseAll: false, apiCalls: 0, listCalls: [] as string[] };

  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

  const issue = (family: number) => {
    serial += 1;
    const access = `access-${serial}`;
    const refresh = `refresh-${serial}`;
    accessTokens.add(access);
    refreshTokens.set(refresh, { family, used: false });
    return json(200, { userName: 'Acme\\admin', access_token: access, token_type: 'bearer', refresh_token: refresh, expires_in: TTL, '.issued': '', '.expires': '', instance: 'inst-key' });
  };

  const fetch: FetchLike = async (request) => {
    const url = new URL(request.url);
    if (url.pathname === '/token') {
      expect(request.method).toBe('POST');
      expect(request.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
      const form = new URLSearchParams(await request.text());
      forms.push(form);
      await sleep(5); // a renewal takes a while: callers arrive while it is in flight
      if (form.get('grant_type') === 'password') {
        state.passwordGrants += 1;
        if (form.get('password') !== 'secret') return json(400, { error: 'invalid_grant', error_description: 'The user name or password is incorrect.' });
        return issue(serial + 1000);
      }
      state.refreshGrants += 1;
      if (state.failRefreshes > 0) {
        state.failRefreshes -= 1;
        return json(503, { Error: 'ServiceUnavailable', Message: 'Busy.' }, { 'retry-after': '1' });
      }
      const old = refreshTokens.get(form.get('refresh_token') ?? '');
      if (!old || revokedFamilies.has(old.family)) return json(400, { error: 'RefreshTokenTicketNotValid', error_description: 'Log in again.' });
      if (old.used) {
        state.reuse += 1;
        revokedFamilies.add(old.family);
        return json(400, { error: 'RefreshTokenTicketNotValid', error_description: 'Log in again.' });
      }
      old.used = true;
      return issue(old.family);
    }
    const bearer = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
    if (state.refuseAll || !accessTokens.has(bearer)) return json(401, { error: 'unauthorized', error_description: 'A valid bearer token is required.' });
    if (url.pathname === '/api') {
      state.apiCalls += 1;
      return json(200, { Key: 'inst-key', Href: '/api/f/inst-key', CommonName: 'Acme' });
    }
    if (url.pathname === '/api/f/inst-key/people') {
      state.listCalls.push(url.search);
      const page = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('pageSize'));
      const all = Array.from({ length: opts.people ?? 0 }, (_, i) => ({ Key: `p${i}`, CommonName: `Person ${i}` }));
      return json(200, all.slice(page * size, (page + 1) * size));
    }
    return json(404, { Error: 'NotFound', Message: 'The resource does not exist.' });
  };

  return {
    fetch,
    state,
    forms,
    /** The server stops accepting every access token issued so far (e.g. a signing key rotation). */
    forgetAccessTokens: () => accessTokens.clear(),
  };
}

const login = (fake: ReturnType<typeof fakeGatehouse>, extra: { now?: () => number; password?: string } = {}) =>
  GatehouseClient.login({ baseUrl: BASE, instance: 'Acme', username: 'admin', password: extra.password ?? 'secret', clientSecret: 'shh', fetch: fake.fetch, ...(extra.now ? { now: extra.now } : {}) });

describe('typed client: login and renewal', () => {
  it('logs in with the token form the document describes', async () => {
    const fake = fakeGatehouse();
    const gh = await login(fake);
    expect(Object.fromEntries(fake.forms[0]!)).toEqual({ grant_type: 'password', client_id: 'consoleApp', client_secret: 'shh', username: 'admin', password: 'secret', instance: 'Acme' });
    expect(gh.instanceKey).toBe('inst-key');
    expect(gh.tokens).toMatchObject({ accessToken: 'access-1', refreshToken: 'refresh-1', userName: 'Acme\\admin' });
  });

  it('renews once, before the calls, when many parallel calls find the token about to expire', async () => {
    const fake = fakeGatehouse();
    let clock = Date.now();
    const gh = await login(fake, { now: () => clock });
    await gh.GET('/api');
    expect(fake.state.refreshGrants).toBe(0);

    clock += (TTL - 30) * 1000; // inside the default 60-second margin
    await Promise.all(Array.from({ length: 25 }, () => gh.GET('/api')));
    expect(fake.state).toMatchObject({ refreshGrants: 1, reuse: 0, apiCalls: 26 });
    expect(Object.fromEntries(fake.forms[1]!)).toEqual({ grant_type: 'refresh_token', client_id: 'consoleApp', client_secret: 'shh', refresh_token: 'refresh-1' });

    clock += TTL * 1000;
    await Promise.all(Array.from({ length: 25 }, () => gh.GET('/api')));
    expect(fake.state).toMatchObject({ refreshGrants: 2, reuse: 0 });
    expect(gh.renewals).toBe(2);
  });

  it('retries a refused call (401) once after one renewal that every refused caller shares', async () => {
    const fake = fakeGatehouse();
    const gh = await login(fake);
    fake.forgetAccessTokens();
    await Promise.all(Array.from({ length: 20 }, () => gh.GET('/api')));
    expect(fake.state).toMatchObject({ refreshGrants: 1, reuse: 0, apiCalls: 20 });
  });

  it('rejects with a GatehouseError 401 when the retry is refused too, without retrying again', async () => {
    const fake = fakeGatehouse();
    const gh = await login(fake);
    fake.state.refuseAll = true;
    const err = await gh.GET('/api').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatehouseError);
    expect(err).toMatchObject({ status: 401, code: 'unauthorized', message: 'A valid bearer token is required.' });
    expect(fake.state.refreshGrants).toBe(1);
  });

  it('rejects every waiting caller when the renewal fails, and renews again on the next call', async () => {
    const fake = fakeGatehouse();
    const gh = await login(fake);
    fake.forgetAccessTokens();
    fake.state.failRefreshes = 1;
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => gh.GET('/api')));
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toMatchObject({ name: 'GatehouseError', status: 503, code: 'ServiceUnavailable', retryAfterSeconds: 1 });
    }
    expect(fake.state.refreshGrants).toBe(1);
    await gh.GET('/api');
    expect(fake.state).toMatchObject({ refreshGrants: 2, reuse: 0, apiCalls: 1 });
  });

  it('logs in again when its refresh token is refused, which a resumed session cannot', async () => {
    const fake = fakeGatehouse();
    const gh = await login(fake);
    const saved = gh.tokens;
    const resumed = GatehouseClient.resume({ baseUrl: BASE, clientSecret: 'shh', fetch: fake.fetch, tokens: saved });
    await resumed.refresh(); // uses the refresh token gh holds
    await gh.refresh(); // reuse: the login is revoked, gh logs in again
    expect(fake.state).toMatchObject({ reuse: 1, passwordGrants: 2 });
    expect(gh.tokens.refreshToken).not.toBe(saved.refreshToken);
    await gh.GET('/api');
    // The resumed session was in the revoked login and has no password.
    expect(await resumed.refresh().catch((e: unknown) => e)).toMatchObject({ status: 400, code: 'RefreshTokenTicketNotValid' });
  });

  it('rejects a login with a wrong password with the token error\'s code', async () => {
    const err = await login(fakeGatehouse(), { password: 'wrong' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatehouseError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_grant', message: 'The user name or password is incorrect.' });
  });
});

describe('typed client: paging and errors', () => {
  it.each([
    { people: 7, pages: ['?page=0&pageSize=3', '?page=1&pageSize=3', '?page=2&pageSize=3'] },
    { people: 6, pages: ['?page=0&pageSize=3', '?page=1&pageSize=3', '?page=2&pageSize=3'] },
    { people: 0, pages: ['?page=0&pageSize=3'] },
  ])('lists $people people a page at a time until a short or empty page', async ({ people, pages }) => {
    const fake = fakeGatehouse({ people });
    const gh = await login(fake);
    const keys: string[] = [];
    for await (const p of gh.list('people', 'inst-key', { pageSize: 3 })) keys.push(p.Key);
    expect(keys).toEqual(Array.from({ length: people }, (_, i) => `p${i}`));
    expect(fake.state.listCalls).toEqual(pages);
  });

  it('reads the code and message of both error bodies, and the status when a body names none', () => {
    const res = (status: number, headers: Record<string, string> = {}) => new Response(null, { status, headers });
    expect(GatehouseError.from(res(404), { Error: 'CardNotFound', Message: 'No such card.' })).toMatchObject({ status: 404, code: 'CardNotFound', message: 'No such card.' });
    expect(GatehouseError.from(res(400), { error: 'invalid_client', error_description: 'The client is not known.' })).toMatchObject({ code: 'invalid_client', message: 'The client is not known.' });
    const throttled = GatehouseError.from(res(429, { 'retry-after': '3' }), { message: 'Too Many Requests' });
    expect(throttled).toMatchObject({ status: 429, code: 'HttpError', message: 'HTTP 429', retryAfterSeconds: 3 });
    expect(GatehouseError.from(res(502), '<html>Bad gateway</html>')).toMatchObject({ status: 502, code: 'HttpError', body: '<html>Bad gateway</html>', retryAfterSeconds: undefined });
  });
});
