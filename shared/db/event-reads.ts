/**
 * Reading stored events: one event by key (and its acknowledgement's update), a folder's timeline,
 * an object's event pointers and its last event (the item layout is in events-repo.ts, which
 * writes them). A module of its own so that the events family's publish, its hot call, does not
 * load the reads at a cold start (shared/events/read-operations.ts loads on first use).
 */
import { stringifyJson } from '../json.ts';
import { ConditionFailed } from '../errors.ts';
import type { Db } from './client.ts';
import { packEventDoc } from './event-doc.ts';
import { EVENTS_COLLECTION, type EventSummary } from './events-repo.ts';
import { OBJECT_SK, eventFolderPk, eventPointerPk, objectPk } from './item-keys.ts';
import { fromItem, getItem } from './objects-repo.ts';
import { queryPage, updateVersioned } from './requests.ts';
import type { StoredObject } from '../model/stored-object.ts';

/** An event by key (strongly consistent), or undefined when missing, expired or not an event. */
export async function getEvent(db: Db, key: string, nowEpoch: number): Promise<StoredObject | undefined> {
  const item = await getItem(db, objectPk(key), OBJECT_SK, true);
  if (!item || item.Coll !== EVENTS_COLLECTION) return undefined;
  if (typeof item.ttl === 'number' && item.ttl <= nowEpoch) return undefined;
  return fromItem(item);
}

/**
 * Replaces an event's document if its version is still `event.version` (acknowledgements):
 * bumps the version. Throws {@link ConditionFailed} when another writer got in first.
 */
export async function updateEventDoc(db: Db, event: StoredObject, doc: Record<string, unknown>): Promise<StoredObject> {
  const updated = await updateVersioned(db, { PK: objectPk(event.key), SK: OBJECT_SK }, event.version, {
    // Packed like a new event's (OccurredOn kept: the write does not see the timeline key).
    set: { Doc: stringifyJson(packEventDoc(doc, { key: event.key, folder: event.folder, occurredOn: undefined })) },
    bump: true,
  });
  if (!updated) throw new ConditionFailed('The event changed.');
  return { ...event, doc, version: event.version + 1 };
}

/** A range of `OccurredOn` sort keys: `from` included, `to` excluded (ISO strings or full sort keys). */
export interface SortRange {
  readonly from?: string;
  readonly to?: string;
}

function rangeCondition(attr: string, range: SortRange, values: Record<string, unknown>): string {
  // `#` sorts before every digit, so `<from>` ≤ `<from>#key` and `<to>` ≤ any key at `to`.
  if (range.from && range.to) {
    values[':from'] = range.from;
    values[':to'] = range.to;
    return ` AND ${attr} BETWEEN :from AND :to`;
  }
  if (range.from) {
    values[':from'] = range.from;
    return ` AND ${attr} >= :from`;
  }
  if (range.to) {
    values[':to'] = range.to;
    return ` AND ${attr} < :to`;
  }
  return '';
}

export interface EventPage {
  readonly items: StoredObject[];
  /** The timeline sort key of each item (same order as `items`). */
  readonly sortKeys: string[];
  /** Pass back to read on; undefined at the end of the range. */
  readonly next: Record<string, unknown> | undefined;
  /** Items DynamoDB read (before the TTL filter): the cost of the page. */
  readonly scanned: number;
}

/**
 * Events of one folder, newest first, with their timeline sort key in [from, to), one Query of at
 * most `limit` items.
 */
export async function queryFolderEvents(
  db: Db,
  folder: string,
  range: SortRange,
  limit: number,
  start?: Record<string, unknown>,
  nowEpoch = Math.floor(Date.now() / 1000),
): Promise<EventPage> {
  const page = await queryNewest(db, { index: 'GSI1', pkAttr: 'GSI1PK', pk: eventFolderPk(folder), skAttr: 'GSI1SK', range, limit, start, nowEpoch });
  return { ...page, items: page.items.map(fromItem), sortKeys: page.items.map((i) => i.GSI1SK as string) };
}

/**
 * One Query of a partition (of the table or an index), newest first, sort key in [from, to),
 * at most `limit` items, expired ones left out (TTL deletion is lazy: an expired event is never
 * served). `scanned` counts what DynamoDB read before that filter: the cost of the page.
 */
async function queryNewest(
  db: Db,
  q: {
    readonly index?: string;
    readonly pkAttr: string;
    readonly pk: string;
    readonly skAttr: string;
    readonly range: SortRange;
    readonly limit: number;
    readonly start?: Record<string, unknown> | undefined;
    readonly nowEpoch: number;
    /** Only items whose `Instances` list this instance (pointers: events within its scope). */
    readonly instance?: string;
  },
): Promise<{ items: Record<string, unknown>[]; next: Record<string, unknown> | undefined; scanned: number }> {
  const values: Record<string, unknown> = { ':pk': q.pk, ':now': q.nowEpoch };
  const names: Record<string, string> = { '#ttl': 'ttl' };
  let filter = '(attribute_not_exists(#ttl) OR #ttl > :now)';
  if (q.instance !== undefined) {
    values[':instance'] = q.instance;
    names['#instances'] = 'Instances';
    filter += ' AND contains(#instances, :instance)';
  }
  const page = await queryPage(
    db,
    {
      ...(q.index ? { IndexName: q.index } : {}),
      KeyConditionExpression: `${q.pkAttr} = :pk` + rangeCondition(q.skAttr, q.range, values),
      FilterExpression: filter,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: q.limit,
    },
    q.start,
  );
  // BETWEEN includes `to` itself; a range excludes its end.
  const to = q.range.to;
  return { ...page, items: page.items.filter((i) => !to || (i[q.skAttr] as string) < to) };
}

/** A pointer item: an event related to an object. */
export interface EventPointer extends EventSummary {
  readonly ObjectKey: string;
  /** The event's folder (pointers written before it was recorded lack it). */
  readonly Folder?: string;
  readonly Instances: string[];
  /** The event's timeline sort key. */
  readonly SK: string;
}

export interface PointerPage {
  readonly items: EventPointer[];
  readonly next: Record<string, unknown> | undefined;
  readonly scanned: number;
}

/** Events related to an object, newest first, sort key in [from, to): one Query of at most `limit` pointers. */
export async function queryPointers(
  db: Db,
  objectKey: string,
  range: SortRange,
  limit: number,
  start?: Record<string, unknown>,
  nowEpoch = Math.floor(Date.now() / 1000),
): Promise<PointerPage> {
  const page = await queryNewest(db, { pkAttr: 'PK', pk: eventPointerPk(objectKey), skAttr: 'SK', range, limit, start, nowEpoch });
  return { ...page, items: page.items as unknown as EventPointer[] };
}

/**
 * Pointers {@link lastEventOf} reads at most for one object: its first Query reads the newest one
 * alone, the second up to this many less one.
 */
const LAST_EVENT_MAX_POINTERS = 25;

/**
 * The newest event pointer of an object at or after `since` (ISO) whose event lies within the
 * scope of `instanceKey` (its `Instances` list it), or undefined.
 *
 * Reading only the newest pointer let an event outside the caller's scope, dated later, hide the
 * caller's own. Instead the pointers are read newest first and those outside the scope skipped
 * (a filter in the Query, so they cost their read but are not sent): one Query of the newest
 * pointer (the usual answer, at the cost the call always had), and only when it is outside the
 * scope a second Query of the next {@link LAST_EVENT_MAX_POINTERS} − 1. Past that bound the key
 * is answered as having no event: never another scope's event, at worst a missing one.
 *
 * Why the bound is enough: a posting may relate only objects its publisher can see
 * (`resolvePosting`), so a pointer under an object's key is written by the object's own instance
 * or an instance above it, and one outside the caller's scope (when the caller may see the object
 * at all) only by an instance above the caller, which holds every right over the caller's objects
 * anyway, or before that rule (pointers already stored keep their layout and are read as before).
 */
export async function lastEventOf(
  db: Db,
  objectKey: string,
  instanceKey: string,
  since: string | undefined,
  nowEpoch = Math.floor(Date.now() / 1000),
): Promise<EventPointer | undefined> {
  const query = { pkAttr: 'PK', pk: eventPointerPk(objectKey), skAttr: 'SK', range: since ? { from: since } : {}, nowEpoch, instance: instanceKey };
  const newest = await queryNewest(db, { ...query, limit: 1 });
  if (newest.items[0] || !newest.next) return newest.items[0] as unknown as EventPointer | undefined;
  const more = await queryNewest(db, { ...query, limit: LAST_EVENT_MAX_POINTERS - 1, start: newest.next });
  return more.items[0] as unknown as EventPointer | undefined;
}
