/**
 * What a publish must find before it writes: the sink's folder, the app the posting names, the
 * event type of the moniker, and the canonical Hrefs of the related objects. Each answer is kept
 * per execution environment (see {@link RESOLVE_TTL_MS}) so a warm publish costs only its write
 * (one BatchWriteItem).
 *
 * | step          | cold cost                                             | cached   |
 * | ------------- | ----------------------------------------------------- | -------- |
 * | sink folder   | 1 GetItem                                             | 10 s     |
 * | app           | by key: 1 GetItem; by nickname (or a key that names no app of the chain): 1 Query (GSI2 `apps` partition) per instance of the chain, in parallel | 10 s |
 * | event type    | 1 GetItem (moniker claim) + 1 Query (type and alarm links) [+ 1 BatchGet of its alarms] | 10 s |
 * | related objects | 1 BatchGetItem of the keys not cached               | found: 5 min (objects do not move); missing: 10 s |
 *
 * {@link resolvePosting} sends what it can read by key at once, as one BatchGetItem (item-reads.ts
 * `readTogether`): the sink, the related objects and, when `AppKey` is an app's key, that app and
 * the moniker's claim in it. Only the reads that need an answer wait: the apps of the sink's chain
 * (for a nickname), the claim in the app found by nickname, the event type's Query. A cold publish
 * naming its app by key then takes three round trips, its write included (six before): the
 * BatchGetItem, the event type's Query and the write; by nickname, five.
 *
 * The related objects' placements serve twice: their canonical Hrefs, and their scope check (a
 * posting may relate only objects the publisher can see, {@link requireRelatedInScope}), so that
 * check costs no request of its own.
 *
 * Only found answers of the app and the event type are kept, and a miss is read again before it
 * is a 404, so a just-created app or event type is usable at once. A change made elsewhere to an
 * event type's priority, flags, templates or alarm membership reaches a warm environment within
 * {@link RESOLVE_TTL_MS}; the environment that made the change forgets its copy at once. So does an
 * app's write or delete for the apps (app-cache.ts).
 */
import { ApiError, forbidden } from '../errors.ts';
import { readTogether } from '../db/item-reads.ts';
import { claimOwner, getObject, getObjects, listCollection, ownInstance } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { APPS_COLLECTION, EVENT_TYPES_COLLECTION, appsOfInstance, eventTypeWithAlarms } from '../db/eventtypes-repo.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { monikerClaim } from '../model/claims.ts';
import { isWithin } from '../model/placement.ts';
import { loadFolder } from '../objects/tenant-scope.ts';
import { verdictIn, type Ctx } from '../objects/domain-context.ts';
import { outOfScope } from '../objects/object-errors.ts';
import { TtlCache } from '../ttl-cache.ts';
import { RESOLVE_TTL_MS, appLists, appsByKey } from './app-cache.ts';
import { builtinTypeInAlarm, forgetBuiltinAlarms } from './builtin-alarms.ts';
import { builtinApp, builtinEventType, isBuiltinAppKey } from './builtin-apps.ts';
import { monikersOf } from './monikers.ts';
import type { Posting, RelatedObject } from './posting.ts';
import { canonicalHref } from './event-render.ts';

/** How long a related object's placement is reused (placements never change). */
const PLACEMENT_TTL_MS = 5 * 60_000;

const appNotFound = (name: string): ApiError =>
  new ApiError(404, 'AppNotFound', `No app with the key or moniker nickname "${name}" is in this instance or an instance above it.`);
export const eventTypeNotFound = (what: string): ApiError => new ApiError(404, 'EventTypeNotFound', `The app has no event type ${what}.`);

interface ResolvedType {
  readonly type: StoredObject;
  /** The type's own flag, or membership in an alarm definition. */
  readonly requiresAck: boolean;
}

interface Placement {
  readonly key: string;
  readonly collection: string;
  readonly folder: string;
  readonly path: readonly string[];
}

const sinks = new TtlCache<StoredObject>(5_000, RESOLVE_TTL_MS);
const types = new TtlCache<ResolvedType>(20_000, RESOLVE_TTL_MS);
const placements = new TtlCache<Placement | null>(50_000, PLACEMENT_TTL_MS);

const id = (ctx: Ctx, ...parts: string[]): string => [ctx.db.tableName, ...parts].join('\u0000');

/** Forgets every cached resolution (tests). */
export function clearResolveCaches(): void {
  for (const c of [sinks, appLists, appsByKey, types, placements] as TtlCache<unknown>[]) c.clear();
  forgetBuiltinAlarms();
}

/** Forgets a changed or deleted event type in this execution environment. */
export function forgetEventType(eventTypeKey: string): void {
  types.deleteWhere((v) => v.type.key === eventTypeKey);
}

/** The folder (or instance) of a sink path: scope-checked, cached. */
async function sinkFolder(ctx: Ctx, folderKey: string): Promise<StoredObject> {
  const cached = sinks.get(id(ctx, folderKey));
  if (cached) {
    if (!isWithin(ctx.principal.instanceKey, cached)) throw outOfScope();
    return cached;
  }
  const f = await loadFolder(ctx, folderKey);
  sinks.set(id(ctx, folderKey), f);
  return f;
}

async function appsOf(ctx: Ctx, instanceKey: string, fresh: boolean): Promise<{ list: StoredObject[]; cached: boolean }> {
  const k = id(ctx, instanceKey);
  const hit = fresh ? undefined : appLists.get(k);
  if (hit) return { list: hit, cached: true };
  const list = await appsOfInstance(ctx.db, instanceKey);
  appLists.set(k, list);
  return { list, cached: false };
}

const nicknames = (app: StoredObject): string[] => monikersOf(app.doc).map((m) => m.Nickname);

function pick(lists: readonly StoredObject[][], name: string): StoredObject | undefined {
  const lower = name.toLowerCase();
  if (isObjectKey(lower)) {
    for (const list of lists) {
      const byKey = list.find((a) => a.key === lower);
      if (byKey) return byKey;
    }
  }
  for (const list of lists) {
    const byName = list.find((a) => nicknames(a).includes(name));
    if (byName) return byName;
  }
  return undefined;
}

/**
 * The app a posting's `AppKey` names: the key of an app in the sink's instance or an instance
 * above it, or the Nickname of one of its Monikers (nearest instance first). 404 AppNotFound.
 */
async function resolveApp(ctx: Ctx, sink: StoredObject, name: string): Promise<StoredObject> {
  const chain = [...sink.instances].reverse(); // nearest first
  const read = (fresh: boolean) => Promise.all(chain.map((i) => appsOf(ctx, i, fresh)));
  const first = await read(false);
  const found = pick(
    first.map((r) => r.list),
    name,
  );
  if (found) return found;
  if (first.some((r) => r.cached)) {
    const again = pick(
      (await read(true)).map((r) => r.list),
      name,
    );
    if (again) return again;
  }
  // The built-in apps of the root instance (builtin-apps.ts) come after every stored one.
  const builtin = builtinApp(name, chain[chain.length - 1] ?? ownInstance(sink));
  if (builtin) return builtin;
  throw appNotFound(name);
}

/** The event type of an app by moniker; an empty Namespace also matches a unique Nickname alone. */
async function resolveEventType(
  ctx: Ctx,
  app: StoredObject,
  moniker: { Namespace: string; Nickname: string },
  sink: StoredObject,
  claimed?: { readonly owner: string | undefined },
): Promise<ResolvedType> {
  if (isBuiltinAppKey(app.key)) {
    const builtin = builtinEventType(app, moniker);
    if (!builtin) throw eventTypeNotFound(moniker.Namespace ? `${moniker.Namespace}/${moniker.Nickname}` : moniker.Nickname);
    // Its alarm definitions are those of the sink's instance chain (builtin-alarms.ts), not the type's.
    const inAlarm = await builtinTypeInAlarm(ctx.db, builtin.key, sink.instances);
    return { type: builtin, requiresAck: builtin.doc.RequiresAcknowledgement === true || inAlarm };
  }
  const k = typeId(ctx, app.key, moniker);
  const hit = types.get(k);
  if (hit) return hit;
  // The moniker's claim in this app, unless it was read already (with the sink: resolvePosting).
  let owner = claimed ? claimed.owner : await claimOwner(ctx.db, monikerClaim(app.key, moniker.Namespace, moniker.Nickname));
  if (!owner && moniker.Namespace === '') owner = await uniqueByNickname(ctx, app.key, moniker.Nickname);
  const what = moniker.Namespace ? `${moniker.Namespace}/${moniker.Nickname}` : moniker.Nickname;
  if (!owner) throw eventTypeNotFound(what);
  const rec = await eventTypeWithAlarms(ctx.db, owner);
  if (!rec || rec.type.folder !== app.key) throw eventTypeNotFound(what);
  let inAlarm = false;
  if (rec.alarmKeys.length > 0) {
    // A deleted alarm definition's links are removed from the stream; until then they do not count.
    const alarms = await getObjects(ctx.db, rec.alarmKeys);
    inAlarm = alarms.some((a) => a.collection === 'alarmdefinitions');
  }
  const resolved: ResolvedType = { type: rec.type, requiresAck: rec.type.doc.RequiresAcknowledgement === true || inAlarm };
  types.set(k, resolved);
  return resolved;
}

const typeId = (ctx: Ctx, appKey: string, moniker: { Namespace: string; Nickname: string }): string => id(ctx, appKey, moniker.Namespace, moniker.Nickname);

async function uniqueByNickname(ctx: Ctx, appKey: string, nickname: string): Promise<string | undefined> {
  const matches: string[] = [];
  let after: string | undefined;
  do {
    const page = await listCollection(ctx.db, appKey, EVENT_TYPES_COLLECTION, 1000, after);
    for (const t of page.items) if (monikersOf(t.doc).some((m) => m.Nickname === nickname)) matches.push(t.key);
    after = page.nextStart;
  } while (after);
  return matches.length === 1 ? matches[0] : undefined;
}

/** The object key that ends an object Href (`/api/f/<folder>/<any collection>/<key>`), or ''. */
function keyInHref(href: unknown): string {
  if (typeof href !== 'string') return '';
  const m = /^\/api\/f\/[0-9a-fA-F]{24}\/[A-Za-z]+\/([0-9a-fA-F]{24})\/?$/.exec(href.trim());
  return m ? m[1]!.toLowerCase() : '';
}

/** The object key a related object names: its LinkedObjectKey, else the key its Href ends with. */
const keyOfRelated = (r: RelatedObject): string => (typeof r.LinkedObjectKey === 'string' ? r.LinkedObjectKey.toLowerCase() : keyInHref(r.Href));

/**
 * Where the related objects are (null: not found), from the cache or one BatchGetItem of the keys
 * whose placement is not cached.
 */
async function relatedPlacements(ctx: Ctx, related: readonly RelatedObject[]): Promise<Map<string, Placement | null>> {
  const out = new Map<string, Placement | null>();
  const unknown: string[] = [];
  for (const k of new Set(related.map(keyOfRelated).filter(isObjectKey))) {
    const p = placements.get(id(ctx, k));
    if (p === undefined) unknown.push(k);
    else out.set(k, p);
  }
  if (unknown.length > 0) {
    const byKey = new Map((await getObjects(ctx.db, unknown)).map((o) => [o.key, o]));
    for (const k of unknown) {
      const o = byKey.get(k);
      const p = o ? { key: o.key, collection: o.collection, folder: o.folder, path: o.path } : null;
      placements.set(id(ctx, k), p, p ? PLACEMENT_TTL_MS : RESOLVE_TTL_MS);
      out.set(k, p);
    }
  }
  return out;
}

/**
 * The ObjectLinks of an event from its posted RelatedObjects: Relation, LinkedObjectKey and
 * CommonName as sent (a missing LinkedObjectKey taken from the Href); Href canonical (the
 * object's own) when the object is known and within the sink's instance, whatever collection
 * path was posted (`/peripherals/<key>` included), else as sent.
 */
function objectLinks(sink: StoredObject, related: readonly RelatedObject[], placed: ReadonlyMap<string, Placement | null>): Record<string, unknown>[] {
  const instance = ownInstance(sink);
  return related.map((r) => {
    const k = keyOfRelated(r);
    const p = isObjectKey(k) ? placed.get(k) : undefined;
    const href = p && isWithin(instance, p) ? canonicalHref(p) : typeof r.Href === 'string' ? r.Href : null;
    return {
      $type: 'ObjectLinkItem',
      Href: href,
      LinkedObjectKey: r.LinkedObjectKey ?? (isObjectKey(k) ? k : null),
      CommonName: r.CommonName ?? null,
      Relation: r.Relation ?? null,
      MetaDataBson: r.MetaDataBson ?? null,
    };
  });
}

/**
 * Throws 403 unless every related object the posting names that exists lies within the caller's
 * scope (the caller's instance or one below it: what the caller's object reads may see). A
 * publisher could otherwise write pointers under another tenant's objects, and those pointers
 * are what `lastevent` and `forKeys` read. A key that names no object is accepted as before (its
 * link is kept as sent) but gets no pointer ({@link relatedPointerKeys}): the key may be given to
 * another tenant's object later (keys are time-ordered) or be one of a deleted object.
 */
function requireRelatedInScope(ctx: Ctx, related: readonly RelatedObject[], placed: ReadonlyMap<string, Placement | null>): void {
  related.forEach((r, i) => {
    const k = keyOfRelated(r);
    const p = isObjectKey(k) ? placed.get(k) : undefined;
    if (p && !isWithin(ctx.principal.instanceKey, p)) throw forbidden(`RelatedObjects[${i}] names an object outside the scope of your instance.`);
  });
}

/**
 * The keys of the related objects that get a pointer item: those that name an existing object
 * (in the caller's scope, once {@link requireRelatedInScope} passed).
 */
function relatedPointerKeys(placed: ReadonlyMap<string, Placement | null>): Set<string> {
  return new Set([...placed.entries()].filter(([, p]) => p !== null).map(([k]) => k));
}

/** An app by its key, when there is one (cached when found). */
async function appByKey(ctx: Ctx, key: string): Promise<StoredObject | undefined> {
  const k = id(ctx, key);
  const hit = appsByKey.get(k);
  if (hit) return hit;
  const o = await getObject(ctx.db, key);
  if (!o || o.collection !== APPS_COLLECTION) return undefined;
  appsByKey.set(k, o);
  return o;
}

/** What a posting names, resolved (see the module's comment). */
export interface ResolvedPosting {
  readonly sink: StoredObject;
  readonly app: StoredObject;
  readonly type: ResolvedType;
  readonly links: Record<string, unknown>[];
  /** The keys of the related objects that exist: the only ones given a pointer item. */
  readonly pointerKeys: ReadonlySet<string>;
}

/**
 * The sink, the app, the event type and the related objects' links of a posting to `folderKey`.
 * The reads by key go out together; an app found by key counts only when it is in the sink's
 * instance or an instance above it (else the AppKey is looked for as {@link resolveApp} does), and
 * the claim read beside it only when the app is that one. Errors as the steps give them: the sink
 * (403, 404) first, then a related object outside the caller's scope (403), then AppNotFound,
 * then EventTypeNotFound.
 */
export async function resolvePosting(ctx: Ctx, folderKey: string, posting: Pick<Posting, 'appKey' | 'eventTypeMoniker' | 'relatedObjects'>): Promise<ResolvedPosting> {
  const moniker = posting.eventTypeMoniker;
  const appKey = posting.appKey.toLowerCase();
  const byKey = isObjectKey(appKey);
  const [sink, keyed, claim, placed] = await readTogether(() =>
    Promise.all([
      sinkFolder(ctx, folderKey),
      byKey ? appByKey(ctx, appKey) : undefined,
      byKey && !types.has(typeId(ctx, appKey, moniker))
        ? claimOwner(ctx.db, monikerClaim(appKey, moniker.Namespace, moniker.Nickname)).then((owner) => ({ owner }))
        : undefined,
      relatedPlacements(ctx, posting.relatedObjects),
    ]),
  );
  // The reads above may have gone out before the caller's verdict (Route.readsFirst): the later
  // ones wait for it, so a refused caller costs those first reads only.
  await verdictIn(ctx);
  requireRelatedInScope(ctx, posting.relatedObjects, placed);
  const app = keyed && sink.instances.includes(ownInstance(keyed)) ? keyed : await resolveApp(ctx, sink, posting.appKey);
  const type = await resolveEventType(ctx, app, moniker, sink, app.key === appKey ? claim : undefined);
  return { sink, app, type, links: objectLinks(sink, posting.relatedObjects, placed), pointerKeys: relatedPointerKeys(placed) };
}
