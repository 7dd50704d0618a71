/**
 * Loading the facts of one decision (decision.ts `DecisionFacts`) from the table.
 *
 * What may be kept, and for how long, per execution environment: readers (with their door,
 * controller and zone), access levels (with their pairs), schedules, holidays and instances for
 * {@link CONFIG_TTL_MS}, so a change to them applies within that; the card and the person's levels
 * are read fresh on every decision (strongly consistent), so a change to a card or to a person's
 * levels applies to the very next one.
 *
 * The access pattern of a warm decision (the reader, its levels, schedules and holidays kept):
 *
 * | wave | requests (in parallel)                                                          |
 * | ---- | ------------------------------------------------------------------------------- |
 * | 1    | one Query of the card index per instance of the reader's chain (`CN#<instance>#<number>`) |
 * | 2    | GetItem of the holder (consistent): its cards, and its levels in its `ObjectLinks`          |
 *
 * Neither depends on the number of people in the instance. A cold reader adds two waves (the
 * reader; its door, controller and instances), cold levels two (the levels; their schedules),
 * cold holidays none (they go with wave 1). The connections of a reader, a level and a person are
 * read from their own `ObjectLinks` (see {@link linkedKeys}), never with a Query of their own.
 */
import { cardHolders, connectedToPage, objectsOfInstance } from '../db/access-reads.ts';
import { getObject, getObjects, ownInstance } from '../db/objects-repo.ts';
import { cardIdentity, cardsWithKeys, presentCardValue, type Card } from '../model/card-assignments.ts';
import { objectHref } from '../model/object-render.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { TtlCache } from '../ttl-cache.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { SCHEDULED_ACCESS_LEVEL } from '../relations/rules.ts';
import { windowFromMetaData } from '../relations/window.ts';
import {
  ACCESS_METHODS,
  type AccessMethod,
  type CardFacts,
  type CardLookup,
  type HolidayDay,
  type LevelGrant,
  type ObjectRef,
  type ReaderFacts,
  type ScheduleRule,
} from './decision.ts';
import { holidayDaysOf, scheduleRuleOf } from './schedule-windows.ts';
import { isTimeZone } from '../model/time.ts';

/** How long readers, levels, schedules, holidays and instances are kept per execution environment. */
export const CONFIG_TTL_MS = 1_000;

/** A reader as a decision reads it: the object, its facts, and what it is connected to. */
export interface LoadedReader {
  readonly reader: StoredObject;
  readonly door: StoredObject | null;
  readonly controller: StoredObject | null;
  readonly facts: ReaderFacts;
}

/** An access level and its (reader, schedule) pairs, before the schedules are read. */
export interface LoadedLevel {
  readonly level: StoredObject;
  /** `AccessLevelEntries`: each reader under its own schedule. */
  readonly entries: readonly { readonly readerId: string; readonly scheduleId: string }[];
  /** `Reader` connections, each paired with every `Schedule` connection. */
  readonly readers: readonly string[];
  readonly schedules: readonly string[];
}

const readers = new TtlCache<LoadedReader | null>(10_000, CONFIG_TTL_MS);
const levels = new TtlCache<LoadedLevel | null>(50_000, CONFIG_TTL_MS);
const schedules = new TtlCache<ScheduleRule | null>(50_000, CONFIG_TTL_MS);
const holidays = new TtlCache<readonly HolidayDay[]>(10_000, CONFIG_TTL_MS);
const instances = new TtlCache<StoredObject | null>(10_000, CONFIG_TTL_MS);

const id = (ctx: Pick<Ctx, 'db'>, key: string): string => `${ctx.db.tableName}\u0000${key}`;

/** `{ Key, CommonName, Href }` of an object. */
export function refOf(o: StoredObject): ObjectRef {
  return { Key: o.key, CommonName: typeof o.doc.CommonName === 'string' ? o.doc.CommonName : null, Href: objectHref(o) };
}

const int = (v: unknown, def: number): number => (typeof v === 'number' && Number.isInteger(v) ? v : def);

/** An IANA zone `Intl` knows, or undefined. */
const knownZone = (v: unknown): string | undefined => (typeof v === 'string' && isTimeZone(v) ? v : undefined);

/** Instances by key, kept for {@link CONFIG_TTL_MS} (missing ones too). */
async function instancesByKey(ctx: Ctx, keys: readonly string[]): Promise<Map<string, StoredObject | null>> {
  const out = new Map<string, StoredObject | null>();
  const missing: string[] = [];
  for (const k of keys) {
    const hit = instances.get(id(ctx, k));
    if (hit === undefined) missing.push(k);
    else out.set(k, hit);
  }
  if (missing.length > 0) {
    const found = new Map((await getObjects(ctx.db, missing)).map((o) => [o.key, o]));
    for (const k of missing) {
      const o = found.get(k) ?? null;
      instances.set(id(ctx, k), o);
      out.set(k, o);
    }
  }
  return out;
}

/**
 * The keys an object is connected to by `relation`, from its own `ObjectLinks`: every connection
 * is also a link of its source, written in the same transaction (shared/relations/service.ts).
 */
export function linkedKeys(o: StoredObject, relation: string): string[] {
  const links = Array.isArray(o.doc.ObjectLinks) ? (o.doc.ObjectLinks as unknown[]) : [];
  return links
    .filter((l): l is Record<string, unknown> => l !== null && typeof l === 'object' && (l as Record<string, unknown>).Relation === relation)
    .map((l) => l.LinkedObjectKey)
    .filter((k): k is string => typeof k === 'string');
}

/**
 * A reader with its door, controller and zone (the controller's `TimeZone`, else the nearest
 * instance's, else UTC); null when `key` names no reader. Kept for {@link CONFIG_TTL_MS}.
 */
export async function loadReader(ctx: Ctx, key: string): Promise<LoadedReader | null> {
  const hit = readers.get(id(ctx, key));
  if (hit !== undefined) return hit;
  const reader = await getObject(ctx.db, key);
  if (!reader || reader.collection !== 'readers') {
    readers.set(id(ctx, key), null);
    return null;
  }
  const doorKey = linkedKeys(reader, 'Door')[0];
  const controllerKey = linkedKeys(reader, 'Controller')[0];
  const [linked, chain] = await Promise.all([
    getObjects(ctx.db, [doorKey, controllerKey].filter((k): k is string => k !== undefined)),
    instancesByKey(ctx, reader.instances),
  ]);
  const door = linked.find((o) => o.key === doorKey && o.collection === 'doors') ?? null;
  const controller = linked.find((o) => o.key === controllerKey && o.collection === 'controllers') ?? null;
  let timeZone = knownZone(controller?.doc.TimeZone);
  for (const i of [...reader.instances].reverse()) timeZone ??= knownZone(chain.get(i)?.doc.TimeZone);
  const method = int(reader.doc.AccessMethod, 0);
  const facts: ReaderFacts = {
    ref: refOf(reader),
    accessMethod: ((ACCESS_METHODS as readonly number[]).includes(method) ? method : 0) as AccessMethod,
    normalGrantAccessTime: int(reader.doc.NormalGrantAccessTime, 5),
    extendedGrantAccessTime: int(reader.doc.ExtendedGrantAccessTime, 15),
    timeZone: timeZone ?? 'UTC',
    door: door ? refOf(door) : null,
    controller: controller ? refOf(controller) : null,
    lockdown: null,
  };
  const loaded: LoadedReader = { reader, door, controller, facts };
  readers.set(id(ctx, key), loaded);
  return loaded;
}

/** The holidays of an instance chain (each instance's kept for {@link CONFIG_TTL_MS}). */
export async function loadHolidays(ctx: Ctx, chain: readonly string[]): Promise<HolidayDay[]> {
  const lists = await Promise.all(
    chain.map(async (i) => {
      const hit = holidays.get(id(ctx, i));
      if (hit) return hit;
      const days = (await objectsOfInstance(ctx.db, i, 'holidays')).flatMap((h) => holidayDaysOf(h.doc));
      holidays.set(id(ctx, i), days);
      return days;
    }),
  );
  return lists.flat();
}

/** A level with its pairs, from its object (the credential download reads it fresh). */
export function loadedLevel(level: StoredObject): LoadedLevel {
  const entries: { readerId: string; scheduleId: string }[] = [];
  for (const e of Array.isArray(level.doc.AccessLevelEntries) ? level.doc.AccessLevelEntries : []) {
    if (e === null || typeof e !== 'object') continue;
    const { ReaderId, ScheduleId } = e as Record<string, unknown>;
    if (typeof ReaderId === 'string' && typeof ScheduleId === 'string') entries.push({ readerId: ReaderId.toLowerCase(), scheduleId: ScheduleId.toLowerCase() });
  }
  return {
    level,
    entries,
    readers: linkedKeys(level, 'Reader'),
    schedules: linkedKeys(level, 'Schedule'),
  };
}

/** Access levels with their pairs, kept for {@link CONFIG_TTL_MS}: the cold ones in one BatchGetItem. */
export async function loadLevels(ctx: Ctx, keys: readonly string[]): Promise<Map<string, LoadedLevel>> {
  const out = new Map<string, LoadedLevel>();
  const missing: string[] = [];
  for (const k of new Set(keys)) {
    const hit = levels.get(id(ctx, k));
    if (hit === undefined) missing.push(k);
    else if (hit) out.set(k, hit);
  }
  if (missing.length > 0) {
    const byKey = new Map((await getObjects(ctx.db, missing)).map((o) => [o.key, o]));
    missing.forEach((k) => {
      const o = byKey.get(k);
      const l = o && o.collection === 'accesslevels' ? loadedLevel(o) : null;
      levels.set(id(ctx, k), l);
      if (l) out.set(k, l);
    });
  }
  return out;
}

/** Schedules by key, kept for {@link CONFIG_TTL_MS}: the cold ones in one BatchGetItem. */
export async function loadSchedules(ctx: Ctx, keys: readonly string[]): Promise<Map<string, ScheduleRule>> {
  const out = new Map<string, ScheduleRule>();
  const missing: string[] = [];
  for (const k of new Set(keys)) {
    const hit = schedules.get(id(ctx, k));
    if (hit === undefined) missing.push(k);
    else if (hit) out.set(k, hit);
  }
  if (missing.length > 0) {
    const byKey = new Map((await getObjects(ctx.db, missing)).map((o) => [o.key, o]));
    for (const k of missing) {
      const o = byKey.get(k);
      const s = o && o.collection === 'schedules' ? scheduleRuleOf(refOf(o), o.doc) : null;
      schedules.set(id(ctx, k), s);
      if (s) out.set(k, s);
    }
  }
  return out;
}

/** The schedules a level pairs a reader with (its entries naming the reader, and every Schedule connection when it is connected to the reader). */
export function scheduleKeysAt(l: LoadedLevel, readerKey: string): string[] {
  const keys = l.entries.filter((e) => e.readerId === readerKey).map((e) => e.scheduleId);
  if (l.readers.includes(readerKey)) keys.push(...l.schedules);
  return [...new Set(keys)];
}

/** The readers a level grants at (entries and Reader connections). */
export function readerKeysOf(l: LoadedLevel): string[] {
  return [...new Set([...l.entries.map((e) => e.readerId), ...l.readers])];
}

/** A person's level connections: `AccessLevel` (no window) and `ScheduledAccessLevel` (with its window). */
export interface PersonLevel {
  readonly key: string;
  readonly window: LevelGrant['window'];
}

/**
 * A person's levels from its own document: every connection is also an ObjectLinkItem of its
 * source, written in the same transaction (shared/relations/service.ts), so the person item read
 * strongly consistent holds its levels as they are, a scheduled one with its window in
 * `MetaDataBson`. No Query of its connections is needed.
 */
export function personLevels(person: StoredObject): PersonLevel[] {
  const links = Array.isArray(person.doc.ObjectLinks) ? (person.doc.ObjectLinks as unknown[]) : [];
  const out: PersonLevel[] = [];
  for (const l of links) {
    if (l === null || typeof l !== 'object') continue;
    const { Relation, LinkedObjectKey, MetaDataBson } = l as Record<string, unknown>;
    if (typeof LinkedObjectKey !== 'string' || (Relation !== 'AccessLevel' && Relation !== SCHEDULED_ACCESS_LEVEL)) continue;
    if (Relation === 'AccessLevel') {
      out.push({ key: LinkedObjectKey, window: null });
      continue;
    }
    try {
      out.push({ key: LinkedObjectKey, window: windowFromMetaData(MetaDataBson) });
    } catch {
      // The server wrote it; a window it cannot read grants nothing rather than always.
    }
  }
  return out;
}

/** The grants of a person's levels at one reader (levels pairing it with no schedule are left out). */
export async function grantsAt(ctx: Ctx, mine: readonly PersonLevel[], readerKey: string): Promise<{ grants: LevelGrant[]; schedules: Map<string, ScheduleRule> }> {
  const loaded = await loadLevels(
    ctx,
    mine.map((l) => l.key),
  );
  const pairs = mine
    .map((l) => ({ l, loaded: loaded.get(l.key) }))
    .filter((x): x is { l: PersonLevel; loaded: LoadedLevel } => x.loaded !== undefined)
    .map((x) => ({ ...x, keys: scheduleKeysAt(x.loaded, readerKey) }))
    .filter((x) => x.keys.length > 0 || x.loaded.readers.includes(readerKey));
  const rules = await loadSchedules(
    ctx,
    pairs.flatMap((p) => p.keys),
  );
  const grants = pairs.map((p) => ({
    level: refOf(p.loaded.level),
    window: p.l.window,
    schedules: p.keys.map((k) => rules.get(k)).filter((s): s is ScheduleRule => s !== undefined),
  }));
  return { grants, schedules: rules };
}

/** The card a read names, found in the reader's instance chain (see {@link findCard}). */
export interface FoundCard {
  readonly person: StoredObject;
  readonly card: Card;
}

/** Card facts of a stored card of `person`. */
export function cardFacts(person: StoredObject, card: Card): CardFacts {
  const n = String(card.EncodedCardNumber);
  let encoded = 0n;
  try {
    encoded = BigInt(n);
  } catch {
    // A card number kept as sent in another encoding (hex text): the identity compares the text.
  }
  const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
  return {
    person: refOf(person),
    key: card.Key as string,
    encodedCardNumber: encoded,
    facilityCode: presentCardValue(card.FacilityCode) ? (typeof card.FacilityCode === 'bigint' ? String(card.FacilityCode) : card.FacilityCode) : null,
    displayCardNumber: str(card.DisplayCardNumber) ?? n,
    isDisabled: card.IsDisabled === true,
    activeOn: str(card.ActiveOn),
    expiresOn: str(card.ExpiresOn),
    pinCode: typeof card.PinCode === 'number' ? String(card.PinCode) : str(card.PinCode),
    originalUseCount: int(card.OriginalUseCount, 0),
    currentUseCount: int(card.CurrentUseCount, 0),
    extendedAccess: card.ExtendedAccess === true,
    lockdownExempt: card.LockdownExempt === true,
  };
}

/**
 * The holder of a card in the reader's instance chain, nearest instance first (wave 1: one Query
 * of the card index per instance; wave 2: the holder, consistent). With a
 * facility code the card is `<facility code>:<number>` exactly; without one, the card without a
 * facility code, else the number's only holder. `otherFacility`: the number is held only under
 * another facility code (or, without one, by several cards: the read must name which).
 */
export async function findCard(
  ctx: Ctx,
  chain: readonly string[],
  number: string,
  facility: string | undefined,
): Promise<{ found: FoundCard | null; otherFacility: boolean }> {
  const nearest = [...chain].reverse();
  const perInstance = await Promise.all(nearest.map((i) => cardHolders(ctx.db, i, number)));
  let otherFacility = false;
  for (let i = 0; i < nearest.length; i++) {
    const holders = perInstance[i]!;
    if (holders.length === 0) continue;
    const exact = holders.filter((h) => h.card === `${facility ?? ''}:${number}`);
    const chosen = exact.length === 1 ? exact[0] : facility === undefined && holders.length === 1 ? holders[0] : undefined;
    if (!chosen) {
      otherFacility = true;
      continue;
    }
    const found = await holderOf(ctx, chosen.owner, nearest[i]!, chosen.card);
    if (found) return { found, otherFacility: false };
  }
  return { found: null, otherFacility };
}

/** The person `owner` with the card `identity`, read fresh (strongly consistent); null when the (eventually consistent) index was behind. */
async function holderOf(ctx: Ctx, owner: string, instance: string, identity: string): Promise<FoundCard | null> {
  const person = await getObject(ctx.db, owner, true);
  if (!person || person.collection !== 'people' || ownInstance(person) !== instance) return null;
  const card = cardsWithKeys(person.key, person.doc).find((c) => cardIdentity(c) === identity);
  return card ? { person, card } : null;
}

/** The lookup a decision reads, from what {@link findCard} found. */
export function lookupOf(r: { found: FoundCard | null; otherFacility: boolean }): CardLookup {
  return r.found ? { card: cardFacts(r.found.person, r.found.card) } : { card: null, heldUnderOtherFacilityCode: r.otherFacility };
}

const levelKeys = new TtlCache<readonly string[]>(10_000, CONFIG_TTL_MS);

/**
 * The access levels that pair a reader with a schedule: those connected to it (one Query of its
 * references, `RB#<reader>` `Reader#`) and those of its instance chain whose entries name it (one
 * Query of each instance's levels), kept for {@link CONFIG_TTL_MS}. Reads O(levels), never O(people).
 */
export async function levelsAtReader(ctx: Ctx, loaded: LoadedReader): Promise<LoadedLevel[]> {
  const readerKey = loaded.reader.key;
  const [connected, ...perInstance] = await Promise.all([
    connectedToPage(ctx.db, readerKey, 'Reader', 1000).then((p) => p.holders.map((h) => h.from)),
    ...loaded.reader.instances.map(async (i) => {
      const hit = levelKeys.get(id(ctx, i));
      if (hit) return hit;
      const all = await objectsOfInstance(ctx.db, i, 'accesslevels');
      const keys = all.filter((l) => loadedLevel(l).entries.length > 0).map((l) => l.key);
      levelKeys.set(id(ctx, i), keys);
      return keys;
    }),
  ]);
  const loadedLevels = await loadLevels(ctx, [...connected!, ...perInstance.flat()]);
  return [...loadedLevels.values()].filter((l) => scheduleKeysAt(l, readerKey).length > 0).sort((a, b) => a.level.key.localeCompare(b.level.key));
}
