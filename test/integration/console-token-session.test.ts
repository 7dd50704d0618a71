/**
 * The console's session at the token endpoint (shared/auth/console-session.ts) through the real
 * token handler on DynamoDB Local: `gatehouseConsole`'s calls need the CSRF header; its refresh
 * token travels only in an HttpOnly, SameSite=Strict cookie scoped to `/token` (Secure over
 * HTTPS), rotates on refresh with reuse detection, and is cleared by `/token/revoke`. Other
 * clients keep the refresh token in the body and revoke with `token=`.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createInstance } from '#shared/auth/provisioning.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { hashPassword } from '#shared/auth/passwords.ts';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { newKey } from '#shared/model/placement.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createHandler } from '../../functions/token/handler.ts';
import { httpEvent, lambdaContext } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { assertDocumented } from '../support/openapi-validator.ts';
import { seedUser } from '../support/tokens.ts';

const PASSWORD = 'Corr3ct-Horse!';
const CSRF = { 'x-gatehouse-csrf': '1' };
const COOKIE = 'gatehouse_console_refresh';

let t: TestDb;
let deps: CoreDeps;
let handler: ReturnType<typeof createHandler>;
let acme: StoredObject;
let seq = 0;

interface Answer {
  readonly status: number;
  readonly body: any;
  readonly cookies: readonly string[];
}

/** A form post to the token family, with request headers and cookies (`name=value`) as API Gateway passes them. */
async function post(path: '/token' | '/token/revoke', fields: Record<string, string>, opts: { headers?: Record<string, string>; cookies?: string[] } = {}): Promise<Answer> {
  const event = httpEvent('POST', path, { body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded', headers: opts.headers ?? {} });
  const res = (await handler({ ...event, ...(opts.cookies ? { cookies: opts.cookies } : {}) }, lambdaContext())) as APIGatewayProxyStructuredResultV2;
  const text = res.body ?? '';
  const headers = Object.fromEntries(Object.entries(res.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  assertDocumented({ method: 'POST', path, status: res.statusCode ?? 200, contentType: headers['content-type'], text });
  return { status: res.statusCode ?? 200, body: text ? JSON.parse(text) : undefined, cookies: res.cookies ?? [] };
}

/** The refresh cookie's value in an answer's Set-Cookie. */
function refreshCookieOf(a: Answer): string {
  const line = a.cookies.find((c) => c.startsWith(`${COOKIE}=`));
  expect(line, JSON.stringify(a.cookies)).toBeDefined();
  return line!.split(';')[0]!.slice(COOKIE.length + 1);
}

async function newUser(): Promise<string> {
  const user = await seedUser(t, acme, 'Operator', `console${++seq}`, { passwordHash: await hashPassword(PASSWORD) });
  return `Acme\\${user.doc.CommonName}`;
}

const consoleLogin = (username: string, headers: Record<string, string> = CSRF) =>
  post('/token', { grant_type: 'password', client_id: 'gatehouseConsole', username, password: PASSWORD }, { headers });

const consoleRefresh = (cookie: string | undefined, extra: Record<string, string> = {}) =>
  post('/token', { grant_type: 'refresh_token', client_id: 'gatehouseConsole', ...extra }, { headers: CSRF, ...(cookie ? { cookies: [`${COOKIE}=${cookie}`] } : {}) });

function expectTicketNotValid(a: Answer) {
  expect(a.status).toBe(400);
  expect(a.body.error).toBe('RefreshTokenTicketNotValid');
}

beforeAll(async () => {
  t = await createTestDb();
  deps = createCoreDeps({ config: t.config, db: t.db });
  handler = createHandler(() => deps);
  const key = newKey();
  acme = await createInstance(t.db, { key, name: 'Acme', license: await localLicenseAuthority(t.config.dataDir).issue({ instanceKey: key }) });
});

describe('the console client at the token endpoint', () => {
  it('refuses every token call of the console without the CSRF header as invalid_client', async () => {
    const username = await newUser();
    const login = await consoleLogin(username, {});
    expect(login).toMatchObject({ status: 400, body: { error: 'invalid_client' } });
    expect(login.cookies).toEqual([]);
    const ok = await consoleLogin(username);
    const cookie = refreshCookieOf(ok);
    const refresh = await post('/token', { grant_type: 'refresh_token', client_id: 'gatehouseConsole' }, { cookies: [`${COOKIE}=${cookie}`] });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_client' } });
    const revoke = await post('/token/revoke', { client_id: 'gatehouseConsole' }, { cookies: [`${COOKIE}=${cookie}`] });
    expect(revoke).toMatchObject({ status: 400, body: { error: 'invalid_client' } });
    // Neither refused call spent or revoked the login.
    expect((await consoleRefresh(cookie)).status).toBe(200);
  });

  it('answers a login without refresh_token in the body, the refresh token in an HttpOnly SameSite=Strict cookie on /token', async () => {
    const login = await consoleLogin(await newUser());
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.access_token).toBeTruthy();
    expect(login.body).not.toHaveProperty('refresh_token');
    expect(login.cookies).toHaveLength(1);
    const maxAge = t.config.refreshTokenDays * 86_400;
    expect(login.cookies[0]).toMatch(new RegExp(`^${COOKIE}=[^;\\s]+; Path=/token; Max-Age=${maxAge}; HttpOnly; SameSite=Strict$`));
  });

  it('marks the cookie Secure when the browser came over HTTPS', async () => {
    const login = await consoleLogin(await newUser(), { ...CSRF, host: 'gatehouse.example.com', 'x-forwarded-proto': 'https' });
    expect(login.status).toBe(200);
    expect(login.cookies[0]).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    const revoke = await post('/token/revoke', { client_id: 'gatehouseConsole' }, { headers: { ...CSRF, host: 'gatehouse.example.com', 'x-forwarded-proto': 'https' }, cookies: [`${COOKIE}=${refreshCookieOf(login)}`] });
    expect(revoke.cookies).toEqual([`${COOKIE}=; Path=/token; Max-Age=0; HttpOnly; SameSite=Strict; Secure`]);
  });

  it('rotates the cookie on refresh; the old one reused is refused and ends the login', async () => {
    const first = refreshCookieOf(await consoleLogin(await newUser()));
    const refreshed = await consoleRefresh(first);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.access_token).toBeTruthy();
    expect(refreshed.body).not.toHaveProperty('refresh_token');
    const second = refreshCookieOf(refreshed);
    expect(second).not.toBe(first);
    expectTicketNotValid(await consoleRefresh(first));
    // Reuse detection: the login's newer token is revoked too.
    expectTicketNotValid(await consoleRefresh(second));
  });

  it('ignores a refresh_token in the body of the console\'s refresh', async () => {
    const other = refreshCookieOf(await consoleLogin(await newUser()));
    // No cookie: the token in the body is not read, so nothing refreshes ...
    expectTicketNotValid(await consoleRefresh(undefined, { refresh_token: other }));
    // ... and that login's token was not spent by it.
    expect((await consoleRefresh(other)).status).toBe(200);
  });

  it('signs out: /token/revoke with the cookie clears it and the login no longer refreshes', async () => {
    const cookie = refreshCookieOf(await consoleLogin(await newUser()));
    const revoke = await post('/token/revoke', { client_id: 'gatehouseConsole' }, { headers: CSRF, cookies: [`${COOKIE}=${cookie}`] });
    expect(revoke.status).toBe(200);
    expect(revoke.cookies).toEqual([`${COOKIE}=; Path=/token; Max-Age=0; HttpOnly; SameSite=Strict`]);
    expectTicketNotValid(await consoleRefresh(cookie));
    // A sign-out without a cookie (already signed out) is still 200, and still clears it.
    const again = await post('/token/revoke', { client_id: 'gatehouseConsole' }, { headers: CSRF });
    expect(again.status).toBe(200);
    expect(again.cookies).toHaveLength(1);
  });
});

describe('other clients at the token endpoint', () => {
  it('keep the refresh token in the body, without a cookie, and revoke with token=', async () => {
    const username = await newUser();
    const secret = t.config.clientSecret;
    const login = await post('/token', { grant_type: 'password', client_id: 'consoleApp', client_secret: secret, username, password: PASSWORD });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.refresh_token).toBeTruthy();
    expect(login.cookies).toEqual([]);
    const refreshed = await post('/token', { grant_type: 'refresh_token', client_id: 'consoleApp', client_secret: secret, refresh_token: login.body.refresh_token });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBeTruthy();
    expect(refreshed.cookies).toEqual([]);

    const revoke = await post('/token/revoke', { client_id: 'consoleApp', client_secret: secret, token: refreshed.body.refresh_token });
    expect(revoke.status).toBe(200);
    expect(revoke.cookies).toEqual([]);
    expectTicketNotValid(await post('/token', { grant_type: 'refresh_token', client_id: 'consoleApp', client_secret: secret, refresh_token: refreshed.body.refresh_token }));
    // RFC 7009: an unknown token is not an error.
    expect((await post('/token/revoke', { client_id: 'consoleApp', client_secret: secret, token: 'A'.repeat(43) })).status).toBe(200);
    // A wrong secret is refused before anything is revoked.
    expect((await post('/token/revoke', { client_id: 'consoleApp', client_secret: 'wrong', token: 'A'.repeat(43) })).body.error).toBe('invalid_client');
  });
});
