/**
 * Event storage. An event is an object item (`O#<key>` / `A`, collection `events`) whose GSI1 is
 * its folder's event timeline (`EV#<folder>` / `<OccurredOn ISO>#<key>`), so a page of events
 * newest first with a date range is one bounded Query with the range in the key condition. Each
 * related object (of a posting: each that exists, see `resolvePosting`) gets a pointer item (`EP#<objectKey>` / `<OccurredOn ISO>#<key>`) carrying the
 * event summary, the event's folder and instances, so "last event of an object" is one Query with
 * Limit 1 (two when the newest is outside the caller's scope, see `lastEventOf`) and
 * "events of these objects" reads only their pointers. The event and its pointers are written in
 * one round trip without a transaction, see {@link putEvent}; its document is
 * stored packed (`event-doc.ts`), so a usual event item is under 1 KB. Events of a non-logging
 * type are written as a short-lived `LIVE#<key>` item that only the fan-out reads.
 *
 * | item          | PK                 | SK                         | GSI1 (PK / SK)                      |
 * | ------------- | ------------------ | -------------------------- | ----------------------------------- |
 * | event         | `O#<eventKey>`     | `A`                        | `EV#<folder>` / `<occurred>#<key>`  |
 * | event pointer | `EP#<objectKey>`   | `<occurred>#<eventKey>`    |                                     |
 * | live event    | `LIVE#<eventKey>`  | `A`                        |                                     |
 *
 * Event items carry no GSI2/GSI3 keys: nothing lists events by instance partition or by name, and
 * each index key would cost a write per event.
 *
 * This module writes them (and reads the table stream for the audit trail); event-reads.ts reads
 * them back, apart, so that a cold start serving a publish does not load the reads.
 */
import { stringifyJson } from '../json.ts';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue as SdkAttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue as LambdaAttributeValue, DynamoDBRecord } from 'aws-lambda';
import { ConditionFailed } from '../errors.ts';
import type { Db } from './client.ts';
import { occurredOfItem, packEventDoc } from './event-doc.ts';
import { OBJECT_SK, eventFolderPk, eventPointerPk, eventSortKey, isObjectKey, liveEventPk, objectPk } from './item-keys.ts';
import { fromItem, getItem, send } from './objects-repo.ts';
import { batchWriteItems } from './requests.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { toItem } from './object-writes.ts';

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

/**
 * The event's item: the object item without GSI2/GSI3 keys, on its folder's timeline (GSI1), its
 * document packed (`event-doc.ts`: what the item or every event already says is left out, so a
 * usual event is one 1 KB write on the table and one on GSI1).
 */
export function eventItem(w: EventWrite): Record<string, unknown> {
  const { GSI2PK: _p2, GSI2SK: _s2, GSI3PK: _p3, GSI3SK: _s3, ...item } = toItem(w.event);
  return {
    ...item,
    GSI1PK: eventFolderPk(w.event.folder),
    GSI1SK: eventSortKey(w.occurredOn, w.event.key),
    Doc: stringifyJson(packEventDoc(w.event.doc, { key: w.event.key, folder: w.event.folder, occurredOn: w.occurredOn })),
    ttl: w.expiresAt,
  };
}

/** The pointer items of an event (one per related object, at most {@link MAX_POINTERS}). */
export function pointerItems(w: EventWrite): Record<string, unknown>[] {
  return [...new Set(w.relatedKeys)].slice(0, MAX_POINTERS).map((k) => ({
    PK: eventPointerPk(k),
    SK: eventSortKey(w.occurredOn, w.event.key),
    ...w.summary,
    ObjectKey: k,
    Folder: w.event.folder,
    Instances: [...w.event.instances],
    ttl: w.expiresAt,
  }));
}

/**
 * Most pointer items one event may have: the bound the transactional write had (100 items), kept
 * so that what one publish writes stays bounded (RelatedObjects is capped lower by validation).
 */
const MAX_POINTERS = 99;

const isConditionFailure = (err: unknown): boolean => (err as { name?: string }).name === 'ConditionalCheckFailedException';

const itemKey = (i: Record<string, unknown>) => ({ PK: i.PK, SK: i.SK });
const putItem = (db: Db, Item: Record<string, unknown>) => send(db, new PutCommand({ TableName: db.tableName, Item }));
const deleteItem = (db: Db, i: Record<string, unknown>) => send(db, new DeleteCommand({ TableName: db.tableName, Key: itemKey(i) }));

/** Deletes an event item only while it holds `item`'s document: a rollback never removes another write's event. */
const deleteOwnEvent = (db: Db, item: Record<string, unknown>) =>
  send(
    db,
    new DeleteCommand({
      TableName: db.tableName,
      Key: itemKey(item),
      ConditionExpression: '#doc = :doc',
      ExpressionAttributeNames: { '#doc': 'Doc' },
      ExpressionAttributeValues: { ':doc': item.Doc },
    }),
  );

/** Removes what one write stored (its event, if still its own, and its pointers), best effort. */
async function rollBack(db: Db, item: Record<string, unknown>, pointers: readonly Record<string, unknown>[]): Promise<void> {
  await Promise.allSettled([deleteOwnEvent(db, item), ...pointers.map((p) => deleteItem(db, p))]);
}

/** The pointer items a stored event item has, rebuilt from its document as publishing made them. */
function storedPointers(item: Record<string, unknown>): Record<string, unknown>[] {
  const event = fromItem(item);
  const d = event.doc;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const occurredOn = occurredOfItem(item) ?? text(d.OccurredOn);
  const links = Array.isArray(d.ObjectLinks) ? (d.ObjectLinks as unknown[]) : [];
  const relatedKeys = links
    .map((l) => (l as { LinkedObjectKey?: unknown } | null)?.LinkedObjectKey)
    .map((k) => (typeof k === 'string' ? k.toLowerCase() : ''))
    .filter(isObjectKey);
  return pointerItems({
    event,
    occurredOn,
    relatedKeys,
    summary: {
      EventKey: event.key,
      EventTypeKey: text(d.EventTypeKey),
      AppKey: text(d.AppKey),
      OccurredOn: occurredOn,
      PublishedOn: text(d.PublishedOn),
      Priority: typeof d.Priority === 'number' ? d.Priority : 0,
      MessageShort: typeof d.MessageShort === 'string' ? d.MessageShort : null,
    },
    expiresAt: typeof item.ttl === 'number' ? item.ttl : 0,
  });
}

/**
 * Makes the pointers under an event key those of the event stored there: deletes the ones this
 * write put that the stored event does not have, and rewrites the stored event's own (this
 * write's may have overwritten them; an earlier write may have left some out).
 */
async function reconcilePointers(db: Db, written: readonly Record<string, unknown>[], stored: Record<string, unknown>): Promise<void> {
  const own = storedPointers(stored);
  const keep = new Set(own.map((p) => `${String(p.PK)}|${String(p.SK)}`));
  const stray = written.filter((p) => !keep.has(`${String(p.PK)}|${String(p.SK)}`));
  await Promise.all([...stray.map((p) => deleteItem(db, p)), ...own.map((p) => putItem(db, p))]);
}

/**
 * Puts items with BatchWriteItem, 25 a request, the requests sent at once; items DynamoDB leaves
 * unprocessed are sent again with backoff (25, 50, 100 ms). Throws `StoreUnavailable` when
 * some stay unwritten.
 */
function batchPut(db: Db, items: readonly Record<string, unknown>[]): Promise<void> {
  return batchWriteItems(db, items.map((Item) => ({ PutRequest: { Item } })), { parallel: true, retries: 3, backoffMs: 25, what: 'event items' });
}

/**
 * Stores an event and its pointers in one round trip, without a transaction (which bills every
 * item twice): a pointer's key (`EP#<object>` / `<occurred>#<eventKey>`) is fixed by the event,
 * so writing it again is harmless, and no reader needs the event and its pointers at the same
 * instant (the fan-out reads the event's stream record; lists read the timeline or the pointers;
 * `lastevent` orders pointers by OccurredOn, never by write time). Nothing is left half-written:
 * when a write fails (after the retries), the event (while it is this write's) and this write's
 * pointers are removed and the error thrown, so the caller's retry starts clean.
 *
 * - An event without related objects: one PutItem, conditional on the key being free.
 * - A publish (a fresh key): one BatchWriteItem of the event and its pointers (one more per 25
 *   items, sent at once); unprocessed items are sent again. A retried request rewrites the same
 *   items: an event is never stored twice.
 * - `idempotent` (a stream consumer, whose retries reuse the key with another PublishedOn): the
 *   event's PutItem conditional on the key being free, beside a plain PutItem per pointer, all
 *   sent at once. When the key holds another write of the event, its pointers are made those of
 *   the stored event (this write's extra ones deleted, the stored one's rewritten) and the answer
 *   is `false` (without `idempotent`: {@link ConditionFailed}); when it holds this very document
 *   (the SDK retried a write that had been applied), the write stands. A pointer that fails is
 *   written once more before giving up.
 */
export async function putEvent(db: Db, w: EventWrite, idempotent = false): Promise<boolean> {
  const item = eventItem(w);
  const pointers = pointerItems(w);
  if (!idempotent && pointers.length > 0) {
    try {
      await batchPut(db, [item, ...pointers]);
    } catch (err) {
      await rollBack(db, item, pointers);
      throw err;
    }
    return true;
  }
  const [stored, ...written] = await Promise.allSettled([
    send(db, new PutCommand({ TableName: db.tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' })),
    ...pointers.map((p) => putItem(db, p)),
  ]);
  if (stored!.status === 'rejected') {
    const err: unknown = stored!.reason;
    let existing: Record<string, unknown> | undefined;
    try {
      existing = await getItem(db, String(item.PK), String(item.SK), true);
    } catch {
      await rollBack(db, item, pointers);
      throw err;
    }
    if (!existing) {
      await rollBack(db, item, pointers);
      throw err;
    }
    if (existing.Doc !== item.Doc) {
      await reconcilePointers(db, pointers, existing);
      if (!isConditionFailure(err)) throw err;
      if (idempotent) return false;
      throw new ConditionFailed('The event exists.');
    }
  }
  const failed = pointers.filter((_, i) => written[i]!.status === 'rejected');
  if (failed.length > 0) {
    const again = (await Promise.allSettled(failed.map((p) => putItem(db, p)))).find((r) => r.status === 'rejected');
    if (again) {
      await rollBack(db, item, pointers);
      throw again.reason;
    }
  }
  return true;
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
function itemOfImage(image: Record<string, LambdaAttributeValue> | undefined): Record<string, unknown> | undefined {
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
