/**
 * The console's Doors, Schedules and Access levels pages in Chromium against the e2e runtime, in a
 * child instance of their own (a folder, a door with its reader, a second reader, schedules, a
 * level, a person with a card who may pass), every control found by role and accessible name:
 * "Unlock" unlocks the door (its status and last event say so through the API), "Set mode" with an
 * "Until" sets the reader's mode until then, "Lock down" (confirmed in a dialog) locks the folder
 * down and "End lockdown" ends it (the API and the table agree), "Who can pass now" lists the
 * person; changes made through the API show without a reload; a schedule's week window is edited with the keyboard and saved, a level gains a
 * reader × schedule pair and a new level is created; the API reads back each change. axe-core
 * finds nothing serious on each page and dialog, a screenshot of each is kept (one 375 px wide),
 * and the page logs no error and calls no other origin.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, ElementHandle, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROMIUM, byRole, consolePage, fill, launchChromium, pageText, press, screenshot, seriousViolations, signIn } from '../support/console-browser.ts';
import { adminCommand } from '../support/admin-cli.ts';
import { adminToken } from '../support/runtime.ts';
import { waitFor } from '../support/webhook-receiver.ts';
import { e2eCalls } from '../support/e2e-calls.ts';

const url = inject('url');
const admin = inject('admin');
const runAdmin = adminCommand(inject('dataDir'), inject('runtimeDynamoEndpoint'));
const unique = (p: string) => `${p}-${randomBytes(3).toString('hex')}`;

const instanceName = unique('ConsoleDoors');
const login = { instance: instanceName, userName: 'dora', password: `D0ra!${randomBytes(8).toString('base64url')}` };
/** An Operator of the instance: may lock down, may not end a lockdown. */
const operator = { instance: instanceName, userName: 'otto', password: `0tto!${randomBytes(8).toString('base64url')}` };
let token: string;
let I: string;

const { ok } = e2eCalls(url, () => token);

const names = { folder: unique('Building'), door: unique('Front door'), reader: unique('Front reader'), side: unique('Side reader'), person: unique('Ada Lovelace') };
let folder: any;
let door: any;
let reader: any;
let side: any;
let always: any;
let office: any;
let level: any;

if (!CHROMIUM) console.warn('console-doors.test.ts skipped: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

/** The open dialog of that name. */
const dialogNamed = (page: Page, name: string) => byRole(page, 'dialog', name);

/** The control of a role and name inside `scope` (a dialog, a group). */
function within(scope: ElementHandle, role: string, name: string, timeout = 10_000): Promise<ElementHandle> {
  return scope.waitForSelector(`::-p-aria(${name}[role="${role}"])`, { timeout }) as Promise<ElementHandle>;
}

/** The input of that accessible name inside `scope`: date and time pickers have no ARIA role to select them by. */
async function inputNamed(scope: ElementHandle, name: string): Promise<ElementHandle> {
  for (const el of await scope.$$(`::-p-aria(${name})`)) if (await el.evaluate((e) => e.nodeName === 'INPUT')) return el;
  throw new Error(`no input named ${name}`);
}

/** A console page signed in as `as` (the browser's refresh cookie may already hold a session, someone else's or theirs). */
async function signedIn(browser: Browser, as = login): Promise<Awaited<ReturnType<typeof consolePage>> & { refused: string[] }> {
  const opened = await consolePage(browser, url);
  // Every answer of 400 or more (the browser logs each as a console error), to tell which calls they were.
  const refused: string[] = [];
  opened.page.on('response', (r) => {
    if (r.status() >= 400) refused.push(`${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
  });
  await opened.page.goto(`${url}/console/`, { waitUntil: 'networkidle0' });
  if (!(await opened.page.$('::-p-aria(Sign in[role="button"])'))) {
    const who = (await opened.page.$eval('.top-bar .who', (e) => e.textContent ?? '')) as string;
    if (who.startsWith(`${as.userName} `)) return { ...opened, refused };
    await press(opened.page, 'Sign out');
  }
  await signIn(opened.page, as);
  return { ...opened, refused };
}

/**
 * The page logged no error but those of the refusals a test provokes (the browser logs each
 * refused call as a console error); a first visit without a session makes no call that fails.
 */
function expectNoError(watch: { readonly errors: string[] }, refused: readonly string[], provoked: readonly string[] = []): void {
  expect(refused.filter((r) => !provoked.includes(r))).toEqual([]);
  const statuses = refused.map((r) => r.split(' ').pop());
  expect(watch.errors.filter((e) => !statuses.some((status) => e.includes(`status of ${status}`)))).toEqual([]);
}

/** Waits until the page's text matches. */
async function waitForText(page: Page, pattern: RegExp, timeout = 10_000): Promise<void> {
  const found = await waitFor(async () => pattern.test(await pageText(page)), timeout);
  expect(found, `page text matching ${pattern}:\n${await pageText(page)}`).toBe(true);
}

/** The text of the status line (role=status) once it matches. */
async function statusSays(page: Page, pattern: RegExp): Promise<void> {
  const found = await waitFor(async () => {
    const texts = (await page.$$eval('main [role="status"]', (els) => els.map((e) => e.textContent ?? ''))) as string[];
    return texts.some((t) => pattern.test(t));
  }, 10_000);
  const alerts = (await page.$$eval('[role="alert"]', (els) => els.map((e) => e.textContent ?? ''))) as string[];
  expect(found, `a status matching ${pattern} (alerts: ${alerts.join(' | ')})`).toBe(true);
}

/** Sets an input's value the way typing does (an `input` event): for date and time pickers. */
async function setValue(input: ElementHandle, value: string): Promise<void> {
  await input.evaluate((el, v) => {
    const i = el as unknown as { value: string; dispatchEvent(e: unknown): boolean };
    i.value = v;
    i.dispatchEvent(new (globalThis as any).Event('input', { bubbles: true }));
  }, value);
}

/** Chooses an option of a select by its value (a change event, as a person's choice makes), once the option is there. */
async function choose(select: ElementHandle, value: string): Promise<void> {
  await select.waitForSelector(`option[value="${value}"]`);
  expect(await select.select(value)).toEqual([value]);
}

beforeAll(async () => {
  const made = await runAdmin(['create-instance', '--parent', admin.instanceName, '--name', instanceName]);
  expect(made.code, made.stderr).toBe(0);
  const user = await runAdmin(['create-user', '--instance', instanceName, '--name', login.userName, '--password', login.password, '--role', 'Administrator']);
  expect(user.code, user.stderr).toBe(0);
  const op = await runAdmin(['create-user', '--instance', instanceName, '--name', operator.userName, '--password', operator.password, '--role', 'Operator']);
  expect(op.code, op.stderr).toBe(0);
  token = await adminToken(url, { instanceName, userName: login.userName, password: login.password, clientSecret: admin.clientSecret });
  I = (await ok('GET', '/api', undefined, 200)).Key;
  folder = await ok('POST', `/api/f/${I}/folders`, { $type: 'FolderInfo', CommonName: names.folder });
  door = await ok('POST', `/api/f/${folder.Key}/doors`, { $type: 'DoorInfo', CommonName: names.door });
  reader = await ok('POST', `/api/f/${folder.Key}/readers`, { $type: 'VendorReaderInfo', CommonName: names.reader });
  side = await ok('POST', `/api/f/${folder.Key}/readers`, { $type: 'VendorReaderInfo', CommonName: names.side });
  await ok('POST', `/api/f/${folder.Key}/readers/${reader.Key}/connections/Door?relatedKey=${door.Key}`, undefined, 200);
  always = await ok('POST', `/api/f/${I}/schedules`, { $type: 'ScheduleInfo', CommonName: unique('Always'), IsAlways: true });
  office = await ok('POST', `/api/f/${I}/schedules`, {
    $type: 'ScheduleInfo',
    CommonName: unique('Office hours'),
    ScheduleDurations: [{ DayMask: 0b0111110, StartingAt: '08:00:00', Duration: '10:00:00' }],
  });
  level = await ok('POST', `/api/f/${I}/accesslevels`, { $type: 'AccessLevelInfo', CommonName: unique('Staff'), AccessLevelEntries: [{ ReaderId: reader.Key, ScheduleId: always.Key }] });
  const person = await ok('POST', `/api/f/${I}/people`, { $type: 'PersonInfo', CommonName: names.person, CardAssignments: [{ EncodedCardNumber: 7_100_000 + Math.floor(Math.random() * 100_000), DisplayCardNumber: 'A-1' }] });
  await ok('POST', `/api/f/${I}/people/${person.Key}/connections/AccessLevel?relatedKey=${level.Key}`, undefined, 200);
}, 90_000);

describe.skipIf(!CHROMIUM)('the Doors, Schedules and Access levels pages in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('unlocks a door, sets a reader mode until an instant, locks a folder down and ends it, and lists who can pass', async () => {
    const { page, watch, refused } = await signedIn(browser);
    await press(page, 'Doors', 'link');
    await byRole(page, 'table', 'Doors');
    await waitForText(page, new RegExp(`${names.reader}\\s+Card only`));
    expect(await pageText(page)).toContain(names.door);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'doors');

    // Unlock: the door's status and its last event say so; the row shows it (from the answer, then live).
    await press(page, 'Unlock');
    await statusSays(page, new RegExp(`${names.door} is unlocked`));
    const unlocked = await ok('GET', `/api/f/${folder.Key}/doors/${door.Key}/status`, undefined, 200);
    expect(unlocked.LastEvent).toMatchObject({ CommonName: 'Door Unlocked' });
    expect(Date.parse(unlocked.UnlockedUntil)).toBeGreaterThan(Date.now() - 10_000);
    await waitForText(page, /Door Unlocked/);

    // Who can pass now: the person with the level.
    await press(page, 'Who can pass now');
    const who = await dialogNamed(page, `Who can pass ${names.reader} now`);
    await within(who, 'table', 'Who can pass now');
    await within(who, 'link', names.person);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'doors-who-can-pass');
    await (await within(who, 'button', 'Close')).click();

    // A mode until an instant two hours away (the browser's local time in the picker).
    await press(page, 'Set mode');
    const mode = await dialogNamed(page, `Mode of ${names.reader}`);
    await choose(await within(mode, 'combobox', 'Mode'), '5');
    const until = new Date(Math.ceil((Date.now() + 2 * 3_600_000) / 60_000) * 60_000);
    const local = (await page.evaluate(`(() => { const d = new Date(${until.getTime()}); const p = (n) => String(n).padStart(2, '0');
      return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()); })()`)) as string;
    await setValue(await inputNamed(mode, 'Until'), local);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'doors-set-mode');
    await (await within(mode, 'button', 'Set mode')).click();
    await statusSays(page, new RegExp(`${names.reader} is now Unlocked \\(free passage\\) until`));
    const moded = await ok('GET', `/api/f/${folder.Key}/doors/${door.Key}/status`, undefined, 200);
    expect(moded.Readers[0]).toMatchObject({ Reader: { Key: reader.Key }, AccessMethod: 0, EffectiveAccessMethod: 5 });
    expect(Date.parse(moded.Readers[0].Until)).toBe(until.getTime());
    await waitForText(page, /Unlocked \(free passage\) until .*\(normally Card only\)/);

    // Lock down the folder (confirmed, with a reason), then end it.
    await choose(await byRole(page, 'combobox', 'Folder'), folder.Key);
    await byRole(page, 'heading', `Lockdown of ${names.folder}`);
    await waitForText(page, /No lockdown is in effect here/);
    await press(page, 'Lock down');
    const confirm = await dialogNamed(page, `Lock down ${names.folder}?`);
    await (await within(confirm, 'textbox', 'Reason')).type('Fire drill');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'doors-lock-down');
    await (await within(confirm, 'button', 'Lock down')).click();
    await statusSays(page, new RegExp(`${names.folder} is locked down`));
    expect(await ok('GET', `/api/f/${folder.Key}/lockdown`, undefined, 200)).toMatchObject({ InEffect: true, Lockdown: { Folder: { Key: folder.Key }, Reason: 'Fire drill' } });
    await waitForText(page, new RegExp(`Locked down \\(${names.folder}\\)`));
    expect((await ok('GET', `/api/f/${folder.Key}/doors/${door.Key}/status`, undefined, 200)).LockedDown).toMatchObject({ Reason: 'Fire drill' });
    await screenshot(page, 'doors-locked-down');

    await press(page, 'End lockdown');
    await statusSays(page, new RegExp(`lockdown of ${names.folder} has ended`));
    expect(await ok('GET', `/api/f/${folder.Key}/lockdown`, undefined, 200)).toMatchObject({ InEffect: false, Lockdown: null });
    await waitForText(page, /No lockdown is in effect here/);
    expect(await pageText(page)).not.toMatch(new RegExp(`Locked down \\(${names.folder}\\)`));

    // Live: a change made elsewhere (here through the API) shows without a reload.
    await ok('PUT', `/api/f/${folder.Key}/readers/${reader.Key}/mode`, { AccessMethod: null }, 200);
    await waitForText(page, new RegExp(`${names.reader}\\s+Card only`));
    await ok('POST', `/api/f/${folder.Key}/lockdown`, { Reason: 'Started elsewhere' });
    await waitForText(page, new RegExp(`Locked down since .* by ${login.userName}: Started elsewhere`));
    await waitForText(page, new RegExp(`Locked down \\(${names.folder}\\)`));
    await ok('DELETE', `/api/f/${folder.Key}/lockdown`, undefined, 200);
    await waitForText(page, /No lockdown is in effect here/);

    // 375 px wide: still usable, still clean.
    await page.setViewport({ width: 375, height: 800 });
    await byRole(page, 'table', 'Doors');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'doors-375');

    expectNoError(watch, refused);
    expect(watch.failed).toEqual([]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('edits a schedule week window with the keyboard and saves it', async () => {
    const { page, watch, refused } = await signedIn(browser);
    await press(page, 'Schedules', 'link');
    await byRole(page, 'table', 'Schedules');
    await waitForText(page, /Mon, Tue, Wed, Thu, Fri 08:00–18:00/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'schedules');

    await press(page, office.CommonName, 'link');
    const window1 = await byRole(page, 'group', 'Window 1');
    // Saturday on, with the keyboard: focus the checkbox, press Space.
    const saturday = await within(window1, 'checkbox', 'Saturday');
    await saturday.focus();
    await page.keyboard.press('Space');
    await setValue(await inputNamed(window1, 'Start'), '09:30');
    const hours = await within(window1, 'spinbutton', 'Duration hours');
    await hours.click({ count: 3 });
    await page.keyboard.type('9');
    await (await within(window1, 'checkbox', 'Type 2')).click();
    await waitForText(page, /Mon, Tue, Wed, Thu, Fri, Sat 09:30–18:30; holidays of type 2/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'schedule-week');
    await press(page, 'Save');
    await statusSays(page, new RegExp(`${office.CommonName} is saved`));
    const [saved] = (await ok('POST', `/api/f/${I}/search`, { _t: 'Schedule', Key: office.Key }, 200)) as any[];
    expect(saved.ScheduleDurations).toEqual([{ DayMask: 0b1111110, StartingAt: '09:30:00', Duration: '09:00:00', HolidayExceptions: 2 }]);

    // A new schedule: a name, its first window as offered, a second one on Sunday night; Save moves to its own URL.
    await press(page, 'All schedules', 'link');
    await press(page, 'New schedule', 'link');
    const name = unique('Night cleaning');
    await fill(page, 'Name', name);
    await press(page, 'Add window');
    const window2 = await byRole(page, 'group', 'Window 2');
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday']) await (await within(window2, 'checkbox', day)).click();
    await (await within(window2, 'checkbox', 'Sunday')).click();
    await setValue(await inputNamed(window2, 'Start'), '22:00');
    const fourHours = await within(window2, 'spinbutton', 'Duration hours');
    await fourHours.click({ count: 3 });
    await page.keyboard.type('4');
    await waitForText(page, /Sun 22:00–02:00 \(next day\)/);
    await press(page, 'Save');
    await byRole(page, 'heading', name);
    const key = new URL(page.url()).pathname.split('/').pop()!;
    const [made] = (await ok('POST', `/api/f/${I}/search`, { _t: 'Schedule', Key: key }, 200)) as any[];
    expect(made).toMatchObject({
      CommonName: name,
      IsAlways: false,
      ScheduleDurations: [
        { DayMask: 0b0111110, StartingAt: '08:00:00', Duration: '10:00:00', HolidayExceptions: 0 },
        { DayMask: 0b0000001, StartingAt: '22:00:00', Duration: '04:00:00', HolidayExceptions: 0 },
      ],
    });

    expectNoError(watch, refused);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('adds a reader × schedule pair to a level, and creates a level', async () => {
    const { page, watch, refused } = await signedIn(browser);
    await press(page, 'Access levels', 'link');
    await byRole(page, 'table', 'Access levels');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'access-levels');

    await press(page, level.CommonName, 'link');
    await byRole(page, 'table', 'Readers and schedules');
    await waitForText(page, new RegExp(`${names.reader}\\s+${always.CommonName}`));
    await choose(await byRole(page, 'combobox', 'Reader'), side.Key);
    await choose(await byRole(page, 'combobox', 'Schedule'), office.Key);
    await press(page, 'Add reader and schedule');
    await waitForText(page, new RegExp(`${names.side}\\s+${office.CommonName}`));
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'access-level');
    await press(page, 'Save');
    await statusSays(page, new RegExp(`${level.CommonName} is saved`));
    const got = await ok('GET', `/api/f/${I}/accesslevels/${level.Key}`, undefined, 200);
    expect(got.AccessLevelEntries.map((e: any) => [e.ReaderId, e.ScheduleId])).toEqual([
      [reader.Key, always.Key],
      [side.Key, office.Key],
    ]);

    // A new level: name, one pair, Save; the page moves to the level's own URL.
    await press(page, 'All access levels', 'link');
    await press(page, 'New access level', 'link');
    await choose(await byRole(page, 'combobox', 'Reader'), side.Key);
    await choose(await byRole(page, 'combobox', 'Schedule'), always.Key);
    await press(page, 'Add reader and schedule');
    // A name taken already: the API's refusal reads in an alert, and nothing is made.
    await fill(page, 'Name', level.CommonName);
    await press(page, 'Save');
    const refusal = await page.waitForSelector('main [role="alert"]');
    expect(await refusal!.evaluate((e) => e.textContent)).toContain(`An object named "${level.CommonName}" already exists`);
    expect(new URL(page.url()).pathname).toBe('/console/access-levels/new');
    const name = unique('Night shift');
    await fill(page, 'Name', name);
    await press(page, 'Save');
    await byRole(page, 'heading', name);
    const key = new URL(page.url()).pathname.split('/').pop()!;
    const made = await ok('GET', `/api/f/${I}/accesslevels/${key}`, undefined, 200);
    expect(made).toMatchObject({ CommonName: name, AccessLevelEntries: [{ ReaderId: side.Key, ScheduleId: always.Key }] });

    expectNoError(watch, refused, [`POST /api/f/${I}/accesslevels 409`]);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });

  it('lets an Operator lock a folder down with the keyboard, and leaves ending it to an administrator', async () => {
    const { page, watch, refused } = await signedIn(browser, operator);
    await press(page, 'Doors', 'link');
    await choose(await byRole(page, 'combobox', 'Folder'), folder.Key);
    await waitForText(page, /No lockdown is in effect here/);
    // Keyboard only: focus "Lock down", Enter opens the dialog, type the reason, Enter confirms.
    await (await byRole(page, 'button', 'Lock down')).focus();
    await page.keyboard.press('Enter');
    const confirm = await dialogNamed(page, `Lock down ${names.folder}?`);
    await (await within(confirm, 'textbox', 'Reason')).focus();
    await page.keyboard.type('Intruder alert');
    await page.keyboard.press('Enter');
    await statusSays(page, new RegExp(`${names.folder} is locked down`));
    expect(await ok('GET', `/api/f/${folder.Key}/lockdown`, undefined, 200)).toMatchObject({ InEffect: true, Lockdown: { Reason: 'Intruder alert', StartedBy: operator.userName } });
    await waitForText(page, /Only an administrator can end a lockdown/);
    expect(await page.$('::-p-aria(End lockdown[role="button"])')).toBeNull();
    // The door cannot be unlocked meanwhile.
    expect(await (await byRole(page, 'button', 'Unlock')).evaluate((b) => (b as unknown as { disabled: boolean }).disabled)).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'doors-operator-locked-down');

    // An administrator ends it (here through the API): the Operator's page follows live.
    await ok('DELETE', `/api/f/${folder.Key}/lockdown`, undefined, 200);
    await waitForText(page, /No lockdown is in effect here/);

    expectNoError(watch, refused);
    expect(watch.foreign).toEqual([]);
    await page.close();
  });
});
