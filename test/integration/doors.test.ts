/**
 * Doors on DynamoDB Local (issue 37): lockdown of a folder or an instance and everything below it
 * (decisions deny ReaderLockedDown except LockdownExempt cards, unlocks refused), a reader's mode
 * around its Until, the momentary unlock by call and by the original service's command, the door
 * status, their events, and the refusals by role and scope.
 */
import { deserialize, serialize, type Document } from 'bson';
import { beforeAll, describe, expect, it } from 'vitest';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

const T = (name: string) => `Acme.${name}, Acme`;
const bson = (doc: Document): string => Buffer.from(serialize(doc)).toString('base64');

let t: TestDb;
let api: Awaited<ReturnType<typeof setupApi>>['api'];
let root: Tenant;
let child: Tenant;
let sibling: Tenant;
let I: string;
let next = 820_000;
const freshCard = () => next++;

async function make(coll: string, body: Record<string, unknown>, folder = I, token = root.tokens.Administrator): Promise<any> {
  const res = await api.post(`/api/f/${folder}/${coll}`, { token, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const connect = async (coll: string, key: string, relation: string, relatedKey: string, folder = I, token = root.tokens.Administrator) => {
  const res = await api.post(`/api/f/${folder}/${coll}/${key}/connections/${relation}`, { token, query: { relatedKey, isOneToOne: false } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
};

const decide = (body: Record<string, unknown>, folder = I, token = root.tokens.ReadOnly) => api.post(`/api/f/${folder}/accessdecisions`, { token, body });

/** The newest event related to an object (lastevent, then the event). */
async function lastEventOf(key: string, token = root.tokens.ReadOnly): Promise<any> {
  const last = await api.post(`/api/f/${I}/lastevent`, { token, body: [key] });
  expect(last.status).toBe(200);
  if (last.body.length === 0) return undefined;
  const e = await api.get(`/api/f/${I}/events/${last.body[0].EventKey}`, { token });
  expect(e.status).toBe(200);
  return e.body;
}

const dataOf = (e: any): Document => deserialize(Buffer.from(e.EventDataBsonBase64, 'base64'));

let always: any;

/** A folder with a door and two readers in it (each granted to `level` with an always schedule), and the level. */
async function building(name: string, parent = I, token = root.tokens.Administrator) {
  const folder = await make('folders', { $type: 'FolderInfo', CommonName: name }, parent, token);
  const sched = token === root.tokens.Administrator ? always : await make('schedules', { $type: T('ScheduleInfo'), CommonName: 'Always', IsAlways: true }, parent, token);
  const door = await make('doors', { $type: T('DoorInfo'), CommonName: `${name} door` }, folder.Key, token);
  const readers = [];
  for (const [i, grant] of [[1, 5], [2, 7]] as const) {
    const r = await make('readers', { $type: T('VendorReaderInfo'), CommonName: `${name} reader ${i}`, NormalGrantAccessTime: grant }, folder.Key, token);
    await connect('readers', r.Key, 'Door', door.Key, folder.Key, token);
    readers.push(r);
  }
  const level = await make('accesslevels', { $type: T('AccessLevelInfo'), CommonName: `${name} staff` }, parent, token);
  for (const r of readers) await connect('accesslevels', level.Key, 'Reader', r.Key, parent, token);
  await connect('accesslevels', level.Key, 'Schedule', sched.Key, parent, token);
  return { folder, door, readers, level };
}

async function holder(card: Record<string, unknown>, level: string, folder = I, token = root.tokens.Administrator): Promise<any> {
  const p = await make('people', { $type: T('PersonInfo'), CommonName: `Holder ${card.EncodedCardNumber}`, CardAssignments: [card] }, folder, token);
  await connect('people', p.Key, 'AccessLevel', level, folder, token);
  return p;
}

beforeAll(async () => {
  t = await createTestDb();
  let deps;
  ({ api, deps, root } = await setupApi(t));
  I = root.instance.key;
  child = await seedTenant(t, deps, { parent: root.instance });
  sibling = await seedTenant(t, deps);
  always = await make('schedules', { $type: T('ScheduleInfo'), CommonName: 'Always', IsAlways: true });
});

describe('lockdown', () => {
  it('locks down every reader below a folder with one item, denies ReaderLockedDown except LockdownExempt cards, and ends', async () => {
    const b = await building('Tower');
    const sub = await make('folders', { $type: 'FolderInfo', CommonName: 'Tower floor 2' }, b.folder.Key);
    const deep = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Deep reader' }, sub.Key);
    await connect('accesslevels', b.level.Key, 'Reader', deep.Key);
    const n = freshCard();
    const exempt = freshCard();
    const plain = await holder({ EncodedCardNumber: n }, b.level.Key);
    const exemptHolder = await holder({ EncodedCardNumber: exempt, LockdownExempt: true }, b.level.Key);
    for (const r of [...b.readers, deep]) expect((await decide({ ReaderKey: r.Key, EncodedCardNumber: n })).body.Reason).toBe('Granted');

    const started = await api.post(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.Operator, body: { Reason: 'Fire drill' } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body).toMatchObject({
      InEffect: true,
      Folder: { Key: b.folder.Key, CommonName: 'Tower' },
      Lockdown: { Folder: { Key: b.folder.Key, CommonName: 'Tower', Href: `/api/f/${b.folder.Key}` }, Reason: 'Fire drill', StartedBy: expect.any(String) },
    });
    // The very next decision anywhere below: denied, with the folder named; an exempt card passes.
    for (const r of [...b.readers, deep]) {
      const d = await decide({ ReaderKey: r.Key, EncodedCardNumber: n });
      expect(d.body).toMatchObject({ Granted: false, Reason: 'ReaderLockedDown' });
      expect(d.body.Message).toContain('Tower');
      expect((await decide({ ReaderKey: r.Key, EncodedCardNumber: exempt })).body).toMatchObject({ Granted: true, Reason: 'Granted' });
    }
    // The troubleshooting calls see it as the decisions do: only the exempt card passes.
    const who = await api.get(`/api/f/${I}/readers/${b.readers[0].Key}/whocanpass`, { token: root.tokens.ReadOnly });
    expect(who.body.map((r: any) => r.Person.Key)).toEqual([exemptHolder.Key]);
    expect((await api.get(`/api/f/${I}/people/${plain.Key}/accessiblereaders`, { token: root.tokens.ReadOnly })).body).toEqual([]);
    // GET there and below: in effect, started by Tower.
    const below = await api.get(`/api/f/${sub.Key}/lockdown`, { token: root.tokens.ReadOnly });
    expect(below.status).toBe(200);
    expect(below.body).toMatchObject({ InEffect: true, Folder: { Key: sub.Key }, Lockdown: { Folder: { Key: b.folder.Key }, Reason: 'Fire drill' } });
    // A second start answers the lockdown in effect, publishing nothing more.
    const again = await api.post(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.Administrator, body: { Reason: 'Again' } });
    expect(again.status).toBe(200);
    expect(again.body.Lockdown.Reason).toBe('Fire drill');

    // The event: Lockdown Started, highest priority, requiring acknowledgement.
    const ev = await lastEventOf(b.folder.Key);
    expect(ev).toMatchObject({
      MessageShort: 'Lockdown Started',
      AppKey: '000000000000000000000021',
      EventTypeMoniker: { Namespace: 'MercuryService', Nickname: 'lockdown-started' },
      RequiresAcknowledgement: true,
      InFolderKey: b.folder.Key,
      Priority: 50,
    });
    expect(dataOf(ev)).toMatchObject({ Folder: { Key: b.folder.Key, CommonName: 'Tower' }, Reason: 'Fire drill' });

    // Ending: Administrator only, and only where it started.
    expect((await api.del(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.Operator })).status).toBe(403);
    const wrongPlace = await api.del(`/api/f/${sub.Key}/lockdown`, { token: root.tokens.Administrator });
    expect(wrongPlace.status).toBe(404);
    expect(wrongPlace.body.Error).toBe('NotLockedDown');
    const ended = await api.del(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.Administrator });
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    expect(ended.body).toMatchObject({ InEffect: false, Lockdown: null });
    expect(await lastEventOf(b.folder.Key)).toMatchObject({ MessageShort: 'Lockdown Ended', EventTypeMoniker: { Nickname: 'lockdown-ended' }, RequiresAcknowledgement: false });
    for (const r of [...b.readers, deep]) expect((await decide({ ReaderKey: r.Key, EncodedCardNumber: n })).body.Reason).toBe('Granted');
    expect((await api.get(`/api/f/${I}/people/${plain.Key}/accessiblereaders`, { token: root.tokens.ReadOnly })).body).toHaveLength(3);
    expect((await api.get(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.ReadOnly })).body).toMatchObject({ InEffect: false, Lockdown: null });
  });

  it('locks down an instance and the instances below it; the child sees it without the parent\'s folder or user', async () => {
    const kid = await building('Kid hall', child.instance.key, child.tokens.Administrator);
    const n = freshCard();
    await holder({ EncodedCardNumber: n }, kid.level.Key, child.instance.key, child.tokens.Administrator);
    const ask = () => decide({ ReaderKey: kid.readers[0].Key, EncodedCardNumber: n }, child.instance.key, child.tokens.ReadOnly);
    expect((await ask()).body.Reason).toBe('Granted');
    // The child locks itself down: a lockdown of an instance.
    expect((await api.post(`/api/f/${child.instance.key}/lockdown`, { token: child.tokens.Operator, body: { Reason: 'Child' } })).status).toBe(201);
    expect((await ask()).body.Reason).toBe('ReaderLockedDown');
    expect((await api.del(`/api/f/${child.instance.key}/lockdown`, { token: child.tokens.Administrator })).status).toBe(200);
    expect((await ask()).body.Reason).toBe('Granted');

    // A child folder locked down does not lock its parent's readers.
    const mine = await building('Parent hall');
    const m = freshCard();
    await holder({ EncodedCardNumber: m }, mine.level.Key);
    expect((await api.post(`/api/f/${kid.folder.Key}/lockdown`, { token: child.tokens.Operator, body: { Reason: 'Kid only' } })).status).toBe(201);
    expect((await decide({ ReaderKey: mine.readers[0].Key, EncodedCardNumber: m })).body.Reason).toBe('Granted');
    expect((await api.del(`/api/f/${kid.folder.Key}/lockdown`, { token: child.tokens.Administrator })).status).toBe(200);

    // The parent locks down the child instance: the child's readers are locked, and the child sees it.
    expect((await api.post(`/api/f/${child.instance.key}/lockdown`, { token: root.tokens.Operator, body: { Reason: 'Parent order' } })).status).toBe(201);
    expect((await ask()).body.Reason).toBe('ReaderLockedDown');
    const seen = await api.get(`/api/f/${kid.folder.Key}/lockdown`, { token: child.tokens.ReadOnly });
    expect(seen.body).toMatchObject({ InEffect: true, Lockdown: { Reason: 'Parent order' } });
    // The child cannot end what its parent... can: the lockdown sits on the child instance, which is the child's own folder.
    expect((await api.del(`/api/f/${child.instance.key}/lockdown`, { token: root.tokens.Administrator })).status).toBe(200);
    expect((await ask()).body.Reason).toBe('Granted');
  });

  it('writes one item whatever the number of readers below, and costs a decision no more requests', async () => {
    const costOf = async (readerCount: number) => {
      const folder = await make('folders', { $type: 'FolderInfo', CommonName: `Readers ${readerCount}` });
      const readers: any[] = [];
      for (let i = 0; i < readerCount; i++) readers.push(await make('readers', { $type: T('VendorReaderInfo'), CommonName: `R${i}` }, folder.Key));
      const before = t.calls.length;
      const { result } = await commandsOf(t, () => api.post(`/api/f/${folder.Key}/lockdown`, { token: root.tokens.Operator, body: { Reason: 'Count' } }));
      expect(result.status).toBe(201);
      const calls = t.calls.slice(before);
      await decide({ ReaderKey: readers[readerCount - 1].Key, EncodedCardNumber: freshCard() });
      // Warm (the reader and its instance kept): the card index beside the reader's state.
      const decision = await commandsOf(t, () => decide({ ReaderKey: readers[readerCount - 1].Key, EncodedCardNumber: freshCard() }));
      expect(decision.result.body.Reason).toBe('ReaderLockedDown');
      return { puts: calls.filter((c) => c.command === 'PutItem').length, writeUnits: calls.reduce((n, c) => n + c.write, 0), decisionRequests: decision.commands.length };
    };
    const few = await costOf(2);
    const many = await costOf(40);
    // The lockdown item (PutItem) beside the event's publish (one BatchWriteItem of the event and its pointer).
    expect(many.puts).toBe(1);
    expect(many.writeUnits).toBe(few.writeUnits);
    expect(many.decisionRequests).toBe(few.decisionRequests);
    expect(many.decisionRequests).toBe(2);
  });

  it('refuses by role, scope and body, writing nothing', async () => {
    const b = await building('Refusals');
    expect((await api.post(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.ReadOnly, body: { Reason: 'x' } })).status).toBe(403);
    expect((await api.post(`/api/f/${b.folder.Key}/lockdown`, { token: sibling.tokens.Administrator, body: { Reason: 'x' } })).status).toBe(403);
    expect((await api.post(`/api/f/${b.folder.Key}/lockdown`, { token: child.tokens.Administrator, body: { Reason: 'x' } })).status).toBe(403);
    expect((await api.get(`/api/f/${b.folder.Key}/lockdown`, { token: sibling.tokens.ReadOnly })).status).toBe(403);
    for (const body of [{}, { Reason: '' }, { Reason: 3 }, { Reason: 'ok', Extra: 1 }]) {
      const r = await api.post(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.Operator, body });
      expect(r.status).toBe(400);
      expect(r.body.Error).toBe('ValidationFailed');
    }
    expect((await api.get(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.ReadOnly })).body.InEffect).toBe(false);
    expect(await lastEventOf(b.folder.Key)).toBeUndefined();
  });
});

describe('reader mode', () => {
  it('sets a mode until an instant: decisions before Until see it, after it the normal mode, with no job', async () => {
    const b = await building('Lobby');
    const n = freshCard();
    await holder({ EncodedCardNumber: n }, b.level.Key);
    const r = b.readers[0];
    const until = new Date(Date.now() + 3_600_000);
    const put = await api.put(`/api/f/${b.folder.Key}/readers/${r.Key}/mode`, { token: root.tokens.Operator, body: { AccessMethod: 5, Until: until.toISOString() } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ Door: { Key: b.door.Key } });
    expect(put.body.Readers).toContainEqual({ Reader: expect.objectContaining({ Key: r.Key }), AccessMethod: 0, EffectiveAccessMethod: 5, Until: until.toISOString() });
    // Before Until: free access with no card; after it: the card is decided again.
    const before = await decide({ ReaderKey: r.Key, EncodedCardNumber: freshCard(), At: new Date(until.getTime() - 1000).toISOString() });
    expect(before.body).toMatchObject({ Granted: true, Reason: 'FreeAccess' });
    const after = await decide({ ReaderKey: r.Key, EncodedCardNumber: freshCard(), At: new Date(until.getTime() + 1000).toISOString() });
    expect(after.body.Reason).toBe('CardNotFound');
    const atUntil = await decide({ ReaderKey: r.Key, EncodedCardNumber: n, At: until.toISOString() });
    expect(atUntil.body.Reason).toBe('Granted');

    const ev = await lastEventOf(r.Key);
    expect(ev).toMatchObject({ MessageShort: 'Reader Mode Changed', EventTypeMoniker: { Namespace: 'MercuryService', Nickname: 'reader-mode-changed' } });
    expect(dataOf(ev)).toMatchObject({ Reader: { Key: r.Key }, From: 0, To: 5, Until: until, By: expect.any(String) });

    // Card and PIN, with no end; then reset.
    const pin = await api.put(`/api/f/${b.folder.Key}/readers/${r.Key}/mode`, { token: root.tokens.Administrator, body: { AccessMethod: 2 } });
    expect(pin.status).toBe(200);
    expect((await decide({ ReaderKey: r.Key, EncodedCardNumber: n })).body.Reason).toBe('InvalidPin');
    expect(dataOf(await lastEventOf(r.Key))).toMatchObject({ From: 5, To: 2, Until: null });
    const reset = await api.put(`/api/f/${b.folder.Key}/readers/${r.Key}/mode`, { token: root.tokens.Operator, body: { AccessMethod: null } });
    expect(reset.status).toBe(200);
    expect(reset.body.Readers.find((x: any) => x.Reader.Key === r.Key)).toMatchObject({ AccessMethod: 0, EffectiveAccessMethod: 0, Until: null });
    expect((await decide({ ReaderKey: r.Key, EncodedCardNumber: n })).body.Reason).toBe('Granted');
    expect(dataOf(await lastEventOf(r.Key))).toMatchObject({ From: 2, To: 0 });

    // Locked down (6) by mode: denied except exempt cards.
    await api.put(`/api/f/${b.folder.Key}/readers/${r.Key}/mode`, { token: root.tokens.Operator, body: { AccessMethod: 6 } });
    expect((await decide({ ReaderKey: r.Key, EncodedCardNumber: n })).body.Reason).toBe('ReaderLockedDown');
    await api.put(`/api/f/${b.folder.Key}/readers/${r.Key}/mode`, { token: root.tokens.Operator, body: { AccessMethod: null } });
  });

  it('refuses bad bodies, ReadOnly and other scopes, writing nothing', async () => {
    const b = await building('Mode refusals');
    const r = b.readers[0];
    const put = (body: unknown, token = root.tokens.Operator, folder = b.folder.Key) => api.put(`/api/f/${folder}/readers/${r.Key}/mode`, { token, body });
    for (const body of [{ AccessMethod: 1 }, { AccessMethod: 7 }, { AccessMethod: '5' }, {}, { AccessMethod: 5, Until: '2030-01-01T00:00:00' }, { AccessMethod: 5, Until: '2020-01-01T00:00:00Z' }, { AccessMethod: null, Until: '2099-01-01T00:00:00Z' }, { AccessMethod: 5, X: 1 }]) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.Error).toBe('ValidationFailed');
    }
    expect((await put({ AccessMethod: 5 }, root.tokens.ReadOnly)).status).toBe(403);
    expect((await put({ AccessMethod: 5 }, sibling.tokens.Administrator)).status).toBe(403);
    expect((await put({ AccessMethod: 5 }, child.tokens.Administrator, child.instance.key)).status).toBe(404);
    expect(await lastEventOf(r.Key)).toBeUndefined();
    const status = await api.get(`/api/f/${b.folder.Key}/doors/${b.door.Key}/status`, { token: root.tokens.ReadOnly });
    expect(status.body.Readers.every((x: any) => x.EffectiveAccessMethod === 0)).toBe(true);
  });
});

describe('momentary unlock and door status', () => {
  it('unlocks a door for its readers\' grant time by default, publishes Door Unlocked, and answers the status', async () => {
    const b = await building('Gate');
    const res = await api.post(`/api/f/${b.folder.Key}/doors/${b.door.Key}/unlock`, { token: root.tokens.Operator, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ Door: { Key: b.door.Key, CommonName: 'Gate door', Href: b.door.Href }, LockedDown: null });
    expect(res.body.Readers.map((x: any) => x.Reader.Key).sort()).toEqual(b.readers.map((r: any) => r.Key).sort());
    const until = Date.parse(res.body.UnlockedUntil);
    expect(until - Date.now()).toBeGreaterThan(4_000);
    expect(until - Date.now()).toBeLessThanOrEqual(7_000);
    const ev = await lastEventOf(b.door.Key);
    expect(ev).toMatchObject({ MessageShort: 'Door Unlocked', EventTypeMoniker: { Namespace: 'MercuryService', Nickname: 'door-unlocked' }, InFolderKey: b.folder.Key });
    expect(dataOf(ev)).toMatchObject({ Door: { Key: b.door.Key }, Seconds: 7, By: expect.any(String) });
    expect(dataOf(ev).Readers).toHaveLength(2);
    const status = await api.get(`/api/f/${b.folder.Key}/doors/${b.door.Key}/status`, { token: root.tokens.ReadOnly });
    expect(status.body).toMatchObject({ LastEvent: { Key: ev.Key, CommonName: 'Door Unlocked' }, UnlockedUntil: res.body.UnlockedUntil });
    // Seconds given.
    const long = await api.post(`/api/f/${b.folder.Key}/doors/${b.door.Key}/unlock`, { token: root.tokens.Administrator, body: { Seconds: 600 } });
    expect(Date.parse(long.body.UnlockedUntil) - Date.now()).toBeGreaterThan(590_000);
  });

  it('refuses a door under lockdown (409 LockedDown, nothing published), bad Seconds, ReadOnly and other scopes', async () => {
    const b = await building('Vault');
    const unlock = (body: unknown, token = root.tokens.Operator, folder = b.folder.Key) => api.post(`/api/f/${folder}/doors/${b.door.Key}/unlock`, { token, body });
    for (const Seconds of [0, 3601, 1.5, '5']) {
      const r = await unlock({ Seconds });
      expect(r.status).toBe(400);
      expect(r.body.Error).toBe('ValidationFailed');
    }
    expect((await unlock({}, root.tokens.ReadOnly)).status).toBe(403);
    expect((await unlock({}, sibling.tokens.Administrator)).status).toBe(403);
    expect((await unlock({}, child.tokens.Administrator, child.instance.key)).status).toBe(404);
    expect((await api.get(`/api/f/${b.folder.Key}/doors/${b.door.Key}/status`, { token: sibling.tokens.ReadOnly })).status).toBe(403);
    expect(await lastEventOf(b.door.Key)).toBeUndefined();

    expect((await api.post(`/api/f/${I}/lockdown`, { token: root.tokens.Operator, body: { Reason: 'Whole site' } })).status).toBe(201);
    try {
      const refused = await unlock({ Seconds: 10 });
      expect(refused.status).toBe(409);
      expect(refused.body.Error).toBe('LockedDown');
      const status = await api.get(`/api/f/${b.folder.Key}/doors/${b.door.Key}/status`, { token: root.tokens.ReadOnly });
      expect(status.body).toMatchObject({ LockedDown: { Folder: { Key: I }, Reason: 'Whole site' }, UnlockedUntil: null, LastEvent: null });
      expect(status.body.Readers.every((x: any) => x.EffectiveAccessMethod === 6 && x.AccessMethod === 0)).toBe(true);
    } finally {
      expect((await api.del(`/api/f/${I}/lockdown`, { token: root.tokens.Administrator })).status).toBe(200);
    }
    expect(await lastEventOf(b.door.Key)).toBeUndefined();
  });

  it('carries out mercury:command-unlockDoor posted to the sink, by Door or by a Reader of the door', async () => {
    const b = await building('Command gate');
    const command = (related: unknown[], data: Document | null) => ({
      $type: 'EventMessagePosting',
      OccurredOn: new Date().toISOString(),
      AppKey: 'MercuryCommands',
      EventTypeMoniker: { Namespace: 'MercuryServiceCommands', Nickname: 'mercury:command-unlockDoor' },
      RelatedObjects: related,
      EventDataBsonBase64: data ? bson(data) : null,
    });
    const sink = (body: unknown, token = root.tokens.Operator) => api.post(`/api/f/${I}/eventmessagesink`, { token, body });
    const byDoor = await sink(command([{ Relation: 'Door', LinkedObjectKey: b.door.Key, Href: b.door.Href }], { Duration: 30 }));
    expect(byDoor.status, JSON.stringify(byDoor.body)).toBe(201);
    const ev = await lastEventOf(b.door.Key);
    expect(ev).toMatchObject({ MessageShort: 'Door Unlocked' });
    expect(dataOf(ev)).toMatchObject({ Seconds: 30 });
    expect(ev.ObjectLinks).toContainEqual(expect.objectContaining({ Relation: 'Command', LinkedObjectKey: byDoor.body.Key }));

    const byReader = await sink(command([{ Relation: 'Reader', LinkedObjectKey: b.readers[1].Key, Href: b.readers[1].Href }], null));
    expect(byReader.status).toBe(201);
    expect(dataOf(await lastEventOf(b.door.Key))).toMatchObject({ Seconds: 7 });

    const none = await sink(command([], null));
    expect(none.status).toBe(400);
    expect(none.body.Error).toBe('InvalidCommand');
    const bad = await sink(command([{ Relation: 'Door', LinkedObjectKey: b.door.Key }], { Duration: 0 }));
    expect(bad.status).toBe(400);
    expect(bad.body.Error).toBe('InvalidEventData');

    // Under a lockdown: 409 and nothing stored, not even the command.
    expect((await api.post(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.Operator, body: { Reason: 'No entry' } })).status).toBe(201);
    const before = await lastEventOf(b.door.Key);
    const locked = await sink(command([{ Relation: 'Door', LinkedObjectKey: b.door.Key }], null));
    expect(locked.status).toBe(409);
    expect(locked.body.Error).toBe('LockedDown');
    expect((await lastEventOf(b.door.Key)).Key).toBe(before.Key);
    expect((await api.del(`/api/f/${b.folder.Key}/lockdown`, { token: root.tokens.Administrator })).status).toBe(200);
  });
});
