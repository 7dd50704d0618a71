/**
 * Acting on doors (issue 37): lockdown of a folder or instance and everything below it, a
 * reader's mode (possibly until an instant), a door's momentary unlock, and a door's status.
 *
 * Where the state lives (shared/db/door-state.ts): one item per locked folder (a lockdown of a
 * folder holding 1,000 readers is one write), one item per reader whose mode was set, one per
 * door unlocked. A decision reads the lockdown items of the reader's folders and the reader's
 * mode item by key, in one BatchGetItem started beside its card lookup (`readerState`): no wave
 * more than the decision already makes, and a lockdown or a mode applies to the very next one.
 *
 * Every action publishes an event of the built-in `MercuryService` app (builtin-apps.ts) in the
 * folder it acted on, live on the WebSocket, MQTT and webhooks as any event.
 */
import { connectedToPage } from '../db/access-reads.ts';
import { lastEventOf } from '../db/event-reads.ts';
import { putEvent } from '../db/events-repo.ts';
import { deleteLockdown, putLockdown, readUnlock, writeMode, writeUnlock, type LockdownRecord } from '../db/door-state.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { getObject, ownInstance } from '../db/objects-repo.ts';
import { encodeBson } from '../bson-writer.ts';
import { ApiError, conflict, notFound, validationFailed } from '../errors.ts';
import { builtinTypeInAlarm } from '../events/builtin-alarms.ts';
import { doorEventType, type DoorEventNickname } from '../events/builtin-apps.ts';
import { parseInstant } from '../events/posting.ts';
import { eventWrite } from '../events/publish.ts';
import { eventHref } from '../events/event-render.ts';
import { newKey, type Placement } from '../model/placement.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { typeTag } from '../model/type-tags.ts';
import { authorName, loadFolder, missIn, requireRole } from '../objects/tenant-scope.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { outOfScope } from '../objects/object-errors.ts';
import type { AccessMethod, ObjectRef } from './decision.ts';
import { inCallerScope, readerIn } from './decisions.ts';
import { loadReader, refOf, type LoadedReader } from './facts.ts';
import { modeAt, setModeActive } from './modes.ts';
import { lockdownFolderRef, readerState, statesOf } from './reader-state.ts';

/** The access methods a mode may be set to (issue 36: card only, card and PIN, unlocked, locked down). */
const SETTABLE = new Set([0, 2, 5, 6]);

// ---------------------------------------------------------------------------------------------
// Answers.

/**
 * A lockdown as an answer names it. Started above the caller's scope (by an instance above the
 * caller's), its folder and the user are not named (tenant isolation: the reason is the one thing
 * meant for everyone below).
 */
function renderLockdown(ctx: Ctx, r: LockdownRecord): Record<string, unknown> {
  const visible = r.folder === ctx.principal.instanceKey || r.path.includes(ctx.principal.instanceKey);
  return {
    Folder: visible ? lockdownFolderRef(r) : null,
    StartedOn: r.startedOn,
    StartedBy: visible ? r.startedBy : 'Parent instance',
    Reason: r.reason,
  };
}

/** `LockdownStatusInfo`: whether a lockdown is in effect at a folder, and the one that started it (the outermost). */
function renderLockdownStatus(ctx: Ctx, folder: StoredObject, lockdown: LockdownRecord | null): Record<string, unknown> {
  return {
    $type: typeTag(ctx.ns, 'LockdownStatusInfo'),
    Folder: refOf(folder),
    InEffect: lockdown !== null,
    Lockdown: lockdown ? renderLockdown(ctx, lockdown) : null,
  };
}

/** Where a folder's own lockdown items are looked for: the folders above it and itself. */
const chainOf = (folder: StoredObject): string[] => [...folder.path, folder.key];

// ---------------------------------------------------------------------------------------------
// Events.

const named = (r: ObjectRef | null): { Key: string; CommonName: string | null } | null => (r ? { Key: r.Key, CommonName: r.CommonName } : null);
const link = (relation: string, r: ObjectRef) => ({ $type: 'ObjectLinkItem', Href: r.Href, LinkedObjectKey: r.Key, CommonName: r.CommonName, Relation: relation, MetaDataBson: null });

interface DoorEvent {
  readonly nickname: DoorEventNickname;
  readonly placement: Placement;
  readonly short: string;
  readonly long: string;
  readonly links: readonly ReturnType<typeof link>[];
  readonly data: Record<string, unknown>;
}

/** Publishes an event of the built-in `MercuryService` app (as a card read's result is published). */
async function publishDoorEvent(ctx: Ctx, retentionDays: number, e: DoorEvent): Promise<void> {
  const { app, type, requiresAck } = doorEventType(e.nickname, e.placement.instances[0] ?? e.placement.folder);
  const m = (type.doc.Monikers as { Namespace: string; Nickname: string }[])[0]!;
  const w = eventWrite({
    key: newKey(),
    placement: e.placement,
    appKey: app.key,
    eventTypeKey: type.key,
    eventTypeMoniker: { Namespace: m.Namespace, Nickname: m.Nickname },
    occurredOn: ctx.now,
    publishedOn: ctx.now,
    priority: type.doc.Priority as number,
    requiresAcknowledgement: requiresAck || (await builtinTypeInAlarm(ctx.db, type.key, e.placement.instances)),
    messageLong: e.long,
    messageShort: e.short,
    objectLinks: e.links,
    eventDataBsonBase64: Buffer.from(encodeBson(e.data)).toString('base64'),
    retentionDays,
  });
  await putEvent(ctx.db, w);
}

/** The placement of an event about a folder-like object: in that folder. */
const inFolder = (f: StoredObject): Placement => ({ folder: f.key, path: chainOf(f), instances: f.instances });
/** The placement of an event about an object: in the object's folder. */
const besideObject = (o: StoredObject): Placement => ({ folder: o.folder, path: o.path, instances: o.instances });

const by = (ctx: Ctx, o: StoredObject): string => authorName(ctx, ownInstance(o));

// ---------------------------------------------------------------------------------------------
// Lockdown.

/** The lockdown in effect at a folder: the outermost of its own and those above it, or null. */
async function lockdownAt(ctx: Ctx, folder: StoredObject): Promise<LockdownRecord | null> {
  const { lockdownOf } = await statesOf(ctx, [], chainOf(folder));
  return lockdownOf(chainOf(folder))?.record ?? null;
}

/** The body of `POST …/lockdown`: `{ Reason }` (1 to 1,000 characters), nothing else. */
function parseReason(body: unknown): string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw validationFailed('The body must be an object { Reason }.');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => k !== 'Reason' && k !== '$type');
  if (unknown) throw validationFailed(`Unknown field ${unknown}: a lockdown has Reason.`);
  if (typeof b.Reason !== 'string' || b.Reason.trim() === '' || b.Reason.length > 1000) throw validationFailed('Reason must be a string of 1 to 1000 characters.');
  return b.Reason;
}

/**
 * `POST /api/f/<folder>/lockdown`: locks down every reader in the folder (or instance) and below
 * it with one PutItem. A folder locked down already answers its lockdown (200) and publishes
 * nothing more; a new one answers 201 and publishes "Lockdown Started".
 */
export async function startLockdown(ctx: Ctx, retentionDays: number, folderKey: string, body: unknown): Promise<{ created: boolean; body: Record<string, unknown> }> {
  requireRole(ctx, 'Operator', 'lock down doors');
  const reason = parseReason(body);
  const folder = await loadFolder(ctx, folderKey);
  const record: LockdownRecord = {
    folder: folder.key,
    folderName: typeof folder.doc.CommonName === 'string' ? folder.doc.CommonName : null,
    path: folder.path,
    instances: folder.instances,
    startedOn: ctx.now.toISOString(),
    startedBy: by(ctx, folder),
    reason,
  };
  const created = await putLockdown(ctx.db, record);
  if (created) {
    const ref = refOf(folder);
    await publishDoorEvent(ctx, retentionDays, {
      nickname: 'lockdown-started',
      placement: inFolder(folder),
      short: 'Lockdown Started',
      long: `Lockdown Started of ${ref.CommonName ?? ref.Key} and everything below it by ${record.startedBy}: ${reason}`,
      links: [link('Folder', ref)],
      data: { Folder: named(ref), Reason: reason, By: record.startedBy, StartedOn: ctx.now },
    });
  }
  return { created, body: renderLockdownStatus(ctx, folder, await lockdownAt(ctx, folder)) };
}

/**
 * `DELETE /api/f/<folder>/lockdown` (Administrator): ends the lockdown this folder started
 * ("Lockdown Ended"). 404 `NotLockedDown` when it started none (a lockdown above it is ended
 * where it started).
 */
export async function endLockdown(ctx: Ctx, retentionDays: number, folderKey: string): Promise<Record<string, unknown>> {
  requireRole(ctx, 'Administrator', 'end a lockdown');
  const folder = await loadFolder(ctx, folderKey);
  const ended = await deleteLockdown(ctx.db, folder.key);
  if (!ended) {
    const above = await lockdownAt(ctx, folder);
    throw notFound(
      above ? `This folder started no lockdown; the one in effect here was started by folder ${above.folder}: end it there.` : 'No lockdown is in effect here.',
      'NotLockedDown',
    );
  }
  const ref = refOf(folder);
  const endedBy = by(ctx, folder);
  await publishDoorEvent(ctx, retentionDays, {
    nickname: 'lockdown-ended',
    placement: inFolder(folder),
    short: 'Lockdown Ended',
    long: `Lockdown Ended of ${ref.CommonName ?? ref.Key} by ${endedBy} (started ${ended.startedOn} by ${ended.startedBy}: ${ended.reason})`,
    links: [link('Folder', ref)],
    data: { Folder: named(ref), Reason: ended.reason, By: endedBy, StartedOn: new Date(ended.startedOn), EndedOn: ctx.now },
  });
  return renderLockdownStatus(ctx, folder, await lockdownAt(ctx, folder));
}

/** `GET /api/f/<folder>/lockdown`: whether a lockdown is in effect there, and which folder started it, when, by whom, why. */
export async function getLockdown(ctx: Ctx, folderKey: string): Promise<Record<string, unknown>> {
  const folder = await loadFolder(ctx, folderKey);
  return renderLockdownStatus(ctx, folder, await lockdownAt(ctx, folder));
}

// ---------------------------------------------------------------------------------------------
// Doors and their status.

/** The door `key` in the folder `folderKey` or below it: 403 outside the caller's scope, 404 when no such door is there. */
async function doorIn(ctx: Ctx, folderKey: string, key: string): Promise<StoredObject> {
  const door = isObjectKey(key) ? await getObject(ctx.db, key, true) : undefined;
  if (!door || door.collection !== 'doors' || !(door.folder === folderKey || door.path.includes(folderKey))) return missIn(ctx, folderKey);
  if (!inCallerScope(ctx, door)) throw outOfScope();
  return door;
}

/** The readers connected to a door (their `Door` connection), at most 100. */
async function readersOf(ctx: Ctx, door: StoredObject): Promise<LoadedReader[]> {
  const page = await connectedToPage(ctx.db, door.key, 'Door', 100);
  const loaded = await Promise.all(page.holders.map((h) => loadReader(ctx, h.from)));
  return loaded.filter((r): r is LoadedReader => r !== null && r.facts.door?.Key === door.key).sort((a, b) => a.reader.key.localeCompare(b.reader.key));
}

interface StatusParts {
  readonly door: StoredObject | null;
  readonly readers: readonly LoadedReader[];
}

/**
 * `DoorStatusInfo` of a door (or, for a reader without a door, of that reader alone): each
 * reader's normal `AccessMethod`, the `EffectiveAccessMethod` a decision sees now (its set mode
 * while it lasts; 6 under a lockdown) and the set mode's `Until`; the lockdown in effect; the
 * end of the last momentary unlock while it lasts; the newest event related to the door.
 */
async function statusOf(ctx: Ctx, parts: StatusParts): Promise<Record<string, unknown>> {
  const { door, readers } = parts;
  const [states, unlock, last] = await Promise.all([
    statesOf(
      ctx,
      readers.map((r) => r.reader),
      door ? door.path : [],
    ),
    door ? readUnlock(ctx.db, door.key) : Promise.resolve(undefined),
    door ? lastEventOf(ctx.db, door.key, ctx.principal.instanceKey, undefined, Math.floor(ctx.now.getTime() / 1000)) : Promise.resolve(undefined),
  ]);
  const lockdown = (door ? states.lockdownOf(door.path) : null) ?? readers.map((r) => states.of(r.reader).lockdown).find((l) => l !== null) ?? null;
  return {
    $type: typeTag(ctx.ns, 'DoorStatusInfo'),
    Door: door ? refOf(door) : null,
    Readers: readers.map((r) => {
      const s = states.of(r.reader);
      const effective = s.lockdown ? 6 : modeAt(r.facts.accessMethod, s.mode, ctx.now);
      return {
        Reader: r.facts.ref,
        AccessMethod: r.facts.accessMethod,
        EffectiveAccessMethod: effective,
        Until: setModeActive(s.mode, ctx.now) ? s.mode.until : null,
      };
    }),
    LockedDown: lockdown ? renderLockdown(ctx, lockdown.record) : null,
    UnlockedUntil: unlock && Date.parse(unlock.until) > ctx.now.getTime() ? unlock.until : null,
    LastEvent: last && door ? { Key: last.EventKey, CommonName: last.MessageShort, Href: eventHref(last.Folder ?? door.folder, last.EventKey) } : null,
  };
}

/** `GET /api/f/<folder>/doors/<key>/status`. */
export async function doorStatus(ctx: Ctx, folderKey: string, doorKey: string): Promise<Record<string, unknown>> {
  const door = await doorIn(ctx, folderKey, doorKey);
  return statusOf(ctx, { door, readers: await readersOf(ctx, door) });
}

// ---------------------------------------------------------------------------------------------
// Momentary unlock.

/** The body of `POST …/unlock`: `{ Seconds? }`, an integer from 1 to 3600. */
function parseSeconds(body: unknown): number | undefined {
  if (body === undefined || body === null || (typeof body === 'string' && body === '')) return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) throw validationFailed('The body must be an object { Seconds? }.');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => k !== 'Seconds' && k !== '$type');
  if (unknown) throw validationFailed(`Unknown field ${unknown}: an unlock has Seconds.`);
  return secondsOf(b.Seconds, (m) => validationFailed(m));
}

/** Seconds of an unlock (undefined: the default), 1 to 3600. */
export function secondsOf(v: unknown, error: (message: string) => ApiError): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 3600) throw error('Seconds must be an integer from 1 to 3600.');
  return n;
}

/** 409 `LockedDown` when a lockdown is in effect over the door or one of its readers. */
async function refuseUnderLockdown(ctx: Ctx, door: StoredObject, readers: readonly LoadedReader[]): Promise<void> {
  const states = await statesOf(
    ctx,
    readers.map((r) => r.reader),
    door.path,
  );
  const l = states.lockdownOf(door.path) ?? readers.map((r) => states.of(r.reader).lockdown).find((x) => x !== null);
  if (l) throw conflict('LockedDown', `The door is under the lockdown of folder ${l.record.folderName ?? l.folder}: it cannot be unlocked until the lockdown ends.`);
}

/** A door found for an unlock, with its readers, checked to be under no lockdown. */
export interface UnlockTarget {
  readonly door: StoredObject;
  readonly readers: readonly LoadedReader[];
}

/** The door and its readers, refused (409 LockedDown) under a lockdown. */
export async function unlockTarget(ctx: Ctx, door: StoredObject): Promise<UnlockTarget> {
  const readers = await readersOf(ctx, door);
  await refuseUnderLockdown(ctx, door, readers);
  return { door, readers };
}

/**
 * Unlocks a door for `seconds` (default: the longest `NormalGrantAccessTime` of its readers, 5
 * without one): records the unlock and publishes "Door Unlocked". `command`: the posting it came from.
 */
export async function carryOutUnlock(ctx: Ctx, retentionDays: number, t: UnlockTarget, seconds: number | undefined, command?: StoredObject): Promise<void> {
  const effective = seconds ?? (t.readers.length > 0 ? Math.max(...t.readers.map((r) => r.facts.normalGrantAccessTime)) : 5);
  const until = new Date(ctx.now.getTime() + effective * 1000).toISOString();
  const user = by(ctx, t.door);
  await writeUnlock(ctx.db, t.door.key, { until, seconds: effective, by: user });
  const ref = refOf(t.door);
  await publishDoorEvent(ctx, retentionDays, {
    nickname: 'door-unlocked',
    placement: besideObject(t.door),
    short: 'Door Unlocked',
    long: `Door Unlocked: ${ref.CommonName ?? ref.Key} for ${effective} s by ${user}`,
    links: [
      link('Door', ref),
      ...t.readers.map((r) => link('Reader', r.facts.ref)),
      ...(command ? [link('Command', { Key: command.key, CommonName: null, Href: eventHref(command.folder, command.key) })] : []),
    ],
    data: { Door: named(ref), Readers: t.readers.map((r) => named(r.facts.ref)), Seconds: effective, By: user },
  });
}

/** `POST /api/f/<folder>/doors/<key>/unlock` `{ Seconds? }`: answers the door's status. */
export async function unlockDoor(ctx: Ctx, retentionDays: number, folderKey: string, doorKey: string, body: unknown): Promise<Record<string, unknown>> {
  requireRole(ctx, 'Operator', 'unlock doors');
  const seconds = parseSeconds(body);
  const door = await doorIn(ctx, folderKey, doorKey);
  const target = await unlockTarget(ctx, door);
  await carryOutUnlock(ctx, retentionDays, target, seconds);
  return statusOf(ctx, { door, readers: target.readers });
}

/** The door a command names: a `Door` among its related objects, else the door of a related `Reader`. */
export async function doorOfCommand(ctx: Ctx, related: readonly { relation: string; key: string }[]): Promise<StoredObject | undefined> {
  for (const r of related.filter((x) => x.relation === 'door')) {
    const o = await getObject(ctx.db, r.key, true);
    if (o && o.collection === 'doors' && inCallerScope(ctx, o)) return o;
  }
  for (const r of related.filter((x) => x.relation === 'reader')) {
    const loaded = await loadReader(ctx, r.key);
    if (loaded?.door && inCallerScope(ctx, loaded.reader)) return loaded.door;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Reader mode.

/** The body of `PUT …/mode`: `{ AccessMethod: 0 | 2 | 5 | 6 | null, Until? }`, `Until` with a zone and later than now. */
function parseMode(body: unknown, now: Date): { accessMethod: AccessMethod; until: string | null } | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw validationFailed('The body must be an object { AccessMethod, Until? }.');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => k !== 'AccessMethod' && k !== 'Until' && k !== '$type');
  if (unknown) throw validationFailed(`Unknown field ${unknown}: a reader mode has AccessMethod and Until.`);
  if (!('AccessMethod' in b)) throw validationFailed('AccessMethod is required (null resets the reader to its normal mode).');
  if (b.AccessMethod === null) {
    if (b.Until !== undefined && b.Until !== null) throw validationFailed('Until needs an AccessMethod: a reset has none.');
    return null;
  }
  if (typeof b.AccessMethod !== 'number' || !SETTABLE.has(b.AccessMethod)) throw validationFailed('AccessMethod must be 0 (card only), 2 (card and PIN), 5 (unlocked), 6 (locked down) or null.');
  let until: string | null = null;
  if (b.Until !== undefined && b.Until !== null) {
    const d = parseInstant(b.Until, 'Until');
    if (d.getTime() <= now.getTime()) throw validationFailed('Until must be later than now.');
    until = d.toISOString();
  }
  return { accessMethod: b.AccessMethod as AccessMethod, until };
}

/**
 * `PUT /api/f/<folder>/readers/<key>/mode`: sets the reader's mode (until `Until`, when given) or
 * resets it (`AccessMethod: null`), publishes "Reader Mode Changed" and answers the status of the
 * reader's door (of the reader alone when it has no door).
 */
export async function setReaderMode(ctx: Ctx, retentionDays: number, folderKey: string, readerKey: string, body: unknown): Promise<Record<string, unknown>> {
  requireRole(ctx, 'Operator', 'change reader modes');
  const mode = parseMode(body, ctx.now);
  const loaded = await readerIn(ctx, folderKey, readerKey.toLowerCase());
  const before = await readerState(ctx, loaded);
  const from = modeAt(loaded.facts.accessMethod, before.mode, ctx.now);
  const user = by(ctx, loaded.reader);
  await writeMode(ctx.db, loaded.reader.key, loaded.reader.instances, mode ? { accessMethod: mode.accessMethod, until: mode.until, setOn: ctx.now.toISOString(), setBy: user } : null);
  const to = mode ? mode.accessMethod : loaded.facts.accessMethod;
  const ref = loaded.facts.ref;
  await publishDoorEvent(ctx, retentionDays, {
    nickname: 'reader-mode-changed',
    placement: besideObject(loaded.reader),
    short: 'Reader Mode Changed',
    long: `Reader Mode Changed: ${ref.CommonName ?? ref.Key} from AccessMethod ${from} to ${to}${mode?.until ? ` until ${mode.until}` : mode ? '' : ' (its normal mode)'} by ${user}`,
    links: [link('Reader', ref), ...(loaded.facts.door ? [link('Door', loaded.facts.door)] : [])],
    data: { Reader: named(ref), From: from, To: to, Until: mode?.until ? new Date(mode.until) : null, By: user },
  });
  if (loaded.door) return statusOf(ctx, { door: loaded.door, readers: await readersOf(ctx, loaded.door) });
  return statusOf(ctx, { door: null, readers: [loaded] });
}
