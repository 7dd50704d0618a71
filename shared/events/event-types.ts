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
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  EVENT_TYPES_COLLECTION,
  alarmMembers,
  deleteAlarmLink,
  deleteAlarmLinkItems,
  eventTypeWithAlarms,
  putAlarmLink,
} from '../db/eventtypes-repo.ts';
import { isObjectKey } from '../db/keys.ts';
import { claimOwner, getObject, getObjects, type Claim, type StoredObject } from '../db/objects-repo.ts';
import { conditionFailedAt, createObject, deleteObject, failedClaim, isTransactionConflict, replaceObject } from '../db/object-writes.ts';
import { ApiError, ConditionFailed, conflict, notFound, validationFailed } from '../errors.ts';
import { monikerClaim } from '../model/claims.ts';
import { documentLink } from '../model/render.ts';
import { newKey, placeIn } from '../model/placement.ts';
import { missIn, requireRole } from '../objects/access.ts';
import type { Ctx } from '../objects/context.ts';
import { concurrencyConflict, objectNotFound, outOfScope } from '../objects/errors.ts';
import { pageOf, type Paging } from '../objects/paging.ts';
import { canonicalJson, checkDocSize } from '../objects/validate.ts';
import { EVENT_TYPE_NAME, eventTypeClaims, monikersOf, parseEventTypeBody } from './event-type-body.ts';
import { eventTypeNotFound, forgetEventType } from './resolve.ts';

const MAX_ATTEMPTS = 25;
const backoff = (attempt: number) => sleep(Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()));

export const duplicateMoniker = (c: Claim): ApiError => {
  const [ns, nick] = c.value.split('\u0000');
  return conflict('DuplicateMoniker', `The app already has an event type with the moniker ${ns ? `${ns}/` : ''}${nick}.`);
};

const claimId = (c: Claim) => `${c.scope}\u0000${c.kind}\u0000${c.value}`;
const minus = (a: readonly Claim[], b: readonly Claim[]) => {
  const ids = new Set(b.map(claimId));
  return a.filter((c) => !ids.has(claimId(c)));
};

/**
 * An object of `collection` that a path names by key under `folderKey`: its own folder, or a
 * folder (or instance) above it, so `/api/f/<instance_key>/apps/<app_key>` finds an app kept in a
 * sub-folder too. Scope-checked: one GetItem (a miss reads the path's folder to tell 403 from 404).
 */
async function locateUnder(ctx: Ctx, folderKey: string, collection: string, key: string, parentKey?: string): Promise<StoredObject> {
  const lower = key.toLowerCase();
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

/** The app a path names (`/api/f/<folder>/apps/<app_key>`), scope-checked: one GetItem. */
export function locateApp(ctx: Ctx, folderKey: string, appKey: string): Promise<StoredObject> {
  return locateUnder(ctx, folderKey, 'apps', appKey);
}

/** The event type a path names (`/api/f/<folder>/apps/<app>/eventtypes/<key>`), scope-checked: one GetItem. */
export function locateEventType(ctx: Ctx, folderKey: string, appKey: string, key: string): Promise<StoredObject> {
  return locateUnder(ctx, folderKey, EVENT_TYPES_COLLECTION, key, appKey);
}

/** Adds an event type to an app. */
export async function addEventType(ctx: Ctx, folderKey: string, appKey: string, body: unknown): Promise<StoredObject> {
  requireRole(ctx, 'Operator', 'change event types');
  const input = await parseEventTypeBody(body);
  checkDocSize(input.doc);
  const app = await locateApp(ctx, folderKey, appKey);
  const key = newKey();
  const o: StoredObject = { key, collection: EVENT_TYPES_COLLECTION, type: EVENT_TYPE_NAME, ...placeIn(app), version: 1, doc: input.doc };
  const claims = eventTypeClaims(app.key, o.doc);
  for (let attempt = 1; ; attempt++) {
    try {
      await createObject(ctx.db, o, claims);
      return o;
    } catch (err) {
      const claim = failedClaim(err, claims, 1);
      if (claim) throw duplicateMoniker(claim);
      if (isTransactionConflict(err) && attempt < MAX_ATTEMPTS) {
        await backoff(attempt);
        continue;
      }
      throw err;
    }
  }
}

/** A page of an app's event types. */
export async function listEventTypes(ctx: Ctx, folderKey: string, appKey: string, paging: Paging): Promise<StoredObject[]> {
  const app = await locateApp(ctx, folderKey, appKey);
  return pageOf(ctx.db, app.key, EVENT_TYPES_COLLECTION, paging);
}

/**
 * The event type of an app whose moniker matches (`?namespace=&nickname=`); either may be left
 * out (a missing namespace matches any). 404 when none matches.
 */
export async function findEventType(ctx: Ctx, folderKey: string, appKey: string, namespace: string | undefined, nickname: string | undefined): Promise<StoredObject> {
  const app = await locateApp(ctx, folderKey, appKey);
  if (namespace !== undefined && nickname !== undefined) {
    const owner = await claimOwner(ctx.db, monikerClaim(app.key, namespace, nickname), true);
    const o = owner ? await getObject(ctx.db, owner, true) : undefined;
    if (o && o.collection === EVENT_TYPES_COLLECTION && o.folder === app.key) return o;
    throw eventTypeNotFound(`with the moniker ${namespace}/${nickname}`);
  }
  for (let page = 0; ; page++) {
    const items = await pageOf(ctx.db, app.key, EVENT_TYPES_COLLECTION, { page, pageSize: 1000 });
    const hit = items.find((t) =>
      monikersOf(t.doc).some((m) => (namespace === undefined || m.Namespace === namespace) && (nickname === undefined || m.Nickname === nickname)),
    );
    if (hit) return hit;
    if (items.length < 1000) break;
  }
  throw eventTypeNotFound(`with the moniker ${namespace ?? '*'}/${nickname ?? '*'}`);
}

/** Full replace of an event type (the spec's GET-with-body, and PUT). */
export async function updateEventType(ctx: Ctx, folderKey: string, appKey: string, key: string, body: unknown): Promise<void> {
  requireRole(ctx, 'Operator', 'change event types');
  const input = await parseEventTypeBody(body);
  checkDocSize(input.doc);
  for (let attempt = 1; ; attempt++) {
    const cur = await locateEventType(ctx, folderKey, appKey, key);
    if (input.version !== undefined && input.version !== cur.version) throw concurrencyConflict(cur.version);
    const doc = { ...input.doc, ...(cur.doc.Notes !== undefined ? { Notes: cur.doc.Notes } : {}) };
    if (canonicalJson(doc) === canonicalJson(cur.doc)) return;
    const next: StoredObject = { ...cur, doc, version: cur.version + 1 };
    const before = eventTypeClaims(cur.folder, cur.doc);
    const after = eventTypeClaims(cur.folder, next.doc);
    const add = minus(after, before);
    try {
      await replaceObject(ctx.db, next, cur.version, add, minus(before, after));
      forgetEventType(cur.key);
      return;
    } catch (err) {
      const claim = failedClaim(err, add, 1);
      if (claim) throw duplicateMoniker(claim);
      const retry = conditionFailedAt(err, 0) || isTransactionConflict(err);
      if (!retry || attempt >= MAX_ATTEMPTS) {
        if (conditionFailedAt(err, 0)) throw concurrencyConflict(cur.version + 1);
        throw err;
      }
      await backoff(attempt);
    }
  }
}

/** Deletes an event type with its moniker claims and alarm links. */
export async function removeEventType(ctx: Ctx, folderKey: string, appKey: string, key: string): Promise<void> {
  requireRole(ctx, 'Operator', 'change event types');
  for (let attempt = 1; ; attempt++) {
    const cur = await locateEventType(ctx, folderKey, appKey, key);
    const rec = await eventTypeWithAlarms(ctx.db, cur.key);
    if (!rec) throw objectNotFound();
    try {
      await deleteObject(ctx.db, rec.type, eventTypeClaims(rec.type.folder, rec.type.doc), deleteAlarmLinkItems(ctx.db, rec.type.key, rec.alarmKeys));
      forgetEventType(cur.key);
      return;
    } catch (err) {
      const retry = conditionFailedAt(err, 0) || isTransactionConflict(err);
      if (!retry || attempt >= MAX_ATTEMPTS) throw err;
      await backoff(attempt);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Alarm definitions

/** The alarm definition a path names, scope-checked: one GetItem. */
function locateAlarm(ctx: Ctx, folderKey: string, alarmKey: string): Promise<StoredObject> {
  return locateUnder(ctx, folderKey, 'alarmdefinitions', alarmKey);
}

const EVENT_TYPE_HREF = /\/apps\/([0-9a-fA-F]{24})\/eventtypes\/([0-9a-fA-F]{24})\/?$/;

/**
 * The event type an alarm PUT body names: a JSON string holding the event type's Href (relative
 * or absolute); an `{"Href": ...}` object and a bare event type key are accepted too.
 */
export function eventTypeRef(body: unknown): { appKey?: string; key: string } {
  const text = typeof body === 'string' ? body : body && typeof body === 'object' && typeof (body as { Href?: unknown }).Href === 'string' ? (body as { Href: string }).Href : undefined;
  if (text !== undefined) {
    const t = text.trim().split('?')[0]!;
    const m = EVENT_TYPE_HREF.exec(t);
    if (m) return { appKey: m[1]!.toLowerCase(), key: m[2]!.toLowerCase() };
    if (isObjectKey(t.toLowerCase())) return { key: t.toLowerCase() };
  }
  throw validationFailed('The body must be a JSON string holding the Href of an event type (/api/f/<folder>/apps/<app>/eventtypes/<key>).');
}

/** Adds an event type to an alarm definition (idempotent). */
export async function addAlarmEventType(ctx: Ctx, folderKey: string, alarmKey: string, body: unknown): Promise<void> {
  requireRole(ctx, 'Operator', 'change alarm definitions');
  const ref = eventTypeRef(body);
  const alarm = await locateAlarm(ctx, folderKey, alarmKey);
  const t = await getObject(ctx.db, ref.key, true);
  const visible =
    t && t.collection === EVENT_TYPES_COLLECTION && (ref.appKey === undefined || t.folder === ref.appKey) && t.path.includes(ctx.principal.instanceKey);
  if (!visible) throw eventTypeNotFound(`with the key ${ref.key}`);
  try {
    await putAlarmLink(ctx.db, alarm.key, t.key, ctx.now.toISOString());
  } catch (err) {
    if (err instanceof ConditionFailed) {
      if (conditionFailedAt(err, 0)) throw eventTypeNotFound(`with the key ${ref.key}`);
      throw objectNotFound();
    }
    throw err;
  }
  forgetEventType(t.key);
}

/** The event types of an alarm definition (a page, in key order). */
export async function listAlarmEventTypes(ctx: Ctx, folderKey: string, alarmKey: string, paging: Paging): Promise<StoredObject[]> {
  const alarm = await locateAlarm(ctx, folderKey, alarmKey);
  const keys = (await alarmMembers(ctx.db, alarm.key)).slice(paging.page * paging.pageSize, (paging.page + 1) * paging.pageSize);
  if (keys.length === 0) return [];
  return (await getObjects(ctx.db, keys)).filter((o) => o.collection === EVENT_TYPES_COLLECTION);
}

/** Removes an event type from an alarm definition; 404 when it is not a member. */
export async function removeAlarmEventType(ctx: Ctx, folderKey: string, alarmKey: string, eventTypeKey: string): Promise<void> {
  requireRole(ctx, 'Operator', 'change alarm definitions');
  const alarm = await locateAlarm(ctx, folderKey, alarmKey);
  const key = eventTypeKey.toLowerCase();
  if (!isObjectKey(key) || !(await deleteAlarmLink(ctx.db, alarm.key, key))) {
    throw notFound('The event type is not in this alarm definition.');
  }
  forgetEventType(key);
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
