/**
 * The writes of event types and of their membership in alarm definitions (see event-types.ts for
 * the reads and the cost of each call): add, update and delete an event type with its moniker
 * claims, add and remove an alarm definition's event type. Part of what the apps and alarms
 * functions load with the first call on an event type (event-type-operations.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { putAlarmLink } from '../db/alarm-link-writes.ts';
import { EVENT_TYPES_COLLECTION, deleteAlarmLink, deleteAlarmLinkItems, eventTypeWithAlarms } from '../db/eventtypes-repo.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { getObject, ownInstance } from '../db/objects-repo.ts';
import type { Claim, StoredObject } from '../model/stored-object.ts';
import { conditionFailedAt, createObject, deleteObject, failedClaim, isTransactionConflict, replaceObject } from '../db/object-writes.ts';
import { ApiError, ConditionFailed, conflict, notFound, validationFailed } from '../errors.ts';
import { newKey, placeIn } from '../model/placement.ts';
import { requireRole } from '../objects/tenant-scope.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { concurrencyConflict, objectNotFound } from '../objects/object-errors.ts';
import { canonicalJson, checkDocSize } from '../objects/validate.ts';
import { forgetBuiltinAlarms } from './builtin-alarms.ts';
import { builtinEventTypeByKey, isBuiltinAppKey } from './builtin-apps.ts';
import { EVENT_TYPE_NAME, eventTypeClaims, parseEventTypeBody } from './event-type-body.ts';
import { locateAlarm, locateApp, locateEventType } from './event-types.ts';
import { eventTypeNotFound, forgetEventType } from './resolve.ts';

const MAX_ATTEMPTS = 25;

/** The built-in apps' event types are fixed (builtin-apps.ts): read and linked, never written. */
function refuseBuiltin(appKey: string): void {
  if (isBuiltinAppKey(appKey)) throw new ApiError(405, 'MethodNotAllowed', 'The event types of a built-in app cannot be changed.', { Allow: 'GET' });
}
const backoff = (attempt: number) => sleep(Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()));

const duplicateMoniker = (c: Claim): ApiError => {
  const [ns, nick] = c.value.split('\u0000');
  return conflict('DuplicateMoniker', `The app already has an event type with the moniker ${ns ? `${ns}/` : ''}${nick}.`);
};

const claimId = (c: Claim) => `${c.scope}\u0000${c.kind}\u0000${c.value}`;
const minus = (a: readonly Claim[], b: readonly Claim[]) => {
  const ids = new Set(b.map(claimId));
  return a.filter((c) => !ids.has(claimId(c)));
};

/** Adds an event type to an app. */
export async function addEventType(ctx: Ctx, folderKey: string, appKey: string, body: unknown): Promise<StoredObject> {
  requireRole(ctx, 'Operator', 'change event types');
  const input = await parseEventTypeBody(body);
  checkDocSize(input.doc);
  const app = await locateApp(ctx, folderKey, appKey);
  refuseBuiltin(app.key);
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

/** Full replace of an event type (the spec's GET-with-body, and PUT). */
export async function updateEventType(ctx: Ctx, folderKey: string, appKey: string, key: string, body: unknown): Promise<void> {
  requireRole(ctx, 'Operator', 'change event types');
  const input = await parseEventTypeBody(body);
  checkDocSize(input.doc);
  for (let attempt = 1; ; attempt++) {
    const cur = await locateEventType(ctx, folderKey, appKey, key);
    refuseBuiltin(cur.folder);
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
    refuseBuiltin(cur.folder);
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
  // A built-in type is in every root instance, so above every alarm definition: linkable by all.
  if (builtinEventTypeByKey(ref.key, alarm.instances[0] ?? ownInstance(alarm), ref.appKey)) {
    try {
      await putAlarmLink(ctx.db, alarm.key, ref.key, ctx.now.toISOString(), true);
    } catch (err) {
      if (err instanceof ConditionFailed) throw objectNotFound();
      throw err;
    }
    forgetBuiltinAlarms();
    return;
  }
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

/** Removes an event type from an alarm definition; 404 when it is not a member. */
export async function removeAlarmEventType(ctx: Ctx, folderKey: string, alarmKey: string, eventTypeKey: string): Promise<void> {
  requireRole(ctx, 'Operator', 'change alarm definitions');
  const alarm = await locateAlarm(ctx, folderKey, alarmKey);
  const key = eventTypeKey.toLowerCase();
  if (!isObjectKey(key) || !(await deleteAlarmLink(ctx.db, alarm.key, key))) {
    throw notFound('The event type is not in this alarm definition.');
  }
  forgetEventType(key);
  forgetBuiltinAlarms();
}
