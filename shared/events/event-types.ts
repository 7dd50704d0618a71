/**
 * Event types of an app and their membership in alarm definitions.
 *
 * An event type is an object of collection `eventtypes` placed in its app (folder = app key), with
 * Href `/api/f/<app folder>/apps/<app key>/eventtypes/<key>`. Each of its Monikers is a claim
 * unique within the app (409 DuplicateMoniker), written in the same transaction as the type.
 *
 * | call                                   | requests                                                   |
 * | -------------------------------------- | ---------------------------------------------------------- |
 * | add                                    | GetItem (app) + TransactWriteItems (type + moniker claims)  |
 * | list                                   | GetItem (app) + one Query a page                            |
 * | list by moniker                        | GetItem (app) + GetItem (claim) + GetItem (type)            |
 * | read / link                            | GetItem                                                     |
 * | update                                 | GetItem + TransactWriteItems (version-checked; claims added and released) |
 * | delete                                 | Query (type + alarm links) + TransactWriteItems (type, claims, links) |
 * | alarm: add                             | GetItem (alarm) + GetItem (type) + TransactWriteItems (both checked, link put) |
 * | alarm: list                            | GetItem (alarm) + Query (alarm index) + BatchGetItem        |
 * | alarm: remove                          | GetItem (alarm) + conditional DeleteItem                    |
 *
 * The reads are here; the writes (add, update, delete, alarm add and remove) are in
 * event-type-writes.ts. The apps and alarms functions load both with the first call on an event
 * type (event-type-operations.ts).
 */
import { EVENT_TYPES_COLLECTION, alarmMembers } from '../db/eventtypes-repo.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { claimOwner, getObject, getObjects } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { ApiError, notFound } from '../errors.ts';
import { monikerClaim } from '../model/claims.ts';
import { documentLink } from '../model/object-render.ts';
import { missIn, requireFolderInScope } from '../objects/tenant-scope.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { outOfScope } from '../objects/object-errors.ts';
import { pageOf, type Paging } from '../objects/paging.ts';
import { builtinApp, builtinEventTypeByKey, builtinEventTypes, isBuiltinAppKey } from './builtin-apps.ts';
import { monikersOf } from './monikers.ts';
import { eventTypeNotFound } from './resolve.ts';

/**
 * An object of `collection` that a path names by key under `folderKey`: its own folder, or a
 * folder (or instance) above it, so `/api/f/<instance_key>/apps/<app_key>` finds an app kept in a
 * sub-folder too. Scope-checked: one GetItem (a miss reads the path's folder to tell 403 from 404).
 */
async function locateUnder(ctx: Ctx, folderKey: string, collection: string, key: string, parentKey?: string): Promise<StoredObject> {
  const lower = key.toLowerCase();
  const builtin = builtinUnder(ctx, collection, lower, parentKey);
  if (builtin) {
    await requireFolderInScope(ctx, folderKey);
    return builtin;
  }
  const o = isObjectKey(lower) ? await getObject(ctx.db, lower, true) : undefined;
  // An event type's path ends with its app; the folders are those above the app.
  const folders = o && collection === EVENT_TYPES_COLLECTION ? o.path.slice(0, -1) : o?.path;
  if (o && o.collection === collection && folders!.includes(folderKey) && (parentKey === undefined || o.folder === parentKey.toLowerCase())) {
    const mine = o.path.indexOf(ctx.principal.instanceKey);
    // The caller's instance must hold the object, and the path's folder must not lie above it.
    if (mine < 0 || o.path.indexOf(folderKey) < mine) throw outOfScope();
    return o;
  }
  return missIn(ctx, folderKey);
}

/**
 * A built-in app or event type (builtin-apps.ts) a path names. Every installation's root holds
 * them, so every folder in scope shows them; they are placed in the caller's instance, the
 * nearest root the caller sees, so that their Hrefs answer the caller.
 */
function builtinUnder(ctx: Ctx, collection: string, key: string, parentKey: string | undefined): StoredObject | undefined {
  const at = ctx.principal.instanceKey;
  if (collection === 'apps') return isBuiltinAppKey(key) ? builtinApp(key, at) : undefined;
  if (collection === EVENT_TYPES_COLLECTION) return builtinEventTypeByKey(key, at, parentKey?.toLowerCase());
  return undefined;
}

/** The app a path names (`/api/f/<folder>/apps/<app_key>`), scope-checked: one GetItem. */
export function locateApp(ctx: Ctx, folderKey: string, appKey: string): Promise<StoredObject> {
  return locateUnder(ctx, folderKey, 'apps', appKey);
}

/** The event type a path names (`/api/f/<folder>/apps/<app>/eventtypes/<key>`), scope-checked: one GetItem. */
export function locateEventType(ctx: Ctx, folderKey: string, appKey: string, key: string): Promise<StoredObject> {
  return locateUnder(ctx, folderKey, EVENT_TYPES_COLLECTION, key, appKey);
}

/** A page of an app's event types. */
export async function listEventTypes(ctx: Ctx, folderKey: string, appKey: string, paging: Paging): Promise<StoredObject[]> {
  const app = await locateApp(ctx, folderKey, appKey);
  if (isBuiltinAppKey(app.key)) return builtinEventTypes(app).slice(paging.page * paging.pageSize, (paging.page + 1) * paging.pageSize);
  return pageOf(ctx.db, app.key, EVENT_TYPES_COLLECTION, paging);
}

/**
 * The event type of an app whose moniker matches (`?namespace=&nickname=`); either may be left
 * out (a missing namespace matches any). 404 when none matches.
 */
export async function findEventType(ctx: Ctx, folderKey: string, appKey: string, namespace: string | undefined, nickname: string | undefined): Promise<StoredObject> {
  const app = await locateApp(ctx, folderKey, appKey);
  const matches = (t: StoredObject) =>
    monikersOf(t.doc).some((m) => (namespace === undefined || m.Namespace === namespace) && (nickname === undefined || m.Nickname === nickname));
  if (isBuiltinAppKey(app.key)) {
    const hit = builtinEventTypes(app).find(matches);
    if (hit) return hit;
    throw eventTypeNotFound(`with the moniker ${namespace ?? '*'}/${nickname ?? '*'}`);
  }
  if (namespace !== undefined && nickname !== undefined) {
    const owner = await claimOwner(ctx.db, monikerClaim(app.key, namespace, nickname), true);
    const o = owner ? await getObject(ctx.db, owner, true) : undefined;
    if (o && o.collection === EVENT_TYPES_COLLECTION && o.folder === app.key) return o;
    throw eventTypeNotFound(`with the moniker ${namespace}/${nickname}`);
  }
  for (let page = 0; ; page++) {
    const items = await pageOf(ctx.db, app.key, EVENT_TYPES_COLLECTION, { page, pageSize: 1000 });
    const hit = items.find(matches);
    if (hit) return hit;
    if (items.length < 1000) break;
  }
  throw eventTypeNotFound(`with the moniker ${namespace ?? '*'}/${nickname ?? '*'}`);
}

// ---------------------------------------------------------------------------------------------
// Alarm definitions

/** The alarm definition a path names, scope-checked: one GetItem. */
export function locateAlarm(ctx: Ctx, folderKey: string, alarmKey: string): Promise<StoredObject> {
  return locateUnder(ctx, folderKey, 'alarmdefinitions', alarmKey);
}

/** The event types of an alarm definition (a page, in key order). */
export async function listAlarmEventTypes(ctx: Ctx, folderKey: string, alarmKey: string, paging: Paging): Promise<StoredObject[]> {
  const alarm = await locateAlarm(ctx, folderKey, alarmKey);
  const keys = (await alarmMembers(ctx.db, alarm.key)).slice(paging.page * paging.pageSize, (paging.page + 1) * paging.pageSize);
  if (keys.length === 0) return [];
  // Built-in types (fixed keys, no stored item) are rendered as the caller reads them (builtinUnder).
  const builtin = new Map(keys.map((k) => [k, builtinEventTypeByKey(k, ctx.principal.instanceKey)] as const).filter((e): e is [string, StoredObject] => e[1] !== undefined));
  const stored = keys.filter((k) => !builtin.has(k));
  const byKey = new Map((stored.length > 0 ? await getObjects(ctx.db, stored) : []).filter((o) => o.collection === EVENT_TYPES_COLLECTION).map((o) => [o.key, o]));
  return keys.flatMap((k) => builtin.get(k) ?? byKey.get(k) ?? []);
}

const TYPE_LINKS = ['meta', 'monikers', 'commonname', 'images', 'notes', 'connections', 'references'];

/** GET an event type's standard link (`<Href>/<link>`). */
export async function eventTypeLink(ctx: Ctx, folderKey: string, appKey: string, key: string, link: string): Promise<unknown> {
  if (link === 'takeownership') {
    throw new ApiError(405, 'MethodNotAllowed', 'An event type belongs to its app: takeownership is not available on event types.', { Allow: '' });
  }
  if (!TYPE_LINKS.includes(link)) throw notFound(`Event types have no "${link}".`);
  const o = await locateEventType(ctx, folderKey, appKey, key);
  // images, connections, references: event types have no relations.
  return documentLink(o.doc, link, ctx.ns) ?? [];
}
