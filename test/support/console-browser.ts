/**
 * The operator console in a real browser: Debian's Chromium driven by puppeteer-core (never a
 * downloaded browser), controls found by role and accessible name (the console's contract), axe-core
 * run in the page, a screenshot of each page under test-results/console/, and every console error,
 * page error, failed request and request to another origin collected for the test to assert on.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import puppeteer, { type Browser, type BrowserContext, type ElementHandle, type Page } from 'puppeteer-core';
import { REPO_ROOT } from './runtime.ts';

/** Debian's chromium, or the one CHROMIUM_PATH names; undefined when the machine has none. */
export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p): p is string => !!p && existsSync(p));

const CONSOLE_ARTIFACTS = join(REPO_ROOT, 'test-results', 'console');

export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Containers run as root without user namespaces; stay off the network beyond the runtime.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

/** What a page did wrong, collected while a test drives it. */
export interface PageWatch {
  readonly errors: string[];
  readonly failed: string[];
  readonly foreign: string[];
}

/**
 * A new page of `url`'s console in a browser context of its own (its own cookies and storage: one
 * test's session never leaks into the next), watched: console and page errors, failed and foreign
 * requests.
 */
export async function consolePage(browser: Browser | BrowserContext, url: string, viewport = { width: 1280, height: 900 }): Promise<{ page: Page; watch: PageWatch }> {
  const context = 'createBrowserContext' in browser ? await browser.createBrowserContext() : browser;
  const page = await context.newPage();
  // The context goes with its page.
  if (context !== browser) page.once('close', () => void context.close().catch(() => undefined));
  await page.setViewport(viewport);
  const origin = new URL(url).origin;
  const wsOrigin = origin.replace(/^http/, 'ws').replace('127.0.0.1', 'localhost');
  const watch: PageWatch = { errors: [], failed: [], foreign: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') watch.errors.push(m.text());
  });
  page.on('pageerror', (e) => watch.errors.push(String(e)));
  page.on('requestfailed', (r) => {
    // A navigation away cancels the page's open calls: not a failure of the page.
    if (r.failure()?.errorText !== 'net::ERR_ABORTED') watch.failed.push(`${r.url()}: ${r.failure()?.errorText}`);
  });
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('data:') && !u.startsWith(origin) && !u.startsWith(wsOrigin) && !u.startsWith(origin.replace(/^http/, 'ws'))) watch.foreign.push(u);
  });
  return { page, watch };
}

/** The element of a role and accessible name (waits for it). */
export function byRole(page: Page, role: string, name: string, timeout = 10_000): Promise<ElementHandle> {
  return page.waitForSelector(`::-p-aria(${name}[role="${role}"])`, { timeout }) as Promise<ElementHandle>;
}

/** Types into the textbox of that accessible name, replacing what it held. */
export async function fill(page: Page, name: string, text: string, role = 'textbox'): Promise<void> {
  const box = await byRole(page, role, name);
  await box.click({ count: 3 });
  await box.press('Backspace');
  await box.type(text);
}

export async function press(page: Page, name: string, role = 'button'): Promise<void> {
  await (await byRole(page, role, name)).click();
}

/** Signs in through the sign-in page and waits for the main navigation. */
export async function signIn(page: Page, login: { readonly instance: string; readonly userName: string; readonly password: string }): Promise<void> {
  await fill(page, 'Instance', login.instance);
  await fill(page, 'User name', login.userName);
  await fill(page, 'Password', login.password);
  await press(page, 'Sign in');
  await byRole(page, 'navigation', 'Main', 15_000);
}

let axeSource: string | undefined;

/** axe-core's violations of impact serious or critical on the page as it is now. */
export async function seriousViolations(page: Page): Promise<Array<{ id: string; impact: string; help: string; nodes: string[] }>> {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Injected through the DevTools protocol (not a <script>): the console's CSP allows no inline script.
  await page.evaluate(axeSource);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`)) as Array<{
    id: string;
    impact: string;
    help: string;
    nodes: string[];
  }>;
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Keeps a screenshot of the page as `test-results/console/<name>.png`, for a reviewer to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(CONSOLE_ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The page's text (expressions run in the page are strings: the tests compile without the DOM library). */
export const pageText = (page: Page): Promise<string> => page.evaluate('document.body.innerText') as Promise<string>;
