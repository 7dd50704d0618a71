/**
 * Event storage. An event is an object item (`O#<key>` / `A`, collection `events`) whose GSI1 is
 * its folder's event timeline (`EV#<folder>` / `<OccurredOn ISO>#<key>`), so a page of events
 * newest first with a date range is one bounded Query with the range in the key condition. Each
 * related object gets a pointer item (`EP#<objectKey>` / `<OccurredOn ISO>#<key>`) carrying the
 * event summary and the event's folder, so "last event of an object" is one Query with Limit 1 and
 * "events of these objects" reads only their pointers. The event and its pointers are written in
 * one transaction (an event without related objects: one conditional PutItem). Events of a non-logging type are written as a short-lived `LIVE#<key>` item that
 * only the fan-out reads.
 *
 * | item          | PK                 | SK                         | GSI1 (PK / SK)                      |
 * | ------------- | ------------------ | -------------------------- | ----------------------------------- |
 * | event         | `O#<eventKey>`     | `A`                        | `EV#<folder>` / `<occurred>#<key>`  |
 * | event pointer | `EP#<objectKey>`   | `<occurred>#<eventKey>`    |                                     |
 * | live event    | `LIVE#<eventKey>`  | `A`                        |                                     |
 *
 * Event items carry no GSI2/GSI3 keys: nothing lists events by instance partition or by name, and
 * each index key would cost a write per event.
 */
import { stringifyJson } from '../json.ts';
import { PutCommand, QueryCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue as SdkAttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue as LambdaAttributeValue, DynamoDBRecord } from 'aws-lambda';
import { ConditionFailed } from '../errors.ts';
import type { Db } from './client.ts';
import { OBJECT_SK, eventFolderPk, eventPointerPk, eventSortKey, liveEventPk, objectPk } from './keys.ts';
import { fromItem, getItem, send, toItem, transact, type StoredObject } from './objects-repo.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** The collection of event objects. */
export const EVENTS_COLLECTION = 'events';

/** Summary kept on each pointer item (the EventMessageSummaryItem fields). */
export interface EventSummary {
  readonly EventKey: string;
  readonly EventTypeKey: string;
  readonly AppKey: string;
  readonly OccurredOn: string;
  readonly PublishedOn: string;
  readonly Priority: number;
  readonly MessageShort: string | null;
}

export interface EventWrite {
  /** The event as an object (collection `events`, type `EventMessageData`). */
  readonly event: StoredObject;
  /** `OccurredOn` as `toISOString()` (fixed width, so text order is time order). */
  readonly occurredOn: string;
  /** Keys of the related objects (one pointer item each). */
  readonly relatedKeys: readonly string[];
  readonly summary: EventSummary;
  /** Epoch seconds after which the event expires. */
  readonly expiresAt: number;
}

export function eventItem(w: EventWrite): Record<string, unknown> {
  const { GSI2PK: _p2, GSI2SK: _s2, GSI3PK: _p3, GSI3SK: _s3, ...item } = toItem(w.event);
  return {
    ...item,
    GSI1PK: eventFolderPk(w.event.folder),
    GSI1SK: eventSortKey(w.occurredOn, w.event.key),
    Occurred: w.occurredOn,
    ttl: w.expiresAt,
  };
}

function pointerItems(w: EventWrite): Record<string, unknown>[] {
  return [...new Set(w.relatedKeys)].map((k) => ({
    PK: eventPointerPk(k),
    SK: eventSortKey(w.occurredOn, w.event.key),
    ...w.summary,
    ObjectKey: k,
    Folder: w.event.folder,
    Instances: [...w.event.instances],
    ttl: w.expiresAt,
  }));
}

/** Most pointer items one event may have (a transaction holds at most 100 items). */
export const MAX_POINTERS = 99;

/**
 * Stores an event and its pointers in one transaction. With `idempotent`, a second write of the
 * same key is a no-op (stream consumers retry), reported as `false`.
 */
export async function putEvent(db: Db, w: EventWrite, idempotent = false): Promise<boolean> {
  const pointers = pointerItems(w).slice(0, MAX_POINTERS);
  if (pointers.length === 0) {
    // Nothing to keep consistent with: one conditional PutItem (a transaction costs twice the writes).
    try {
      await send(db, new PutCommand({ TableName: db.tableName, Item: eventItem(w), ConditionExpression: 'attribute_not_exists(PK)' }));
      return true;
    } catch (err) {
      if (idempotent && (err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
      if ((err as { name?: string }).name === 'ConditionalCheckFailedException') throw new ConditionFailed('The event exists.');
      throw err;
    }
  }
  const items: TransactItem[] = [
    { Put: { TableName: db.tableName, Item: eventItem(w), ConditionExpression: 'attribute_not_exists(PK)' } },
    ...pointers.map((Item) => ({ Put: { TableName: db.tableName, Item } })),
  ];
  try {
    await transact(db, items);
    return true;
  } catch (err) {
    if (idempotent && err instanceof ConditionFailed) return false;
    throw err;
  }
}

/** Writes a live-only event (non-logging type): the fan-out delivers it, nothing lists it. */
export async function putLiveEvent(db: Db, w: EventWrite, nowEpoch: number, ttlSeconds = 3600): Promise<void> {
  const item = toItem(w.event);
  await send(
    db,
    new PutCommand({
      TableName: db.tableName,
      Item: {
        PK: liveEventPk(w.event.key),
        SK: OBJECT_SK,
        Key: item.Key,
        Coll: item.Coll,
        Type: item.Type,
        Folder: item.Folder,
        Path: item.Path,
        Instances: item.Instances,
        Version: item.Version,
        Doc: item.Doc,
        ttl: nowEpoch + ttlSeconds,
      },
    }),
  );
}

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
  try {
    await send(
      db,
      new UpdateCommand({
        TableName: db.tableName,
        Key: { PK: objectPk(event.key), SK: OBJECT_SK },
        UpdateExpression: 'SET #doc = :doc, #v = :next',
        ConditionExpression: 'attribute_exists(PK) AND #v = :v',
        ExpressionAttributeNames: { '#doc': 'Doc', '#v': 'Version' },
        ExpressionAttributeValues: { ':doc': stringifyJson(doc), ':v': event.version, ':next': event.version + 1 },
      }),
    );
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') throw new ConditionFailed('The event changed.');
    throw err;
  }
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
  },
): Promise<{ items: Record<string, unknown>[]; next: Record<string, unknown> | undefined; scanned: number }> {
  const values: Record<string, unknown> = { ':pk': q.pk, ':now': q.nowEpoch };
  const out = await send<{ Items?: Record<string, unknown>[]; LastEvaluatedKey?: Record<string, unknown>; ScannedCount?: number }>(
    db,
    new QueryCommand({
      TableName: db.tableName,
      ...(q.index ? { IndexName: q.index } : {}),
      KeyConditionExpression: `${q.pkAttr} = :pk` + rangeCondition(q.skAttr, q.range, values),
      FilterExpression: 'attribute_not_exists(#ttl) OR #ttl > :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: q.limit,
      ...(q.start ? { ExclusiveStartKey: q.start } : {}),
    }),
  );
  // BETWEEN includes `to` itself; a range excludes its end.
  const to = q.range.to;
  const items = (out.Items ?? []).filter((i) => !to || (i[q.skAttr] as string) < to);
  return { items, next: out.LastEvaluatedKey, scanned: out.ScannedCount ?? out.Items?.length ?? 0 };
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

/** The newest event pointer of an object at or after `since` (ISO), or undefined. One Query. */
export async function lastEventOf(
  db: Db,
  objectKey: string,
  since: string | undefined,
  nowEpoch = Math.floor(Date.now() / 1000),
): Promise<EventPointer | undefined> {
  const page = await queryNewest(db, { pkAttr: 'PK', pk: eventPointerPk(objectKey), skAttr: 'SK', range: since ? { from: since } : {}, limit: 1, nowEpoch });
  return page.items[0] as unknown as EventPointer | undefined;
}

// ---------------------------------------------------------------------------------------------
// The table stream: object changes, for the audit trail.

/** An object item change read from a stream record. */
export interface ObjectChange {
  readonly kind: 'created' | 'updated' | 'deleted';
  /** The record's eventID (unique per change; the same on a retried delivery). */
  readonly eventId: string;
  /** When the change was made (ApproximateCreationDateTime), epoch milliseconds. */
  readonly at: number;
  /** The object before the change (updated, deleted). */
  readonly before: StoredObject | undefined;
  /** The object after the change (created, updated). */
  readonly after: StoredObject | undefined;
}

/** Lambda's stream images carry binary values as base64 text; the SDK's unmarshall wants bytes. */
function sdkValue(v: LambdaAttributeValue): SdkAttributeValue {
  if (v.B !== undefined) return { B: Buffer.from(String(v.B), 'base64') };
  if (v.BS !== undefined) return { BS: v.BS.map((b) => Buffer.from(String(b), 'base64')) };
  if (v.L !== undefined) return { L: v.L.map(sdkValue) };
  if (v.M !== undefined) return { M: sdkImage(v.M) };
  return v as SdkAttributeValue;
}

function sdkImage(image: Record<string, LambdaAttributeValue>): Record<string, SdkAttributeValue> {
  const out: Record<string, SdkAttributeValue> = {};
  for (const [k, v] of Object.entries(image)) out[k] = sdkValue(v);
  return out;
}

/** A stream image as a plain item. */
export function itemOfImage(image: Record<string, LambdaAttributeValue> | undefined): Record<string, unknown> | undefined {
  return image ? (unmarshall(sdkImage(image)) as Record<string, unknown>) : undefined;
}

const isObjectItem = (i: Record<string, unknown> | undefined): i is Record<string, unknown> =>
  !!i && typeof i.PK === 'string' && i.PK.startsWith(objectPk('')) && i.SK === OBJECT_SK && typeof i.Doc === 'string' && typeof i.Key === 'string';

/**
 * The object change a stream record carries: an INSERT, MODIFY or REMOVE of an object item
 * (`O#<key>` / `A`) whose collection is not in `ignore`. Anything else (claims, pointers,
 * connections, tokens, events) gives undefined, as does a MODIFY that changed neither the
 * document nor the version.
 */
export function objectChangeFromStreamRecord(record: DynamoDBRecord, ignore: ReadonlySet<string>): ObjectChange | undefined {
  const d = record.dynamodb;
  if (!d || !record.eventID) return undefined;
  const oldItem = itemOfImage(d.OldImage as Record<string, LambdaAttributeValue> | undefined);
  const newItem = itemOfImage(d.NewImage as Record<string, LambdaAttributeValue> | undefined);
  const any = newItem ?? oldItem;
  if (!isObjectItem(any) || ignore.has(String(any.Coll))) return undefined;
  const at = typeof d.ApproximateCreationDateTime === 'number' ? d.ApproximateCreationDateTime * 1000 : Date.now();
  const base = { eventId: record.eventID, at };
  const parse = (i: Record<string, unknown> | undefined) => {
    if (!isObjectItem(i)) return undefined;
    try {
      return fromItem(i);
    } catch {
      return undefined;
    }
  };
  switch (record.eventName) {
    case 'INSERT': {
      const after = parse(newItem);
      return after ? { ...base, kind: 'created', before: undefined, after } : undefined;
    }
    case 'MODIFY': {
      const before = parse(oldItem);
      const after = parse(newItem);
      if (!after) return undefined;
      if (before && oldItem!.Doc === newItem!.Doc && oldItem!.Version === newItem!.Version) return undefined;
      return { ...base, kind: 'updated', before, after };
    }
    case 'REMOVE': {
      const before = parse(oldItem);
      return before ? { ...base, kind: 'deleted', before, after: undefined } : undefined;
    }
    default:
      return undefined;
  }
}
