/**
 * Single sign-on through the console in Chromium: a runtime of its own (as single-sign-on.test.ts),
 * a real OpenID provider (oidc-provider on a loopback port, its development login and consent
 * pages) configured for the instance through the API. The sign-in page offers "Sign in with
 * <provider>" once the instance is typed; the operator logs in at the provider in the same
 * browser, lands back signed in, keeps the session over a reload and signs out. A refusal (an
 * unknown email, provisioning off) lands on the callback page with a readable alert.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROMIUM, byRole, consolePage, fill, launchChromium, pageText, press, screenshot, seriousViolations } from '../support/console-browser.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { startOidcProvider, type RunningProvider, type TestAccount } from '../support/oidc-provider.ts';
import { adminToken, newRuntimeAdmin, spawnSeededRuntime, type RuntimeAdmin, type SpawnedRuntime } from '../support/runtime.ts';

const IDP_CLIENT_ID = 'gatehouse-console-e2e';
const IDP_CLIENT_SECRET = `idp-secret-${randomBytes(8).toString('hex')}`;
const PROVIDER_NAME = 'Example Workforce';
const OTHER_PROVIDER = 'Partner Directory';

// Logins are the accounts' emails: the console's login hint fills the provider's login field.
const accounts = new Map<string, TestAccount>([
  ['alice@example.com', { email: 'alice@example.com', email_verified: true, name: 'Alice' }],
  ['dave@example.com', { email: 'dave@example.com', email_verified: true, name: 'Dave' }],
]);

let runtime: SpawnedRuntime;
let admin: RuntimeAdmin;
let token: string;
let op: RunningProvider;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await documentedFetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * What the console's own pages did wrong: console errors of its origin's resources (the provider's
 * development pages import a web font from another site and have no favicon: not ours), and
 * requests its pages (not a navigation) sent to another origin. `consolePage`'s watch sees the
 * whole tab, the provider's pages included.
 */
function watchConsoleOrigin(page: Page): { readonly errors: string[]; readonly foreign: string[] } {
  const errors: string[] = [];
  const foreign: string[] = [];
  page.on('console', (m) => {
    const at = m.location()?.url ?? '';
    if (m.type() === 'error' && (at === '' || at.startsWith(runtime.url))) errors.push(`${at} ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => {
    if (!r.isNavigationRequest() && r.frame()?.url().startsWith(runtime.url) && !r.url().startsWith(runtime.url) && !r.url().startsWith('data:')) foreign.push(r.url());
  });
  return { errors, foreign };
}

/** Logs in at oidc-provider's development pages: the login form (login prefilled by the hint, or typed), then consent. */
async function loginAtProvider(page: Page, login: string | undefined): Promise<void> {
  const loginBox = await page.waitForSelector('input[name="login"]', { timeout: 15_000 });
  expect(new URL(page.url()).origin).toBe(op.issuer);
  if (login === undefined) {
    // The console sent the user name as login_hint: the provider's form holds it already.
    expect(await loginBox!.evaluate((e) => (e as unknown as { value: string }).value)).toBe('alice@example.com');
  } else await loginBox!.type(login);
  await (await page.waitForSelector('input[name="password"]'))!.type('any password');
  await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  const consent = await page.waitForSelector('input[name="prompt"][value="consent"]', { timeout: 15_000 });
  expect(consent).toBeTruthy();
  await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
}

beforeAll(async () => {
  admin = newRuntimeAdmin('ConsoleSso');
  ({ runtime } = await spawnSeededRuntime(inject('runtimeDynamoEndpoint'), admin, { GATEHOUSE_IDP_ALLOW_LOOPBACK: 'true' }));
  token = await adminToken(runtime.url, admin);
  op = await startOidcProvider({
    clients: [{ client_id: IDP_CLIENT_ID, client_secret: IDP_CLIENT_SECRET, redirect_uris: [`${runtime.url}/oauth/callback`] }],
    accounts,
  });
  const root = runtime.instanceKey;
  const provider = await call('POST', `/api/f/${root}/identityproviders`, {
    CommonName: PROVIDER_NAME,
    Issuer: op.issuer,
    ClientId: IDP_CLIENT_ID,
    ClientSecret: IDP_CLIENT_SECRET,
    EmailDomains: ['example.com'],
    // Off: only users an administrator linked to the provider get in.
    JitProvisioning: false,
  });
  expect(provider.status, JSON.stringify(provider.body)).toBe(201);
  // A second enabled provider: without a login hint, only the button's provider Key tells /oauth/authorize which one.
  const other = await call('POST', `/api/f/${root}/identityproviders`, {
    CommonName: OTHER_PROVIDER,
    Issuer: 'https://login.partner.example/v2.0',
    ClientId: 'gatehouse',
    ClientSecret: 'another-secret-0123456789',
    EmailDomains: ['partner.example'],
  });
  expect(other.status, JSON.stringify(other.body)).toBe(201);
  const alice = await call('POST', `/api/f/${root}/users`, { CommonName: 'alice@example.com', Email: 'alice@example.com', IdentityProviderKey: provider.body.Key, Role: 'Operator' });
  expect(alice.status, JSON.stringify(alice.body)).toBe(201);
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
  await op?.stop();
});

if (!CHROMIUM) console.warn('console-single-sign-on.test.ts skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

describe.skipIf(!CHROMIUM)('single sign-on through the console in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('offers the provider for the instance, signs in there, keeps the session over a reload and signs out', async () => {
    const { page, watch } = await consolePage(browser, runtime.url);
    const ours = watchConsoleOrigin(page);
    await page.goto(`${runtime.url}/console/`, { waitUntil: 'networkidle0' });
    await fill(page, 'Instance', `no-such-instance-${randomBytes(3).toString('hex')}`);
    // An unknown instance offers nothing (and its answer is the same as for an instance without providers).
    await new Promise((r) => setTimeout(r, 800));
    expect(await pageText(page)).not.toContain('Sign in with');
    await fill(page, 'Instance', admin.instanceName);
    await fill(page, 'User name', 'alice@example.com');
    await byRole(page, 'button', `Sign in with ${PROVIDER_NAME}`);
    await byRole(page, 'button', `Sign in with ${OTHER_PROVIDER}`);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'single-sign-on-offered');

    await press(page, `Sign in with ${PROVIDER_NAME}`);
    await loginAtProvider(page, undefined);
    await byRole(page, 'navigation', 'Main', 15_000);
    expect(new URL(page.url()).pathname).toBe('/console/live');
    // Nothing of the flow is left in the address or in the tab's storage.
    expect(page.url()).not.toContain('code=');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await pageText(page)).toContain('alice@example.com');
    await byRole(page, 'button', 'Sign out');
    await screenshot(page, 'single-sign-on-signed-in');
    const refresh = (await page.browserContext().cookies()).find((c) => c.name === 'gatehouse_console_refresh');
    expect(refresh).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/token' });

    await page.reload({ waitUntil: 'networkidle0' });
    await byRole(page, 'navigation', 'Main');
    expect(await pageText(page)).toContain('alice@example.com');

    await press(page, 'Sign out');
    await byRole(page, 'button', 'Sign in');
    const again = await fetch(`${runtime.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-gatehouse-csrf': '1', cookie: `gatehouse_console_refresh=${refresh!.value}` },
      body: 'grant_type=refresh_token&client_id=gatehouseConsole',
    });
    expect(again.status).toBe(400);

    // A refresh without a session (the page load before signing in) is the only 400.
    expect(ours.errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    expect(ours.foreign).toEqual([]);
    // The tab's requests to other origins were the navigations to the provider (and its pages' own).
    expect(watch.foreign.some((u) => u.startsWith(op.issuer))).toBe(true);
    expect(watch.failed.filter((f) => f.startsWith(runtime.url))).toEqual([]);
    await page.close();
  });

  it('lands on the callback page with a readable alert when the provider\'s user has no user here', async () => {
    // A fresh browser state: the provider's session of the first test would sign Alice in again.
    const { page, watch } = await consolePage(browser, runtime.url, { width: 375, height: 800 });
    const ours = watchConsoleOrigin(page);
    const cdp = await page.createCDPSession();
    await cdp.send('Network.clearBrowserCookies');
    await page.goto(`${runtime.url}/console/`, { waitUntil: 'networkidle0' });
    await fill(page, 'Instance', admin.instanceName);
    // No user name, so no login hint: of the two providers, the button's own is the one.
    await press(page, `Sign in with ${PROVIDER_NAME}`);
    await loginAtProvider(page, 'dave@example.com');
    const alert = await page.waitForSelector('[role="alert"]', { timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe('/console/callback');
    expect(await alert!.evaluate((e) => e.textContent)).toMatch(/Single sign-on was refused.*Ask an administrator/);
    await byRole(page, 'heading', 'Sign-in failed');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'single-sign-on-refused-375');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await press(page, 'Back to sign in', 'link');
    await byRole(page, 'button', 'Sign in');
    expect(ours.errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    expect(ours.foreign).toEqual([]);
    expect(watch.failed.filter((f) => f.startsWith(runtime.url))).toEqual([]);
    await page.close();
  });

  it('answers the providers of an instance to anyone, and the same empty list for an unknown instance', async () => {
    const known = await documentedFetch(`${runtime.url}/oauth/providers?instance=${encodeURIComponent(admin.instanceName)}`);
    expect(known.status).toBe(200);
    expect(known.headers.get('cache-control')).toBe('no-store');
    const listed = (await known.json()) as Array<Record<string, unknown>>;
    expect(listed).toEqual([
      { CommonName: PROVIDER_NAME, Key: expect.any(String) },
      { CommonName: OTHER_PROVIDER, Key: expect.any(String) },
    ]);
    expect(JSON.stringify(listed)).not.toContain(IDP_CLIENT_SECRET);
    const unknown = await documentedFetch(`${runtime.url}/oauth/providers?instance=nobody-${randomBytes(3).toString('hex')}`);
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toEqual([]);
    const missing = await documentedFetch(`${runtime.url}/oauth/providers`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ Error: 'ValidationFailed' });
  });
});
