/**
 * The console's Events and Administration pages in Chromium against the e2e runtime, on a child
 * instance of this file's own (its administrator, a grandchild instance to switch to):
 * - Events: filtered by minimum priority and a date range, paged (reload and back keep the
 *   filters), filtered by event type, and "Export CSV" downloads exactly the filtered events the
 *   API lists, every page of them, with a message that would be a spreadsheet formula kept as text;
 * - Administration: an Operator user is created, signed out everywhere, given two-factor sign-in,
 *   made ReadOnly and disabled (each checked through the API and its logins); a webhook is created
 *   and "Test" reaches a real receiver, the delivery then listed; switching to the child instance
 *   makes Events and the users list act in it, and "Back to" returns.
 * axe-core finds nothing serious on either page, a screenshot of each (and at 375 px), no console
 * error and no request to another origin.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialize } from 'bson';
import type { Browser, ElementHandle, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROMIUM, byRole, consolePage, fill, launchChromium, pageText, press, screenshot, seriousViolations, signIn, type PageWatch } from '../support/console-browser.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';

const url = inject('url');
const admin = inject('admin');
const suffix = randomBytes(4).toString('hex');
const PASSWORD = `B0ss!${randomBytes(6).toString('base64url')}`;
const parentName = `ConsoleAdmin-${suffix}`;
const childName = `ConsoleAdminChild-${suffix}`;
const DAY = 86_400_000;

async function login(instance: string, username: string, password: string): Promise<{ status: number; body: any }> {
  const res = await documentedFetch(`${url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: admin.clientId, client_secret: admin.clientSecret, instance, username, password }),
  });
  return { status: res.status, body: await res.json() };
}

async function tokenOf(instance: string, username: string, password: string): Promise<string> {
  const r = await login(instance, username, password);
  if (r.status !== 200) throw new Error(`login ${instance}\\${username}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token as string;
}

let token: string;

async function call(method: string, path: string, body?: unknown, as = token): Promise<any> {
  const res = await documentedFetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** RFC 4180 records of a CSV text (quoted fields, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** The DOM fields these tests read (the tests compile without the DOM library). */
interface Rendered {
  innerText: string;
  value: string;
}

/** The visible text of each body row of the table of that name. */
async function tableRows(page: Page, name: string): Promise<string[]> {
  const table = await byRole(page, 'table', name);
  return table.$$eval('tbody tr', (trs) => trs.map((tr) => (tr as unknown as Rendered).innerText));
}

/** Sets a date input's value as a person picking a day does (the input event the page listens to). */
async function pickDate(page: Page, label: string, day: string): Promise<void> {
  // A date input is no textbox to the accessibility tree: found by its label alone.
  const input = (await page.waitForSelector(`::-p-aria(${label})`)) as ElementHandle;
  await input.evaluate((e, v) => {
    (e as unknown as Rendered).value = v;
    e.dispatchEvent(new Event('input', { bubbles: true }));
  }, day);
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A console page whose answers of 400 and above are kept (method and path) as well. */
async function watchedPage(browser: Browser): Promise<{ page: Page; watch: PageWatch; refused: string[] }> {
  const { page, watch } = await consolePage(browser, url);
  const refused: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  return { page, watch, refused };
}

/**
 * Nothing went wrong in the page: no call refused (a page opened without a login does not even try
 * a refresh), no console error, no request to another origin (the export's own blob: URL aside).
 */
function expectClean({ watch, refused }: { watch: PageWatch; refused: string[] }): void {
  expect(refused).toEqual([]);
  expect(watch.errors).toEqual([]);
  expect(watch.foreign.filter((u) => !u.startsWith(`blob:${new URL(url).origin}/`))).toEqual([]);
}

if (!CHROMIUM) console.warn('console-admin.test.ts skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

describe.skipIf(!CHROMIUM)('the console Events and Administration pages in Chromium', () => {
  let browser: Browser;
  let parent: string;
  let child: string;
  let expected: any[];
  let from: string;
  let to: string;
  let lowType: string;
  const rx = new WebhookReceiver();
  let downloads: string;

  beforeAll(async () => {
    browser = await launchChromium();
    await rx.start();
    downloads = await mkdtemp(join(tmpdir(), 'console-csv-'));
    const rootToken = await tokenOf(admin.instanceName, admin.userName, admin.password);
    parent = (await call('POST', `/api/f/${admin.instanceKey}/instances`, { CommonName: parentName }, rootToken)).Key;
    await call('POST', `/api/f/${parent}/users`, { CommonName: 'boss', Role: 'Administrator', Password: PASSWORD }, rootToken);
    token = await tokenOf(parentName, 'boss', PASSWORD);
    child = (await call('POST', `/api/f/${parent}/instances`, { CommonName: childName })).Key;
    await call('POST', `/api/f/${child}/users`, { CommonName: `childuser-${suffix}`, Role: 'Operator', Password: PASSWORD });

    // An app with a low and a high priority type; the message is the event data's Text.
    const app = await call('POST', `/api/f/${parent}/apps`, { CommonName: `Console export ${suffix}`, Monikers: [{ Namespace: 'ConsoleE2E', Nickname: `export-${suffix}` }] });
    for (const [nick, name, priority] of [['low', 'Console low', 5], ['high', 'Console high', 40]] as const) {
      const type = await call('PUT', `${app.Href}/eventtypes`, { CommonName: name, Monikers: [{ Namespace: 'ConsoleE2E', Nickname: nick }], Priority: priority, MessageTemplateLong: '{Text}' });
      if (nick === 'low') lowType = type.Key;
    }
    const publish = (folder: string, nick: string, occurred: number, text: string) =>
      call('POST', `/api/f/${folder}/eventmessagesink`, {
        OccurredOn: new Date(occurred).toISOString(),
        AppKey: app.Key,
        EventTypeMoniker: { Namespace: 'ConsoleE2E', Nickname: nick },
        RelatedObjects: [],
        EventDataBsonBase64: Buffer.from(serialize({ Text: text })).toString('base64'),
      });
    // 80 events over the last 8 days (10 a day, every other one high); one message would be a formula.
    const now = Date.now();
    const start = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate()) - 8 * DAY;
    const jobs = Array.from({ length: 80 }, (_, i) => () =>
      publish(parent, i % 2 ? 'high' : 'low', start + Math.floor(i / 10) * DAY + (i % 10) * 3_600_000 + 60_000, i === 41 ? '=HYPERLINK("http://evil.example","open")' : `Export event ${i}`),
    );
    for (let i = 0; i < jobs.length; i += 8) await Promise.all(jobs.slice(i, i + 8).map((j) => j()));
    await publish(child, 'high', now - 60_000, `Only in the child ${suffix}`);

    // The filter: priority 40 and up, days 3 to 7 of the 8 (UTC: the page runs in UTC).
    from = utcDay(start + 2 * DAY);
    to = utcDay(start + 6 * DAY);
    expected = await call(
      'GET',
      `/api/f/${parent}/events?includeSubFolders=true&priorityThreshold=40&startingOn=${from}T00:00:00.000Z&endingOn=${utcDay(start + 7 * DAY)}T00:00:00.000Z&pageSize=1000`,
    );
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await rx.stop();
    if (downloads) await rm(downloads, { recursive: true, force: true });
  });

  it('filters events by minimum priority and dates, pages them, keeps the filters in the URL and exports them all as CSV', async () => {
    expect(expected).toHaveLength(25);
    const watched = await watchedPage(browser);
    const { page } = watched;
    await page.emulateTimezone('UTC');
    await page.goto(`${url}/console/`, { waitUntil: 'networkidle0' });
    await signIn(page, { instance: parentName, userName: 'boss', password: PASSWORD });
    await press(page, 'Events', 'link');
    await byRole(page, 'table', 'Events');

    await pickDate(page, 'From', from);
    await pickDate(page, 'To', to);
    await fill(page, 'Minimum priority', '40', 'spinbutton');
    await press(page, 'Apply filters');
    await page.waitForFunction(`location.search.includes('priority=40')`);
    const messages = (events: any[]) => events.map((e) => e.MessageLong as string);
    const shown = async () => (await tableRows(page, 'Events')).map((r) => r.split('\t')[3]);
    /** Waits until the table shows exactly these events (the previous list stays up while the next loads). */
    const showing = async (events: any[]) => {
      const want = JSON.stringify(messages(events));
      await waitFor(async () => JSON.stringify(await shown()) === want, 10_000);
      expect(await shown()).toEqual(messages(events));
    };
    // Newest first, as the API lists them; the type's name, not its key.
    await showing(expected.slice(0, 20));
    expect((await tableRows(page, 'Events'))[0]).toContain('Console high');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'events');

    await press(page, 'Next page');
    await showing(expected.slice(20));
    expect(page.url()).toContain('page=2');
    // A reload keeps the filters and the page; back returns to the first page.
    await page.reload({ waitUntil: 'networkidle0' });
    await showing(expected.slice(20));
    expect(await (await byRole(page, 'spinbutton', 'Minimum priority')).evaluate((e) => (e as unknown as Rendered).value)).toBe('40');
    await page.goBack();
    await showing(expected.slice(0, 20));

    // Export CSV: every filtered event (both pages), into the download directory.
    const cdp = await browser.target().createCDPSession();
    // The page's own browser context (consolePage gives each page one).
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads, browserContextId: page.browserContext().id });
    await press(page, 'Export CSV');
    await page.waitForFunction(`document.body.innerText.includes('Exported 25 events.')`);
    expect(await waitFor(async () => (await readdir(downloads)).some((f) => f.endsWith('.csv')), 10_000)).toBe(true);
    const file = (await readdir(downloads)).find((f) => f.endsWith('.csv'))!;
    expect(file).toMatch(/^events-.*\.csv$/);
    const text = await readFile(join(downloads, file), 'utf8');
    expect(text.startsWith('\uFEFF')).toBe(true);
    const [header, ...rows] = parseCsv(text.slice(1));
    expect(header).toEqual(['Occurred (UTC)', 'Priority', 'Type', 'Message', 'Related objects', 'Requires acknowledgement', 'Acknowledged', 'Folder', 'Key']);
    expect(rows.map((r) => r[8])).toEqual(expected.map((e) => e.Key));
    expect(rows.map((r) => r[0])).toEqual(expected.map((e) => e.OccurredOn));
    expect(rows.every((r) => r[1] === '40' && r[2] === 'Console high')).toBe(true);
    // The message that would be a formula is text, its quotes kept.
    const formula = rows.find((r) => r[3]!.includes('HYPERLINK'));
    expect(formula?.[3]).toBe(`'=HYPERLINK("http://evil.example","open")`);
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example"",""open"")"`);

    // The event type filter: the low type's events of the same days, whatever their priority.
    await (await byRole(page, 'combobox', 'Event type')).select(lowType);
    await fill(page, 'Minimum priority', '', 'spinbutton');
    await press(page, 'Apply filters');
    const lows = await call(
      'GET',
      `/api/f/${parent}/events?includeSubFolders=true&startingOn=${from}T00:00:00.000Z&endingOn=${utcDay(Date.parse(`${to}T00:00:00.000Z`) + DAY)}T00:00:00.000Z&pageSize=20&query=${encodeURIComponent(JSON.stringify({ EventTypeKey: lowType }))}`,
    );
    expect(lows).toHaveLength(20);
    await showing(lows);
    expect((await tableRows(page, 'Events')).every((r) => r.includes('Console low'))).toBe(true);

    await page.setViewport({ width: 375, height: 800 });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'events-375');
    // Signed out: the next test signs in afresh (the refresh cookie is revoked and cleared).
    await press(page, 'Sign out');
    await byRole(page, 'button', 'Sign in');
    expectClean(watched);
    await page.close();
  });

  it('administers users and webhooks, and switches to a child instance', async () => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(`${url}/console/`, { waitUntil: 'networkidle0' });
    await signIn(page, { instance: parentName, userName: 'boss', password: PASSWORD });
    await press(page, 'Administration', 'link');
    await byRole(page, 'table', 'Users');
    await byRole(page, 'table', 'Webhooks');
    await page.waitForFunction(`document.body.innerText.includes('${childName}')`);
    expect(await seriousViolations(page)).toEqual([]);

    // A new Operator.
    await press(page, 'New user');
    await byRole(page, 'dialog', 'New user');
    await fill(page, 'User name', 'oscar');
    await fill(page, 'Password', 'Oscar-Secret-1!');
    await (await byRole(page, 'combobox', 'Role')).select('Operator');
    expect(await seriousViolations(page)).toEqual([]);
    await press(page, 'Create user');
    const row = () => page.waitForSelector('tr[data-user="oscar"]') as Promise<ElementHandle>;
    await row();
    const oscar = async () => ((await call('GET', `/api/f/${parent}/users`)) as any[]).find((u) => u.CommonName === 'oscar');
    expect(await oscar()).toMatchObject({ Role: 'Operator', IsDisabled: false });
    const first = await login(parentName, 'oscar', 'Oscar-Secret-1!');
    expect(first.status).toBe(200);

    // "Sign out everywhere": the login's refresh token buys nothing more.
    await (await (await row()).waitForSelector('::-p-aria(Sign out everywhere[role="button"])'))!.click();
    await page.waitForFunction(`document.body.innerText.includes('oscar is signed out everywhere.')`);
    const renewed = await documentedFetch(`${url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: admin.clientId, client_secret: admin.clientSecret, refresh_token: first.body.refresh_token }),
    });
    expect(renewed.status).toBe(400);
    expect(((await renewed.json()) as { error: string }).error).toBe('RefreshTokenTicketNotValid');

    // Two-factor on: a password alone no longer signs in.
    await (await (await row()).waitForSelector('::-p-aria(Turn on two-factor[role="button"])'))!.click();
    await (await row()).waitForSelector('::-p-aria(Turn off two-factor[role="button"])');
    expect((await oscar()).TwoFactorEnabled).toBe(true);
    expect((await login(parentName, 'oscar', 'Oscar-Secret-1!')).body.error).toBe('one_time_password_required');

    // Its role: ReadOnly.
    await (await (await row()).waitForSelector('::-p-aria(Change role[role="button"])'))!.click();
    await byRole(page, 'dialog', 'Role of oscar');
    await (await byRole(page, 'combobox', 'Role')).select('ReadOnly');
    await press(page, 'Save');
    await page.waitForFunction(`document.body.innerText.includes('oscar is now Read-only.')`);
    expect((await oscar()).Role).toBe('ReadOnly');

    // Disabled: the API says so and its login is refused.
    await (await (await row()).waitForSelector('::-p-aria(Disable[role="button"])'))!.click();
    await page.waitForFunction(`document.querySelector('tr[data-user="oscar"]')?.innerText.includes('Disabled')`);
    expect((await oscar()).IsDisabled).toBe(true);
    const refused = await login(parentName, 'oscar', 'Oscar-Secret-1!');
    expect(refused.status).toBe(400);
    expect(['user_disabled', 'invalid_grant']).toContain(refused.body.error);
    await screenshot(page, 'administration-users');

    // A webhook to a real receiver: "Test" delivers, and the delivery is listed.
    const hookUrl = rx.endpoint('/console');
    await press(page, 'New webhook');
    await byRole(page, 'dialog', 'New webhook');
    await fill(page, 'Name', `console hook ${suffix}`);
    await fill(page, 'URL', hookUrl);
    await press(page, 'Create webhook');
    const secretRegion = await byRole(page, 'region', 'Signing secret');
    const secret = await secretRegion.$eval('code', (c) => c.textContent ?? '');
    expect(secret).toMatch(/^whsec_/);
    rx.secrets('/console', secret);
    const hookRow = (await page.waitForSelector(`tr[data-webhook="console hook ${suffix}"]`)) as ElementHandle;
    await (await hookRow.waitForSelector('::-p-aria(Test[role="button"])'))!.click();
    await page.waitForFunction(`document.body.innerText.includes('Test delivery to console hook ${suffix}: HTTP 200')`);
    expect(rx.received('/console').map((d) => d.payload.type)).toEqual(['webhook.test']);
    const deliveriesTable = `Deliveries of console hook ${suffix}`;
    await waitFor(async () => (await tableRows(page, deliveriesTable)).some((r) => r.includes('HTTP 200')), 10_000);
    const deliveries = await tableRows(page, deliveriesTable);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toContain('Test delivery');
    expect(deliveries[0]).toContain('HTTP 200');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'administration');

    // The switcher: work in the child; the top bar names it, Users and Events act in it.
    await press(page, `Work in ${childName}`);
    await page.waitForFunction(`document.querySelector('.top-bar').innerText.includes('${childName}')`);
    await page.waitForSelector(`tr[data-user="childuser-${suffix}"]`);
    expect(await page.$('tr[data-user="oscar"]')).toBeNull();
    await press(page, 'Events', 'link');
    await page.waitForFunction(`document.querySelector('table tbody')?.innerText.includes('Only in the child ${suffix}')`);
    expect(await pageText(page)).not.toContain('Export event');
    // Back to the session's own instance.
    await press(page, 'Administration', 'link');
    await press(page, `Back to ${parentName}`);
    await page.waitForSelector('tr[data-user="oscar"]');
    expect(await page.$eval('.top-bar', (e) => (e as unknown as Rendered).innerText)).not.toContain(childName);

    await page.setViewport({ width: 375, height: 800 });
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'administration-375');
    expectClean(watched);
    await page.close();
  });
});
