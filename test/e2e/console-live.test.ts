/**
 * Live events and alarms in the console, in Chromium against the e2e runtime, selected by role and
 * accessible name. In a child instance of its own, with a person holding a card and an access
 * level to a reader, and an alarm definition on the built-in "Access Denied": a granted card read
 * recorded through the API shows in the "Live events" table within 2 s; the filters and the pause
 * work; a denied read raises an alarm (the navigation counts it); its detail decodes the event
 * data, links the related objects and "Why?" shows the failing check; the alarm is acknowledged
 * with a comment using the keyboard alone, leaves "Unacknowledged alarms", shows under
 * "Acknowledged alarms", and the event's GET carries the acknowledgement. axe-core finds nothing
 * serious on each view, each view's screenshot is kept, no console error, no foreign request.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROMIUM, byRole, consolePage, fill, launchChromium, press, screenshot, seriousViolations, signIn, type PageWatch } from '../support/console-browser.ts';
import { adminCommand } from '../support/admin-cli.ts';
import { adminToken } from '../support/runtime.ts';
import { e2eCalls } from '../support/e2e-calls.ts';

const url = inject('url');
const admin = inject('admin');
const runAdmin = adminCommand(inject('dataDir'), inject('runtimeDynamoEndpoint'));
const suffix = randomBytes(4).toString('hex');
const login = { instance: `ConsoleLive-${suffix}`, userName: 'ada', password: 'Ada-Live-Secret-1!' };
const DENIED_TYPE_HREF = (instance: string) => `/api/f/${instance}/apps/000000000000000000000021/eventtypes/000000000000000000000023`;

let token: string;
let I: string;

const { ok } = e2eCalls(url, () => token);

/** A card read recorded through the API (`POST accessdecisions` with `Record`): it publishes the result event. */
const cardRead = (readerKey: string, card: number) => ok('POST', `/api/f/${I}/accessdecisions`, { ReaderKey: readerKey, EncodedCardNumber: String(card), Record: true }, 200);

/** The newest event of the reader with that short message. */
async function eventOf(readerKey: string, message: string): Promise<any> {
  const list = await ok('GET', `/api/f/${I}/events?includeSubFolders=true&forKeys=${readerKey}&pageSize=10`, undefined, 200);
  const e = list.find((x: any) => x.MessageShort === message);
  expect(e, `no ${message} event of the reader`).toBeDefined();
  return e;
}

/** The text of the table of that accessible name. */
async function tableText(page: Page, name: string): Promise<string> {
  const table = await byRole(page, 'table', name);
  return table.evaluate((t) => (t as unknown as { innerText: string }).innerText);
}

const expectClean = async (page: Page, view: string) => {
  expect(await seriousViolations(page), `axe on ${view}`).toEqual([]);
  await screenshot(page, `live-${view}`);
};

if (!CHROMIUM) console.warn('console-live.test.ts skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

describe.skipIf(!CHROMIUM)('live events and alarms in the console', () => {
  let browser: Browser;
  let reader: any;
  let person: any;
  const card = 7_100_000 + Math.floor(Math.random() * 1_000_000);
  const unknownCard = card + 1;

  beforeAll(async () => {
    browser = await launchChromium();
    const made = await runAdmin(['create-instance', '--parent', admin.instanceName, '--name', login.instance]);
    expect(made.code, made.stderr).toBe(0);
    const user = await runAdmin(['create-user', '--instance', login.instance, '--name', login.userName, '--password', login.password, '--role', 'Administrator']);
    expect(user.code, user.stderr).toBe(0);
    token = await adminToken(url, { ...admin, instanceName: login.instance, userName: login.userName, password: login.password });
    I = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')).ins;
    const schedule = await ok('POST', `/api/f/${I}/schedules`, { $type: 'ScheduleInfo', CommonName: 'Always', IsAlways: true });
    reader = await ok('POST', `/api/f/${I}/readers`, { $type: 'VendorReaderInfo', CommonName: `Lobby reader ${suffix}` });
    const level = await ok('POST', `/api/f/${I}/accesslevels`, { $type: 'AccessLevelInfo', CommonName: 'Staff', AccessLevelEntries: [{ ReaderId: reader.Key, ScheduleId: schedule.Key }] });
    person = await ok('POST', `/api/f/${I}/people`, { $type: 'PersonInfo', CommonName: `Grace Hopper ${suffix}`, CardAssignments: [{ EncodedCardNumber: card, DisplayCardNumber: 'G-1' }] });
    await ok('POST', `/api/f/${I}/people/${person.Key}/connections/AccessLevel?relatedKey=${level.Key}`, undefined, 200);
    const alarm = await ok('POST', `/api/f/${I}/alarmdefinitions`, { $type: 'AlarmDefinitionInfo', CommonName: 'Denied reads' });
    await ok('PUT', `${alarm.Href}/collections/eventtypes`, DENIED_TYPE_HREF(I), 204);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('shows a card read live, raises and acknowledges an alarm with the keyboard, and explains a denial', async () => {
    const { page, watch } = await consolePage(browser, url);
    // The answers behind any "Failed to load resource" console error, to name them if one comes.
    const refused: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${r.url().slice(url.length)}`);
    });
    await page.goto(`${url}/console/`, { waitUntil: 'networkidle0' });
    await signIn(page, login);
    await byRole(page, 'table', 'Live events');
    // The live connection is subscribed before anything is recorded.
    await page.waitForFunction(`[...document.querySelectorAll('[role=status]')].some((s) => s.textContent === 'Live')`, { timeout: 10_000 });

    // A granted read: in the table within 2 s of the call.
    const started = Date.now();
    const shown = page.waitForFunction(
      `[...document.querySelectorAll('table.live-table tbody tr')].some((r) => r.innerText.includes('Access Granted') && r.innerText.includes(${JSON.stringify(reader.CommonName)}))`,
      { timeout: 2_000, polling: 'mutation' },
    );
    expect((await cardRead(reader.Key, card)).Granted).toBe(true);
    await shown;
    expect(Date.now() - started).toBeLessThan(2_000);
    await expectClean(page, 'events');

    // Minimum priority "High (20) and above" hides the granted read (10); "Any" shows it again.
    await page.select('select:has(option[value="20"])', '20');
    expect(await tableText(page, 'Live events')).not.toContain('Access Granted');
    await page.select('select:has(option[value="20"])', '0');
    // The text filter matches the person's name in the message.
    await fill(page, 'Filter text', person.CommonName, 'searchbox');
    expect(await tableText(page, 'Live events')).toContain('Access Granted');
    await fill(page, 'Filter text', 'no event says this', 'searchbox');
    expect(await tableText(page, 'Live events')).toContain('No event matches the filters');
    await fill(page, 'Filter text', '', 'searchbox');

    // Paused: an event is counted and held, shown on resume.
    await press(page, 'Pause');
    const before = await page.$$eval('table.live-table tbody tr', (rows) => rows.length);
    await cardRead(reader.Key, card);
    await page.waitForFunction(`document.querySelector('.live-summary').innerText.includes('Paused: 1 new event held')`, { timeout: 5_000 });
    expect(await page.$$eval('table.live-table tbody tr', (rows) => rows.length)).toBe(before);
    await press(page, 'Resume');
    await page.waitForFunction(`document.querySelectorAll('table.live-table tbody tr').length === ${before + 1}`, { timeout: 5_000 });

    // A denied read (a card nobody holds) raises an alarm: a tinted row, the navigation's count.
    await cardRead(reader.Key, unknownCard);
    await page.waitForFunction(`[...document.querySelectorAll('table.live-table tbody tr.p-high')].some((r) => r.innerText.includes('Access Denied'))`, { timeout: 5_000 });
    await page.waitForFunction(`document.querySelector('nav a[href="/console/alarms"] .badge')?.textContent.trim() === '1'`, { timeout: 5_000 });
    const denied = await eventOf(reader.Key, 'Access Denied');
    expect(denied.RequiresAcknowledgement).toBe(true);

    // Its detail: every field, the event data decoded, related objects as links, "Why?".
    await (await page.waitForSelector(`table.live-table a[href="/console/live/${denied.Key}"]`))!.click();
    const dialog = await byRole(page, 'dialog', 'Event detail');
    await page.waitForFunction(`document.querySelector('dialog .event-detail')?.innerText.includes('CardNotFound')`, { timeout: 5_000 });
    const detail = (await dialog.evaluate((d) => (d as unknown as { innerText: string }).innerText)) as string;
    for (const text of ['Access Denied', 'Event data', 'EncodedCardNumber', String(unknownCard), 'Related objects', denied.Key, 'Not acknowledged yet']) expect(detail).toContain(text);
    expect(await dialog.$(`a[href="/console/doors"]`)).not.toBeNull();
    await expectClean(page, 'event-detail');
    await press(page, 'Why?');
    const checks = await tableText(page, 'Decision checks');
    expect(checks).toMatch(/Card\s+Failed/);
    expect(await dialog.evaluate((d) => (d as unknown as { innerText: string }).innerText)).toContain('Denied: CardNotFound');
    await expectClean(page, 'event-detail-why');
    await press(page, 'Close');
    await page.waitForFunction(`location.pathname === '/console/live' && !document.querySelector('dialog[open]')`);

    // From here on the keyboard alone: Shift+Tab back to the navigation's "Alarms", Enter; Tab to
    // the alarm's "Acknowledge", Enter; type the comment, Tab, Enter.
    expect(await tabTo(page, `document.activeElement?.getAttribute('href') === '/console/alarms'`, true), 'Shift+Tab reaches Alarms').toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForFunction(`[...document.querySelectorAll('button[data-alarm]')].some((b) => b.dataset.alarm === ${JSON.stringify(denied.Key)})`, { timeout: 10_000 });
    expect(await tableText(page, 'Unacknowledged alarms')).toContain('Access Denied');
    await expectClean(page, 'alarms');

    const comment = `Checked the lobby camera ${suffix}`;
    const onButton = `document.activeElement?.dataset?.alarm === ${JSON.stringify(denied.Key)} && document.activeElement.textContent === 'Acknowledge'`;
    expect(await tabTo(page, onButton), 'Tab reaches the alarm\'s Acknowledge button').toBe(true);
    await page.keyboard.press('Enter');
    await byRole(page, 'dialog', 'Acknowledge alarm');
    await page.waitForFunction(`document.activeElement?.getAttribute('role') === 'textbox' || document.activeElement?.tagName === 'TEXTAREA'`);
    expect(await page.evaluate(`document.activeElement.labels[0].textContent`)).toBe('Comment');
    await expectClean(page, 'acknowledge-dialog');
    await page.keyboard.type(comment);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(`document.activeElement.tagName + ' ' + document.activeElement.textContent`)).toBe('BUTTON Acknowledge');
    await page.keyboard.press('Enter');

    await page.waitForFunction(`![...document.querySelectorAll('button[data-alarm]')].some((b) => b.dataset.alarm === ${JSON.stringify(denied.Key)})`, { timeout: 5_000 });
    expect(await tableText(page, 'Unacknowledged alarms')).not.toContain(denied.MessageLong);
    const acknowledged = await tableText(page, 'Acknowledged alarms');
    expect(acknowledged).toContain(comment);
    expect(acknowledged).toContain(login.userName);
    await page.waitForFunction(`!document.querySelector('nav a[href="/console/alarms"] .badge')`, { timeout: 5_000 });
    await expectClean(page, 'alarms-acknowledged');

    const read = await ok('GET', `/api/f/${I}/events/${denied.Key}`, undefined, 200);
    expect(read.AlarmAcknowledgements).toEqual([expect.objectContaining({ Comment: comment, AcknowledgedBy: login.userName })]);
    // Loaded afresh from its URL, the alarm's detail shows who acknowledged it, with the comment.
    await page.goto(`${url}/console/alarms/${denied.Key}`, { waitUntil: 'networkidle0' });
    const again = await byRole(page, 'dialog', 'Event detail');
    await page.waitForFunction(`document.querySelector('dialog .event-detail')?.innerText.includes(${JSON.stringify(comment)})`, { timeout: 10_000 });
    expect(await again.evaluate((d) => (d as unknown as { innerText: string }).innerText)).toContain(`${login.userName}, `);
    await page.keyboard.press('Escape');
    await page.waitForFunction(`location.pathname === '/console/alarms' && !document.querySelector('dialog[open]')`);
    expect(await tableText(page, 'Acknowledged alarms')).toContain(comment);

    // From 375 px wide: the same page, its table scrolled within its frame.
    await page.setViewport({ width: 375, height: 800 });
    await (await page.waitForSelector('nav a[href="/console/live"]'))!.click();
    await byRole(page, 'table', 'Live events');
    await expectClean(page, 'events-375');

    expectNothingWrong(watch, refused);
    await page.close();
  });
});

/** Presses Tab (or Shift+Tab) until `focused` (an expression run in the page) holds; false if it never does. */
async function tabTo(page: Page, focused: string, back = false): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (back) await page.keyboard.down('Shift');
    await page.keyboard.press('Tab');
    if (back) await page.keyboard.up('Shift');
    if ((await page.evaluate(focused)) === true) return true;
  }
  return false;
}

function expectNothingWrong(watch: PageWatch, refused: readonly string[]): void {
  expect(refused).toEqual([]);
  expect(watch.errors, refused.join('\n')).toEqual([]);
  expect(watch.failed).toEqual([]);
  expect(watch.foreign).toEqual([]);
}
