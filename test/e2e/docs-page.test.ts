/**
 * The reference page in a real browser: Debian's Chromium, driven by puppeteer-core (never a
 * downloaded browser), against the e2e runtime. The page loads with no console error and no
 * failed request, every request stays on the runtime, the people operations are listed, and a
 * screenshot is kept at test-results/docs-page.png.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REPO_ROOT } from '../support/runtime.ts';

const url = inject('url');

/** Debian's chromium, or the one CHROMIUM_PATH names. */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));
if (!CHROMIUM) console.warn('docs-page.test.ts skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

const ARTIFACTS = join(REPO_ROOT, 'test-results');

/** The page's text; expressions run in the page are strings (the tests compile without the DOM library). */
const BODY_TEXT = 'document.body.innerText';

describe.skipIf(!CHROMIUM)('the reference page in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Containers run as root without user namespaces.
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('loads with no console error and no failed request, and lists the people operations', async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 1000 });
    const consoleErrors: string[] = [];
    const failed: string[] = [];
    const requested: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    page.on('request', (r) => requested.push(r.url()));
    page.on('requestfailed', (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.url()}: ${r.status()}`);
    });

    // The page opens on the people group (Scalar's tag anchor), as a reader following a link would.
    const res = await page.goto(`${url}/docs#tag/people`, { waitUntil: 'networkidle0', timeout: 60_000 });
    expect(res?.status()).toBe(200);
    await page.waitForFunction(`document.body.innerText.includes('List people')`, { timeout: 60_000 });
    const text = (await page.evaluate(BODY_TEXT)) as string;
    for (const summary of ['List people', 'Create a person', 'Read a person', 'Replace a person', 'Delete a person', 'Give a person an access level']) {
      expect(text).toContain(summary);
    }
    // The people list shows its example response.
    expect(text).toContain('Ada Lovelace');

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs-page.png') });

    // The token endpoint shows its form fields.
    await page.goto(`${url}/docs#tag/authentication/POST/token`, { waitUntil: 'networkidle0', timeout: 60_000 });
    await page.waitForFunction(`document.body.innerText.includes('grant_type')`, { timeout: 60_000 });
    const token = (await page.evaluate(BODY_TEXT)) as string;
    expect(token).toContain('application/x-www-form-urlencoded');
    for (const field of ['grant_type', 'username', 'password', 'refresh_token']) expect(token).toContain(field);
    await page.screenshot({ path: join(ARTIFACTS, 'docs-page-token.png') });

    expect(consoleErrors).toEqual([]);
    expect(failed).toEqual([]);
    const origin = new URL(url).origin;
    expect(requested.filter((r) => !r.startsWith(origin) && !r.startsWith('data:') && !r.startsWith('blob:'))).toEqual([]);
    await page.close();
  });
});
