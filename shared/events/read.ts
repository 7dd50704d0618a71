/**
 * Reading one event, its links, the last event of objects, and acknowledging an event.
 *
 * | call                               | requests                                              |
 * | ---------------------------------- | ----------------------------------------------------- |
 * | GET events/<key>                   | 1 GetItem (a miss reads the path's folder for 403/404) |
 * | GET events/<key>/connections       | 1 GetItem + 1 BatchGetItem of the related objects     |
 * | GET/POST lastevent                 | 1 Query (Limit 1, newest first) per key, in parallel; a key whose newest pointer is outside the caller's scope 1 more (`lastEventOf`) |
 * | POST events/<key>/acknowledgements | 1 GetItem + 1 conditional UpdateItem (re-read and retried if another acknowledgement got in first) |
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { getEvent, lastEventOf, updateEventDoc } from '../db/event-reads.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { getObjects, ownInstance } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { ApiError, ConditionFailed, conflict, notFound, validationFailed } from '../errors.ts';
import { documentLink } from '../model/object-render.ts';
import { typeNameOf } from '../model/type-tags.ts';
import { authorName, missIn, requireFolderInScope, requireRole } from '../objects/tenant-scope.ts';
import { readSteps, type Ctx } from '../objects/domain-context.ts';
import { outOfScope, wrongType } from '../objects/object-errors.ts';
import { checkLimits, isPlainObject } from '../objects/validate.ts';
import { ACK_TYPE, renderAny, renderSummary } from './event-render.ts';

/** Keys one lastevent call may ask for. */
const MAX_LASTEVENT_KEYS = 1000;
/** Queries a lastevent call runs at once. */
const LASTEVENT_CONCURRENCY = 64;

const nowEpoch = (ctx: Ctx) => Math.floor(ctx.now.getTime() / 1000);

/**
 * The event a path names (`/api/f/<folder>/events/<key>`): the event's own folder, or a folder
 * above it, within the caller's scope. 403 for a folder outside the scope, else 404.
 */
export async function locateEvent(ctx: Ctx, folderKey: string, key: string): Promise<StoredObject> {
  const lower = key.toLowerCase();
  const ev = isObjectKey(lower) ? await getEvent(ctx.db, lower, nowEpoch(ctx)) : undefined;
  // An event's path runs from the root down to its own folder.
  if (ev && ev.path.includes(folderKey)) {
    const mine = ev.path.indexOf(ctx.principal.instanceKey);
    // The caller's instance must hold the event, and the path's folder must not lie above it.
    if (mine < 0 || ev.path.indexOf(folderKey) < mine) throw outOfScope();
    return ev;
  }
  return missIn(ctx, folderKey);
}

/** True when an object lies within the caller's scope. */
const inScope = (ctx: Ctx, o: StoredObject) => o.key === ctx.principal.instanceKey || o.path.includes(ctx.principal.instanceKey);

/** GET `events/<key>/<link>`. */
export async function eventLink(ctx: Ctx, folderKey: string, key: string, link: string): Promise<unknown> {
  if (link === 'takeownership') {
    throw new ApiError(405, 'MethodNotAllowed', 'An event has no owner to take: takeownership is not available on events.', { Allow: '' });
  }
  const known = ['connections', 'meta', 'monikers', 'commonname', 'images', 'notes', 'references'];
  if (!known.includes(link)) throw notFound(`Events have no "${link}".`);
  const ev = await locateEvent(ctx, folderKey, key);
  // images, references: nothing refers to an event.
  if (link !== 'connections') return documentLink(ev.doc, link, ctx.ns) ?? [];
  const links = Array.isArray(ev.doc.ObjectLinks) ? (ev.doc.ObjectLinks as Array<{ LinkedObjectKey?: unknown }>) : [];
  const keys = links.map((l) => (typeof l.LinkedObjectKey === 'string' ? l.LinkedObjectKey.toLowerCase() : '')).filter(isObjectKey);
  if (keys.length === 0) return [];
  const found = await getObjects(ctx.db, [...new Set(keys)]);
  return found.filter((o) => inScope(ctx, o)).map((o) => renderAny(o, ctx.ns));
}

/** The keys of a lastevent body: a JSON array of object keys (others are ignored). */
function lastEventKeys(body: unknown): string[] {
  if (!Array.isArray(body)) throw validationFailed('The body must be a JSON array of object keys.');
  if (body.length > MAX_LASTEVENT_KEYS) throw validationFailed(`At most ${MAX_LASTEVENT_KEYS} keys may be asked for at once.`);
  const keys = body.map((k) => (typeof k === 'string' ? k.trim().toLowerCase() : '')).filter(isObjectKey);
  return [...new Set(keys)];
}

/**
 * The most recent event (OccurredOn at or after `since`) within the caller's scope of each object,
 * whatever was published outside that scope (see `lastEventOf`); keys without one are left out,
 * never revealed.
 */
export async function lastEvents(ctx: Ctx, folderKey: string, since: Date | undefined, body: unknown): Promise<Record<string, unknown>[]> {
  await requireFolderInScope(ctx, folderKey);
  const keys = lastEventKeys(body);
  const sinceIso = since?.toISOString();
  const found = new Array<Record<string, unknown> | undefined>(keys.length);
  let next = 0;
  // The first key's read goes out at once; the others wait for the caller's verdict while it is not in.
  const step = readSteps(ctx);
  const worker = async () => {
    while (next < keys.length) {
      const i = next++;
      await step();
      const p = await lastEventOf(ctx.db, keys[i]!, ctx.principal.instanceKey, sinceIso, nowEpoch(ctx));
      if (p) found[i] = renderSummary(p, ctx.ns);
    }
  };
  await Promise.all(Array.from({ length: Math.min(LASTEVENT_CONCURRENCY, keys.length) }, worker));
  return found.filter((x): x is Record<string, unknown> => x !== undefined);
}

/** The AlarmAcknowledgementItem a client sends: `Comment` (its `$type` may be left out). */
function parseAcknowledgement(body: unknown): { Comment: string | null; extra: Record<string, unknown> } {
  const b = body === undefined || body === null ? {} : body;
  if (!isPlainObject(b)) throw validationFailed('The body must be an AlarmAcknowledgementItem object.');
  if (b.$type !== undefined && b.$type !== null && typeNameOf(b.$type) !== ACK_TYPE) throw wrongType(String(b.$type), [ACK_TYPE]);
  if (b.Comment !== undefined && b.Comment !== null && (typeof b.Comment !== 'string' || b.Comment.length > 4096)) {
    throw validationFailed('Comment must be a string of at most 4096 characters.');
  }
  checkLimits(b);
  const { $type: _t, Comment, AcknowledgedBy: _by, AcknowledgedOn: _on, ...extra } = b;
  return { Comment: (Comment as string | undefined) ?? null, extra };
}

const acknowledgementNotRequired = (): ApiError =>
  conflict('AcknowledgementNotRequired', 'This event does not require acknowledgement.');

/**
 * Acknowledges an event that requires it: appends an AlarmAcknowledgementItem (the server sets
 * AcknowledgedBy and AcknowledgedOn). The write is conditional on the event's version and retried
 * on a fresh read, so parallel acknowledgements are all kept. Returns the updated event.
 */
export async function acknowledge(ctx: Ctx, folderKey: string, key: string, body: unknown): Promise<StoredObject> {
  requireRole(ctx, 'Operator', 'acknowledge events');
  const { Comment, extra } = parseAcknowledgement(body);
  for (let attempt = 1; ; attempt++) {
    const ev = await locateEvent(ctx, folderKey, key);
    const ack = { $type: ACK_TYPE, Comment, ...extra, AcknowledgedBy: authorName(ctx, ownInstance(ev)), AcknowledgedOn: ctx.now.toISOString() };
    if (ev.doc.RequiresAcknowledgement !== true) throw acknowledgementNotRequired();
    const prior = Array.isArray(ev.doc.AlarmAcknowledgements) ? ev.doc.AlarmAcknowledgements : [];
    try {
      return await updateEventDoc(ctx.db, ev, { ...ev.doc, AlarmAcknowledgements: [...prior, ack] });
    } catch (err) {
      if (!(err instanceof ConditionFailed) || attempt >= 25) throw err;
      await sleep(Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()));
    }
  }
}
