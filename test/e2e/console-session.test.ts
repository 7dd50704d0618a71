/**
 * The console's session in Chromium against the e2e runtime: `/` leads to the sign-in page,
 * served with its Content-Security-Policy; an operator signs in with the keyboard alone and finds the main navigation by
 * its names; a reload keeps the session (the refresh cookie, which no script can read); "Sign
 * out" revokes it; a two-factor user signs in with the code from the outbox; a wrong password
 * reads as a sentence in an alert. axe-core finds nothing serious on the sign-in page.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROMIUM, byRole, consolePage, fill, launchChromium, pageText, press, screenshot, seriousViolations } from '../support/console-browser.ts';
import { adminCommand } from '../support/admin-cli.ts';

/** The visible label of the focused control (expressions run in the page are strings: the tests compile without the DOM library). */
const FOCUSED_LABEL = 'document.activeElement?.labels?.[0]?.textContent ?? null';

const url = inject('url');
const admin = inject('admin');
const dataDir = inject('dataDir');
const runAdmin = adminCommand(dataDir, inject('runtimeDynamoEndpoint'));

if (!CHROMIUM) console.warn('console-session.test.ts skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

describe.skipIf(!CHROMIUM)('the console session in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('serves the sign-in page from / with its policy, signs in, keeps the session over a reload and signs out', async () => {
    const { page, watch } = await consolePage(browser, url);
    const res = await page.goto(`${url}/`, { waitUntil: 'networkidle0' });
    expect(new URL(page.url()).pathname).toBe('/console/');
    const csp = res!.headers()['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    await byRole(page, 'button', 'Sign in');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in');

    // A wrong password: a readable alert, no session.
    await fill(page, 'Instance', admin.instanceName);
    await fill(page, 'User name', admin.userName);
    await fill(page, 'Password', 'not-the-password');
    await press(page, 'Sign in');
    const alert = await page.waitForSelector('[role="alert"]');
    expect(await alert!.evaluate((e) => e.textContent)).toMatch(/user name or password is not right|password is not right/i);

    // The keyboard alone: a fresh page, Tab to each field (its label is its name), type, Enter.
    await page.reload({ waitUntil: 'networkidle0' });
    for (const [label, text] of [
      ['Instance', admin.instanceName],
      ['User name', admin.userName],
      ['Password', admin.password],
    ] as const) {
      await page.keyboard.press('Tab');
      expect(await page.evaluate(FOCUSED_LABEL)).toBe(label);
      await page.keyboard.type(text);
    }
    await page.keyboard.press('Enter');
    await byRole(page, 'navigation', 'Main', 15_000);
    for (const name of ['Live events', 'Alarms', 'People', 'Doors', 'Access levels', 'Schedules', 'Events', 'Administration']) await byRole(page, 'link', name);
    await byRole(page, 'button', 'Sign out');
    // The refresh token is a cookie no script reads, scoped to the token endpoint.
    const cookies = await page.browserContext().cookies();
    const refresh = cookies.find((c) => c.name === 'gatehouse_console_refresh');
    expect(refresh).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/token' });
    expect(await page.evaluate('document.cookie')).toBe('');

    // A reload: the session comes back from the cookie.
    await page.reload({ waitUntil: 'networkidle0' });
    await byRole(page, 'navigation', 'Main');

    await press(page, 'Sign out');
    await byRole(page, 'button', 'Sign in');
    // The login is revoked: the old refresh token no longer buys a token.
    const again = await fetch(`${url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-gatehouse-csrf': '1', cookie: `gatehouse_console_refresh=${refresh!.value}` },
      body: 'grant_type=refresh_token&client_id=gatehouseConsole',
    });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe('RefreshTokenTicketNotValid');
    await page.reload({ waitUntil: 'networkidle0' });
    await byRole(page, 'button', 'Sign in');

    expect(watch.errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('signs in a two-factor user with "Send code" and the code from the outbox', async () => {
    const child = `Console2fa-${Date.now()}`;
    expect((await runAdmin(['create-instance', '--parent', admin.instanceName, '--name', child])).code).toBe(0);
    const made = await runAdmin(['create-user', '--instance', child, '--name', 'olga', '--password', 'Olga-Secret-1!', '--role', 'Operator', '--two-factor']);
    expect(made.code, made.stderr).toBe(0);
    const { page, watch } = await consolePage(browser, url, { width: 375, height: 800 });
    await page.goto(`${url}/console/`, { waitUntil: 'networkidle0' });
    await fill(page, 'Instance', child);
    await fill(page, 'User name', 'olga');
    await fill(page, 'Password', 'Olga-Secret-1!');
    await press(page, 'Sign in');
    await press(page, 'Send code');
    await page.waitForFunction(`document.body.innerText.includes('A code is on its way')`);
    const lines = (await readFile(join(dataDir, 'outbox.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    const message = lines.filter((m) => m.instance === child && m.user === 'olga').pop();
    expect(message?.code).toMatch(/^\d{6}$/);
    await fill(page, 'One-time code', message.code);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-two-factor-375');
    await press(page, 'Sign in');
    await byRole(page, 'navigation', 'Main', 15_000);
    // An Operator has no Administration.
    expect(await pageText(page)).not.toContain('Administration');
    expect(watch.errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    await page.close();
  });
});
