/**
 * The console's People pages in Chromium against the e2e runtime, in a child instance of its own
 * (an access level with a reader and an always-open schedule made through the API): an
 * administrator searches for nobody, creates a person with "New person" and "Save", adds a 64-bit
 * card (a number someone else holds is refused in an alert), gives the access level, sees the
 * reader under "Readers they can pass now", adds a note, sees a recorded card read among the
 * recent events, finds the person by name and by card number, and deactivates all their cards.
 * What the console saved is read back through the API, digit for digit. A ReadOnly user sees the
 * same person with no control that writes. axe-core on the list,
 * the person page and the add-card dialog; screenshots (one 375 px wide); no console error and no
 * request to another origin.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROMIUM, byRole, consolePage, fill, launchChromium, pageText, press, screenshot, seriousViolations, signIn } from '../support/console-browser.ts';
import { adminCommand } from '../support/admin-cli.ts';
import { adminToken } from '../support/runtime.ts';
import { documentedFetch } from '../support/documented-fetch.ts';

const url = inject('url');
const admin = inject('admin');
const runAdmin = adminCommand(inject('dataDir'), inject('runtimeDynamoEndpoint'));
const suffix = randomBytes(3).toString('hex');
const child = `ConsolePeople-${suffix}`;
const operator = { instance: child, userName: 'petra', password: `Petra-${randomBytes(6).toString('hex')}!1` };
const reader0 = { instance: child, userName: 'rita', password: `Rita-${randomBytes(6).toString('hex')}!1` };

/** Beyond 2^53: only a client that keeps every digit saves and finds it. */
const cardNumber = `90071992547${String(40993 + Math.floor(Math.random() * 50_000)).padStart(5, '0')}`;
const takenNumber = 7_000_000 + Math.floor(Math.random() * 1_000_000);
const surname = `Lovelace${suffix}`;
const commonName = `Ada ${surname}`;

let token: string;
let C: string;
let reader: { Key: string; CommonName: string };
let level: { Key: string; CommonName: string };
let later: { Key: string; CommonName: string };

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string; body: any }> {
  const res = await documentedFetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

async function made(path: string, body: unknown): Promise<any> {
  const r = await call('POST', path, body);
  expect(r.status, `POST ${path}: ${r.text}`).toBe(201);
  return r.body;
}

/** Waits until the page's text holds `text` (page expressions are strings: the tests compile without the DOM library). */
const waitText = (page: Page, text: string, timeout = 10_000) => page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(text)})`, { timeout });

/** Sets an input found by its label's text, as typing would (a date-time input's segments are locale-dependent). */
const setInput = (page: Page, label: string, value: string) =>
  page.evaluate(`{
    const input = [...document.querySelectorAll('label')].find((x) => x.textContent === ${JSON.stringify(label)}).control;
    input.value = ${JSON.stringify(value)};
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }`);

/** The table whose caption begins with `caption`, as a page expression. */
const tableOf = (caption: string) => `[...document.querySelectorAll('table')].find((t) => t.caption?.textContent?.startsWith(${JSON.stringify(caption)}))`;

/** The text of that table ('' while there is none). */
const tableText = (page: Page, caption: string) => page.evaluate(`${tableOf(caption)}?.innerText ?? ''`) as Promise<string>;

/** Waits until that table's text holds `text`. */
const waitInTable = (page: Page, caption: string, text: string, timeout = 10_000) =>
  page.waitForFunction(`(${tableOf(caption)}?.innerText ?? '').includes(${JSON.stringify(text)})`, { timeout });

/** The value of the textbox of that name. */
const valueOf = async (page: Page, name: string) => (await byRole(page, 'textbox', name)).evaluate((e) => (e as unknown as { value: string }).value);

if (!CHROMIUM) console.warn('console-people.test.ts skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

describe.skipIf(!CHROMIUM)('the console People pages in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    const instance = await runAdmin(['create-instance', '--parent', admin.instanceName, '--name', child]);
    expect(instance.code, instance.stderr).toBe(0);
    C = JSON.parse(instance.stdout).key;
    const user = await runAdmin(['create-user', '--instance', child, '--name', operator.userName, '--password', operator.password, '--role', 'Administrator']);
    expect(user.code, user.stderr).toBe(0);
    const reading = await runAdmin(['create-user', '--instance', child, '--name', reader0.userName, '--password', reader0.password, '--role', 'ReadOnly']);
    expect(reading.code, reading.stderr).toBe(0);
    token = await adminToken(url, admin);
    const schedule = await made(`/api/f/${C}/schedules`, { $type: 'ScheduleInfo', CommonName: 'Always', IsAlways: true });
    reader = await made(`/api/f/${C}/readers`, { $type: 'VendorReaderInfo', CommonName: `Front reader ${suffix}` });
    level = await made(`/api/f/${C}/accesslevels`, { $type: 'AccessLevelInfo', CommonName: `Staff ${suffix}`, AccessLevelEntries: [{ ReaderId: reader.Key, ScheduleId: schedule.Key }] });
    later = await made(`/api/f/${C}/accesslevels`, { $type: 'AccessLevelInfo', CommonName: `Contractors ${suffix}`, AccessLevelEntries: [{ ReaderId: reader.Key, ScheduleId: schedule.Key }] });
    await made(`/api/f/${C}/people`, { $type: 'PersonInfo', CommonName: `Holder ${suffix}`, CardAssignments: [{ EncodedCardNumber: takenNumber }] });
    // 21 people in all: a second page.
    await Promise.all(Array.from({ length: 20 }, (_, i) => made(`/api/f/${C}/people`, { $type: 'PersonInfo', CommonName: `Visitor ${String(i).padStart(2, '0')}` })));
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('creates a person with a card, a level and a note, finds them by name and card number, and deactivates their cards', async () => {
    const { page, watch } = await consolePage(browser, url);
    const refused: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) refused.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
    });
    await page.goto(`${url}/console/people`, { waitUntil: 'networkidle0' });
    await signIn(page, operator);
    await byRole(page, 'table', 'People');

    // Paging: 20 a page, then the 21st.
    const rows = () => page.evaluate(`${tableOf('People')}.tBodies[0].rows.length`) as Promise<number>;
    await waitInTable(page, 'People', 'Visitor');
    expect(await rows()).toBe(20);
    await press(page, 'Next page');
    await page.waitForFunction(`location.search === '?page=1'`);
    await page.waitForFunction(`${tableOf('People')}.tBodies[0].rows.length === 1`);
    await press(page, 'Previous page');
    await page.waitForFunction(`${tableOf('People')}.tBodies[0].rows.length === 20`);

    // Nobody yet: a search finds no one.
    await fill(page, 'Search people', 'nobody-at-all', 'searchbox');
    await press(page, 'Search');
    await waitText(page, 'Nobody found for “nobody-at-all”.');
    expect(new URL(page.url()).search).toBe('?q=nobody-at-all');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'people-list');

    // A new person: the common name follows the names typed.
    await press(page, 'New person');
    // Without a name: refused on the page, nothing sent.
    await press(page, 'Save');
    expect(await (await page.waitForSelector('[role="alert"]'))!.evaluate((e) => e.textContent)).toMatch(/needs a name/);
    await fill(page, 'Given name', 'Ada');
    await fill(page, 'Surname', surname);
    expect(await valueOf(page, 'Common name')).toBe(commonName);
    await press(page, 'Add address');
    await fill(page, 'Email', 'ada@example.com');
    await press(page, 'Save');
    await page.waitForFunction(`/^\\/console\\/people\\/[0-9a-f]{24}$/.test(location.pathname)`);
    await waitText(page, `${commonName} was created.`);
    const personKey = new URL(page.url()).pathname.split('/').pop()!;
    await byRole(page, 'heading', commonName);

    // A card someone else holds: refused, in an alert inside the dialog.
    await press(page, 'Add card');
    const dialog = await byRole(page, 'dialog', 'Add card');
    await fill(page, 'Card number', String(takenNumber));
    await press(page, 'Save card');
    const refusal = await page.waitForSelector('dialog [role="alert"]');
    expect(await refusal!.evaluate((e) => e.textContent)).toMatch(/already|assigned/i);
    // The 64-bit card of their own.
    await fill(page, 'Card number', cardNumber);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'people-add-card');
    await press(page, 'Save card');
    await waitText(page, `Card ${cardNumber} added.`);
    expect(await dialog.evaluate((d) => (d as unknown as { isConnected: boolean }).isConnected)).toBe(false);
    expect(await tableText(page, 'Cards of')).toMatch(new RegExp(`${cardNumber}\\s+Always\\s+Active`));

    // The access level: the reader becomes passable now.
    await (await byRole(page, 'combobox', 'Access level')).select(level.Key);
    await press(page, 'Add access level');
    await waitText(page, `${level.CommonName} given.`);
    await byRole(page, 'link', level.CommonName);
    await waitInTable(page, 'Readers they can pass now', reader.CommonName);
    // A second level that starts next year: held, listed, not applying yet.
    const nextYear = new Date().getFullYear() + 1;
    await (await byRole(page, 'combobox', 'Access level')).select(later.Key);
    await setInput(page, 'Given from', `${nextYear}-01-01T09:00`);
    await press(page, 'Add access level');
    await waitText(page, `${later.CommonName} given (from`);
    expect(await tableText(page, 'Access levels of')).toMatch(new RegExp(`${later.CommonName}\\s+from .*${nextYear}.*\\s+Not started`));

    // A note.
    await fill(page, 'Note', 'Badge photo taken at the front desk.');
    await press(page, 'Add note');
    await waitText(page, 'Note added.');
    await waitText(page, 'Badge photo taken at the front desk.');

    // A card read recorded through the API shows among the recent events (live).
    const read = await call('POST', `/api/f/${C}/accessdecisions`, `{"ReaderKey": "${reader.Key}", "EncodedCardNumber": ${cardNumber}, "Record": true}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ Granted: true, Person: { Key: personKey } });
    await waitInTable(page, 'Recent events', 'Access Granted');

    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'people-person');
    await page.setViewport({ width: 375, height: 800 });
    await screenshot(page, 'people-person-375');
    // Wide tables scroll inside their frame: the page itself is no wider than the screen.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(375);
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewport({ width: 1280, height: 900 });

    // What the console saved is what the API holds.
    const held = await call('GET', `/api/f/${C}/people/${personKey}`);
    expect(held.status).toBe(200);
    expect(held.body).toMatchObject({ GivenName: 'Ada', Surname: surname, CommonName: commonName, Addresses: [{ MailTo: 'ada@example.com' }] });
    expect(held.text).toContain(`"EncodedCardNumber":${cardNumber}`);
    expect(held.body.CardAssignments).toHaveLength(1);
    expect(held.body.CardAssignments[0].IsDisabled).toBe(false);
    expect(held.body.ObjectLinks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Relation: 'AccessLevel', LinkedObjectKey: level.Key }),
        expect.objectContaining({ Relation: 'ScheduledAccessLevel', LinkedObjectKey: later.Key, MetaDataBson: expect.any(String) }),
      ]),
    );
    expect(held.body.Notes.map((n: { NoteText: string }) => n.NoteText)).toEqual(['Badge photo taken at the front desk.']);

    // Found by a part of the name, any case, and by the card number.
    for (const q of [surname.toLowerCase().slice(0, 10), cardNumber]) {
      await (await byRole(page, 'link', 'People')).click();
      await fill(page, 'Search people', q, 'searchbox');
      await press(page, 'Search');
      await byRole(page, 'link', commonName);
    }
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'people-found');

    // Deactivate all cards: every card disabled, on the page and in the API.
    await press(page, commonName, 'link');
    await byRole(page, 'heading', commonName);
    await press(page, 'Deactivate all cards');
    await byRole(page, 'dialog', 'Deactivate all cards?');
    await (await page.waitForSelector('dialog button.danger'))!.click();
    await waitText(page, 'All 1 card deactivated.');
    expect(await tableText(page, 'Cards of')).toMatch(/Disabled/);
    const after = await call('GET', `/api/f/${C}/people/${personKey}/cards`);
    expect(after.body.map((c: { IsDisabled?: boolean }) => c.IsDisabled)).toEqual([true]);
    // The reader is no longer passable.
    await waitInTable(page, 'Readers they can pass now', 'None now.');

    // A save after the sections' writes carries the current version: no conflict.
    await fill(page, 'Given name', 'Augusta Ada');
    expect(await valueOf(page, 'Common name')).toBe(`Augusta Ada ${surname}`);
    await press(page, 'Save');
    await waitText(page, 'Saved.');
    const renamed = await call('GET', `/api/f/${C}/people/${personKey}`);
    expect(renamed.body).toMatchObject({ GivenName: 'Augusta Ada', CommonName: `Augusta Ada ${surname}` });
    expect(renamed.text).toContain(`"EncodedCardNumber":${cardNumber}`);
    expect(renamed.body.CardAssignments[0].IsDisabled).toBe(true);

    // Someone else saves the person meanwhile (the text read, edited: every digit kept): the
    // console's next save is refused with 409, shown, and overwrites nothing.
    const theirs = renamed.text.replace(`"Surname":"${surname}"`, `"Surname":"${surname}-x"`);
    expect((await call('PUT', `/api/f/${C}/people/${personKey}`, theirs)).status).toBe(200);
    await fill(page, 'Given name', 'Ada');
    await press(page, 'Save');
    await page.waitForFunction(`[...document.querySelectorAll('[role="alert"]')].some((a) => a.textContent.includes('Someone else changed this person'))`);
    expect((await call('GET', `/api/f/${C}/people/${personKey}`)).body).toMatchObject({ GivenName: 'Augusta Ada', Surname: `${surname}-x` });
    await page.reload({ waitUntil: 'networkidle0' });
    await byRole(page, 'heading', `Augusta Ada ${surname}`);

    // Enable the card again and give it a facility code; its number keeps every digit.
    await press(page, `Enable card ${cardNumber}`);
    await waitText(page, `Card ${cardNumber} enabled.`);
    await press(page, `Edit card ${cardNumber}`);
    await byRole(page, 'dialog', `Edit card ${cardNumber}`);
    await fill(page, 'Facility code', '21');
    await press(page, 'Save card');
    await waitText(page, `Card ${cardNumber} saved.`);
    expect(await tableText(page, 'Cards of')).toMatch(new RegExp(`${cardNumber}\\s+21\\s+Always\\s+Active`));
    const edited = await call('GET', `/api/f/${C}/people/${personKey}/cards`);
    expect(edited.text).toContain(`"EncodedCardNumber":${cardNumber}`);
    expect(edited.body).toMatchObject([{ FacilityCode: 21, IsDisabled: false }]);

    // The later level's dates cleared: it becomes a plain AccessLevel connection.
    await press(page, `Change dates of ${later.CommonName}`);
    await byRole(page, 'dialog', `Dates of ${later.CommonName}`);
    await setInput(page, 'From', '');
    await press(page, 'Save dates');
    await waitText(page, `${later.CommonName}: always.`);
    expect(await tableText(page, 'Access levels of')).toMatch(new RegExp(`${later.CommonName}\\s+Always\\s+Applies`));
    const links = (await call('GET', `/api/f/${C}/people/${personKey}`)).body.ObjectLinks.filter((l: { LinkedObjectKey: string }) => l.LinkedObjectKey === later.Key);
    expect(links.map((l: { Relation: string }) => l.Relation)).toEqual(['AccessLevel']);

    expect(await pageText(page)).not.toContain('undefined');
    // The errors the browser logs: the refused card and save (409).
    expect(refused).toEqual([`POST /api/f/${C}/people/${personKey}/cards 409`, `PUT /api/f/${C}/people/${personKey} 409`]);
    expect(watch.errors.filter((e) => !/status of 409/.test(e))).toEqual([]);
    expect(watch.failed).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  }, 120_000);

  it('shows a ReadOnly user the people and their cards without a control that writes', async () => {
    // A browser context of its own (consolePage makes one): the other test's session cookie stays out.
    const { page, watch } = await consolePage(browser, url);
    await page.goto(`${url}/console/people`, { waitUntil: 'networkidle0' });
    await signIn(page, reader0);
    await press(page, `Holder ${suffix}`, 'link');
    await waitInTable(page, 'Cards of', String(takenNumber));
    const text = await pageText(page);
    for (const control of ['New person', 'Add card', 'Deactivate all cards', 'Add access level', 'Add note', 'Delete person']) expect(text).not.toContain(control);
    expect(await page.$('form button[type="submit"]')).toBeNull();
    expect(await (await byRole(page, 'textbox', 'Common name')).evaluate((e) => (e as unknown as { disabled: boolean }).disabled)).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'people-person-read-only');
    expect(watch.errors).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  }, 60_000);
});
