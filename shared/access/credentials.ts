/**
 * The credential download (issue 37): `GET /api/f/<folder>/controllers/<key>/credentials` answers
 * what an edge controller needs to decide alone, with the same engine (engine.ts `decide`), for
 * the readers connected to it: the readers (normal mode, set mode and its `Until`, lockdown, zone,
 * strike times), the schedules and holidays, a salted hash of each PIN, and one entry per card
 * that can pass one of those readers, with its grants (reader, schedule, level, window).
 *
 * Versions (see shared/db/credential-log.ts): the stream's fan-out counts the changes of every
 * instance and logs them. A download's `Version` is the counters of the controller's instance
 * chain (`"3.0.17"`, root first), read (strongly consistent) before anything else, so whatever a
 * download answers is at least as new as its version, and a change after it is in the log after
 * it: applying changes twice is harmless, missing one cannot happen.
 *
 * - `If-None-Match: <Version>`: the counters alone (one BatchGetItem; the controller's placement
 *   is kept) → 304 when none moved.
 * - `?since=<Version>`: the logged changes after it (a Query per instance whose counter moved,
 *   O(changes)); people changed → their cards' entries, and `{ EncodedCardNumber, FacilityCode,
 *   Removed: true }` for the cards they held that no longer pass here. A change of a level, a
 *   reader, a controller or a door changes which cards pass where: the answer is then a full one
 *   (`Incremental: false`). A version whose next change is gone from the log (older than
 *   `CHANGE_LOG_DAYS` (shared/db/credential-log.ts)), or with more than {@link MAX_INCREMENTAL_CHANGES} changes
 *   since, is 410 `VersionExpired`: download in full.
 *
 * Pages: `Cards` is paged by card holder (people in key order, `pageSize` people a page); every
 * page of one download carries the same `Version`: the first page's reads of the readers, levels,
 * schedules and holders are kept for {@link SNAPSHOT_TTL_MS} per execution environment and
 * version, so each later page reads its own people only (read units O(cards returned)).
 */
import { connectedToPage, objectsOfInstance } from '../db/access-reads.ts';
import { changesAfter, readCounters, type Counter, type LoggedChange } from '../db/credential-log.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { getObject, getObjects, ownInstance } from '../db/objects-repo.ts';
import { ApiError } from '../errors.ts';
import { cardIdentity, cardsWithKeys } from '../model/card-assignments.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { typeTag } from '../model/type-tags.ts';
import { missIn } from '../objects/tenant-scope.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { outOfScope, roleForbidden } from '../objects/object-errors.ts';
import { TtlCache } from '../ttl-cache.ts';
import { inCallerScope } from './decisions.ts';
import { cardFacts, linkedKeys, loadedLevel, personLevels, refOf, scheduleKeysAt, type LoadedLevel } from './facts.ts';
import { pinHash, pinSaltOf } from './pin-hash.ts';
import { statesOf } from './reader-state.ts';
import { isTimeZone } from '../model/time.ts';


/** More changes than this since a version: a full download costs less than the changes. */
const MAX_INCREMENTAL_CHANGES = 1000;
/** How long after its counter moved a change's entry may still be on its way (written right after the counter). */
const IN_FLIGHT_MS = 60_000;
/** How long the first page's reads are kept for the later pages of the same version. */
const SNAPSHOT_TTL_MS = 60_000;

const versionExpired = (why: string): ApiError => new ApiError(410, 'VersionExpired', `${why} Download in full (without since).`);

// ---------------------------------------------------------------------------------------------
// The controller and its version.

const placements = new TtlCache<StoredObject>(10_000, 60_000);
const id = (ctx: Ctx, key: string): string => `${ctx.db.tableName}\u0000${key}`;

/** The controller `key` in the folder or below it (403 outside the scope, 404 when not there); its placement is kept (placements never change). */
async function controllerIn(ctx: Ctx, folderKey: string, key: string): Promise<StoredObject> {
  const hit = placements.get(id(ctx, key));
  const c = hit ?? (isObjectKey(key) ? await getObject(ctx.db, key, true) : undefined);
  if (!c || c.collection !== 'controllers' || !(c.folder === folderKey || c.path.includes(folderKey))) return missIn(ctx, folderKey);
  if (!inCallerScope(ctx, c)) throw outOfScope();
  if (!hit) placements.set(id(ctx, key), { ...c, doc: {} });
  return c;
}

const versionOf = (chain: readonly string[], counters: ReadonlyMap<string, Counter>): string => chain.map((i) => counters.get(i)?.counter ?? 0).join('.');

function parseVersion(v: string, chain: readonly string[]): number[] | null {
  const parts = v.replace(/^W\//, '').replace(/"/g, '').trim().split('.');
  if (parts.length !== chain.length || !parts.every((p) => /^\d{1,12}$/.test(p))) return null;
  return parts.map(Number);
}

// ---------------------------------------------------------------------------------------------
// What every answer carries: readers, levels, schedules, holidays, and the card holders.

interface ReaderPart {
  readonly reader: StoredObject;
  readonly door: StoredObject | null;
  readonly timeZone: string;
}

interface Snapshot {
  readonly readers: readonly ReaderPart[];
  readonly levels: ReadonlyMap<string, LoadedLevel>;
  readonly schedules: ReadonlyMap<string, StoredObject>;
  readonly holidays: readonly StoredObject[];
  readonly body: Record<string, unknown>;
  /** The people holding a level that pairs a reader here, in key order (full downloads only). */
  holders?: readonly string[];
}

const snapshots = new TtlCache<Snapshot>(1_000, SNAPSHOT_TTL_MS);

const int = (v: unknown, def: number): number => (typeof v === 'number' && Number.isInteger(v) ? v : def);
const knownZone = (v: unknown): string | undefined => (typeof v === 'string' && isTimeZone(v) ? v : undefined);
const firstTo = (o: StoredObject, relation: string): string | undefined => linkedKeys(o, relation)[0];

/** Reads (strongly consistent where the table allows: objects by key) what every answer carries. */
async function readSnapshot(ctx: Ctx, controller: StoredObject): Promise<Snapshot> {
  const db = ctx.db;
  const [fresh, connected] = await Promise.all([getObject(db, controller.key, true), connectedToPage(db, controller.key, 'Controller', 1000)]);
  const c = fresh ?? controller;
  const keys = connected.holders.map((h) => h.from);
  // A reader's connections are links of its own (ObjectLinks, written with them): no Query each.
  const readerObjects = await getObjects(db, keys, true);
  const readers = readerObjects.filter((r) => r.collection === 'readers' && firstTo(r, 'Controller') === c.key).sort((a, b) => a.key.localeCompare(b.key));
  const chain = [...new Set([...c.instances, ...readers.flatMap((r) => r.instances)])];
  const doorKeys = readers.map((r) => firstTo(r, 'Door')).filter((k): k is string => k !== undefined);
  const [doorObjects, instanceObjects, levelsByReader, levelsByInstance, holidays] = await Promise.all([
    getObjects(db, doorKeys, true),
    getObjects(db, chain, true),
    Promise.all(readers.map((r) => connectedToPage(db, r.key, 'Reader', 1000).then((p) => p.holders.map((h) => h.from)))),
    Promise.all(chain.map((i) => objectsOfInstance(db, i, 'accesslevels'))),
    Promise.all(chain.map((i) => objectsOfInstance(db, i, 'holidays'))).then((l) => l.flat()),
  ]);
  const instances = new Map(instanceObjects.map((o) => [o.key, o]));
  const parts: ReaderPart[] = readers.map((r) => {
    const doorKey = firstTo(r, 'Door');
    let zone = knownZone(c.doc.TimeZone);
    for (const i of [...r.instances].reverse()) zone ??= knownZone(instances.get(i)?.doc.TimeZone);
    return { reader: r, door: doorObjects.find((d) => d.key === doorKey && d.collection === 'doors') ?? null, timeZone: zone ?? 'UTC' };
  });
  const readerKeys = new Set(readers.map((r) => r.key));
  const naming = levelsByInstance.flat().filter((l) => loadedLevel(l).entries.some((e) => readerKeys.has(e.readerId)));
  const levelKeys = [...new Set([...levelsByReader.flat(), ...naming.map((l) => l.key)])];
  const levelObjects = await getObjects(db, levelKeys, true);
  const levels = new Map<string, LoadedLevel>();
  levelKeys.forEach((k) => {
    const o = levelObjects.find((x) => x.key === k);
    if (!o || o.collection !== 'accesslevels') return;
    const l = loadedLevel(o);
    if (readers.some((r) => scheduleKeysAt(l, r.key).length > 0)) levels.set(k, l);
  });
  const scheduleKeys = [...new Set([...levels.values()].flatMap((l) => readers.flatMap((r) => scheduleKeysAt(l, r.key))))];
  const schedules = new Map((await getObjects(db, scheduleKeys, true)).filter((s) => s.collection === 'schedules').map((s) => [s.key, s]));
  const states = await statesOf(ctx, readers, c.path);
  const lockdownBody = (l: ReturnType<typeof states.lockdownOf>) => (l ? { FolderKey: l.folder, StartedOn: l.record.startedOn, Reason: l.record.reason } : null);
  const controllerLockdown = states.lockdownOf([...c.path]);
  const body: Record<string, unknown> = {
    Controller: refOf(c),
    TimeZone: knownZone(c.doc.TimeZone) ?? parts[0]?.timeZone ?? 'UTC',
    Readers: parts.map((p) => {
      const s = states.of(p.reader);
      return {
        Key: p.reader.key,
        CommonName: typeof p.reader.doc.CommonName === 'string' ? p.reader.doc.CommonName : null,
        AccessMethod: int(p.reader.doc.AccessMethod, 0),
        SetMode: s.mode ? { AccessMethod: s.mode.accessMethod, Until: s.mode.until } : null,
        Lockdown: lockdownBody(s.lockdown),
        Door: p.door ? refOf(p.door) : null,
        TimeZone: p.timeZone,
        NormalGrantAccessTime: int(p.reader.doc.NormalGrantAccessTime, 5),
        ExtendedGrantAccessTime: int(p.reader.doc.ExtendedGrantAccessTime, 15),
        Instances: [...p.reader.instances],
      };
    }),
    Schedules: [...schedules.values()].map((s) => ({
      Key: s.key,
      CommonName: typeof s.doc.CommonName === 'string' ? s.doc.CommonName : null,
      IsAlways: s.doc.IsAlways === true,
      ScheduleDurations: Array.isArray(s.doc.ScheduleDurations) ? s.doc.ScheduleDurations : [],
    })),
    Holidays: holidays.map((h) => ({ Key: h.key, InstanceKey: ownInstance(h), HolidayDays: Array.isArray(h.doc.HolidayDays) ? h.doc.HolidayDays : [] })),
    Lockdown: lockdownBody(controllerLockdown),
    PinSalt: pinSaltOf(c.key),
  };
  return { readers: parts, levels, schedules, holidays, body };
}

/** The people holding a level of the snapshot (both sides of `AccessLevel` and `ScheduledAccessLevel`), in key order. */
async function holdersOf(ctx: Ctx, snap: Snapshot): Promise<string[]> {
  const all = new Set<string>();
  await Promise.all(
    [...snap.levels.keys()].flatMap((level) =>
      ['AccessLevel', 'ScheduledAccessLevel'].map(async (relation) => {
        let after: string | undefined;
        do {
          const page = await connectedToPage(ctx.db, level, relation, 1000, after);
          for (const h of page.holders) all.add(h.from);
          after = page.next;
        } while (after);
      }),
    ),
  );
  return [...all].sort();
}

// ---------------------------------------------------------------------------------------------
// Card entries.

/** The entries of a person's cards that pass a reader here (none: the person's cards do not pass here). */
function entriesOf(snap: Snapshot, person: StoredObject, salt: string): Record<string, unknown>[] {
  const own = ownInstance(person);
  const grants: Record<string, unknown>[] = [];
  for (const pl of personLevels(person)) {
    const level = snap.levels.get(pl.key);
    if (!level) continue;
    for (const { reader } of snap.readers) {
      // A card is found at a reader of its holder's instance or of an instance below it.
      if (!reader.instances.includes(own)) continue;
      for (const s of scheduleKeysAt(level, reader.key)) {
        if (!snap.schedules.has(s)) continue;
        grants.push({ ReaderKey: reader.key, ScheduleKey: s, AccessLevelKey: level.level.key, ...(pl.window ? { ActiveOn: pl.window.activeOn, ExpiresOn: pl.window.expiresOn } : {}) });
      }
    }
  }
  if (grants.length === 0) return [];
  return cardsWithKeys(person.key, person.doc)
    .filter((card) => cardIdentity(card) !== undefined)
    .map((card) => {
      const f = cardFacts(person, card);
      return {
        EncodedCardNumber: String(card.EncodedCardNumber),
        FacilityCode: f.facilityCode,
        CardKey: f.key,
        DisplayCardNumber: f.displayCardNumber,
        PersonKey: person.key,
        PersonName: f.person.CommonName,
        InstanceKey: own,
        ActiveOn: f.activeOn,
        ExpiresOn: f.expiresOn,
        IsDisabled: f.isDisabled,
        LockdownExempt: f.lockdownExempt,
        ExtendedAccess: f.extendedAccess,
        OriginalUseCount: f.originalUseCount,
        CurrentUseCount: f.currentUseCount,
        PinHash: f.pinCode === null ? null : pinHash(salt, f.pinCode),
        Grants: grants,
      };
    });
}

/** The entries of some people (read strongly consistent; their levels are links of their own). */
async function entriesOfPeople(ctx: Ctx, snap: Snapshot, keys: readonly string[], salt: string): Promise<{ entries: Record<string, unknown>[]; found: Set<string> }> {
  const people = await getObjects(ctx.db, keys, true);
  const entries = people
    .filter((p) => p.collection === 'people')
    .sort((a, b) => a.key.localeCompare(b.key))
    .flatMap((p) => entriesOf(snap, p, salt));
  return { entries, found: new Set(entries.map((e) => `${e.FacilityCode === null ? '' : String(e.FacilityCode)}:${String(e.EncodedCardNumber)}`)) };
}

// ---------------------------------------------------------------------------------------------
// The call.

export interface DownloadRequest {
  readonly page: number;
  readonly pageSize: number;
  readonly since: string | undefined;
  readonly ifNoneMatch: string | undefined;
}

export type DownloadAnswer = { readonly status: 304; readonly version: string } | { readonly status: 200; readonly version: string; readonly body: Record<string, unknown> };

/**
 * `GET /api/f/<folder>/controllers/<key>/credentials` (Administrator or Controller; see the
 * module's comment for `If-None-Match` and `since`).
 */
export async function credentialDownload(ctx: Ctx, folderKey: string, controllerKey: string, req: DownloadRequest): Promise<DownloadAnswer> {
  if (ctx.principal.role !== 'Administrator' && ctx.principal.role !== 'Controller') throw roleForbidden('read credential downloads (an Administrator or a Controller may)');
  const controller = await controllerIn(ctx, folderKey, controllerKey.toLowerCase());
  const chain = controller.instances;
  const counters = await readCounters(ctx.db, chain);
  const version = versionOf(chain, counters);
  if (req.ifNoneMatch !== undefined && req.ifNoneMatch.split(',').some((v) => parseVersion(v, chain)?.join('.') === version)) return { status: 304, version };
  const salt = pinSaltOf(controller.key);

  if (req.since !== undefined) {
    const old = parseVersion(req.since, chain);
    if (!old || old.some((n, i) => n > (counters.get(chain[i]!)?.counter ?? 0))) throw versionExpired('This version was not given for this controller.');
    const logged: LoggedChange[] = [];
    const reached: number[] = [];
    for (const [i, instance] of chain.entries()) {
      const { counter: upTo, changedOn } = counters.get(instance) ?? { counter: 0, changedOn: 0 };
      if (upTo === old[i]) {
        reached.push(upTo);
        continue;
      }
      const changes = await changesAfter(ctx.db, instance, old[i]!, upTo, MAX_INCREMENTAL_CHANGES + 1);
      if (changes.length > MAX_INCREMENTAL_CHANGES) throw versionExpired(`More than ${MAX_INCREMENTAL_CHANGES} changes since this version.`);
      // The oldest changes go first (TTL): a first change missing is gone. None at all: gone too,
      // unless the counter moved just now (its entries are written right after it).
      const gone = changes.length > 0 ? changes[0]!.seq !== old[i]! + 1 : ctx.now.getTime() - changedOn > IN_FLIGHT_MS;
      if (gone) throw versionExpired('The changes since this version are no longer kept.');
      // Counted changes whose entries are still being written: this answer goes up to the last one read in order.
      let last = old[i]!;
      for (const c of changes) {
        if (c.seq !== last + 1) break;
        logged.push(c);
        last = c.seq;
      }
      reached.push(last);
    }
    const sinceVersion = reached.join('.');
    if (!logged.some((c) => c.kind === 'grants')) {
      const snap = await readSnapshot(ctx, controller);
      const people = [...new Set(logged.filter((c) => c.kind === 'person').map((c) => c.key))];
      const { entries, found } = await entriesOfPeople(ctx, snap, people, salt);
      const removed = [...new Set(logged.flatMap((c) => c.cards))]
        .filter((identity) => !found.has(identity))
        .map((identity) => {
          const at = identity.indexOf(':');
          const facility = identity.slice(0, at);
          return { EncodedCardNumber: identity.slice(at + 1), FacilityCode: facility === '' ? null : /^\d{1,9}$/.test(facility) ? Number(facility) : facility, Removed: true };
        });
      return {
        status: 200,
        version: sinceVersion,
        body: { $type: typeTag(ctx.ns, 'CredentialDownloadInfo'), Version: sinceVersion, Since: req.since, Incremental: true, ...snap.body, Page: 0, PageSize: entries.length + removed.length, HolderCount: people.length, Cards: [...entries, ...removed] },
      };
    }
    // A level, a reader, a controller or a door changed: which cards pass where may have changed for all of them.
  }

  const cacheKey = `${id(ctx, controller.key)}\u0000${version}`;
  let snap = snapshots.get(cacheKey);
  if (!snap) {
    snap = await readSnapshot(ctx, controller);
    snap.holders = await holdersOf(ctx, snap);
    snapshots.set(cacheKey, snap);
  }
  const holders = snap.holders ?? [];
  const pageKeys = holders.slice(req.page * req.pageSize, (req.page + 1) * req.pageSize);
  const { entries } = pageKeys.length > 0 ? await entriesOfPeople(ctx, snap, pageKeys, salt) : { entries: [] };
  return {
    status: 200,
    version,
    body: { $type: typeTag(ctx.ns, 'CredentialDownloadInfo'), Version: version, Incremental: false, ...snap.body, Page: req.page, PageSize: req.pageSize, HolderCount: holders.length, Cards: entries },
  };
}
