/**
 * Metered tenant usage: counters per instance and UTC day, written with `UpdateItem ADD` by the
 * execution environments that counted them (at most one write per instance and day per flush),
 * and read back with one Query per instance for a date range.
 *
 * | item       | PK                 | SK               | attributes                                                               |
 * | ---------- | ------------------ | ---------------- | ------------------------------------------------------------------------ |
 * | a day      | `US#<instanceKey>` | `D#<yyyy-mm-dd>` | `Req_<family>` (requests answered), EventsPublished, AuditEvents, ObjectsCreated, ObjectsDeleted, ttl |
 * | total      | `US#<instanceKey>` | `TOTAL`          | StoredObjects (objects created minus deleted since metering began)       |
 *
 * Day items expire {@link USAGE_RETENTION_DAYS} after their day (TTL); the total never does.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parseJson } from '../json.ts';
import type { Db } from './client.ts';
import { LIVE_EVENT_PREFIX, OBJECT_SK, USAGE_TOTAL_SK, objectPk, usageDaySk, usagePk } from './item-keys.ts';
import { send } from './objects-repo.ts';
import { batchGetItems, queryAll } from './requests.ts';

/** How long a usage day is kept. */
export const USAGE_RETENTION_DAYS = 400;

/** The counters of one day (missing counters are 0). */
export type DayCounts = Readonly<Record<string, number>>;

/** Counter attribute names are `Req_<family>` or a fixed name: letters, digits and `_` only. */
const COUNTER = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * Adds one day's counts of an instance: one UpdateItem (`ADD` per counter, the TTL set). ADD is
 * not idempotent: a write the SDK retries after a lost answer may count twice.
 */
export async function addUsage(db: Db, instanceKey: string, day: string, counts: Readonly<Record<string, number | undefined>>): Promise<void> {
  const names: Record<string, string> = { '#ttl': 'ttl' };
  const values: Record<string, number> = { ':ttl': Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) + (USAGE_RETENTION_DAYS + 1) * 86_400 };
  const adds: string[] = [];
  Object.entries(counts).forEach(([name, n], i) => {
    if (!n || !COUNTER.test(name)) return;
    names[`#c${i}`] = name;
    values[`:c${i}`] = n;
    adds.push(`#c${i} :c${i}`);
  });
  if (adds.length === 0) return;
  await send(
    db,
    new UpdateCommand({
      TableName: db.tableName,
      Key: { PK: usagePk(instanceKey), SK: usageDaySk(day) },
      UpdateExpression: `SET #ttl = :ttl ADD ${adds.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
  );
}

/** Adds to an instance's running count of stored objects (negative when more were deleted). */
export async function addStoredObjects(db: Db, instanceKey: string, n: number): Promise<void> {
  if (!n) return;
  await send(
    db,
    new UpdateCommand({
      TableName: db.tableName,
      Key: { PK: usagePk(instanceKey), SK: USAGE_TOTAL_SK },
      UpdateExpression: 'ADD StoredObjects :n',
      ExpressionAttributeValues: { ':n': n },
    }),
  );
}

/** The days `from`..`to` (inclusive, `yyyy-mm-dd`) of an instance that have counts: one Query. */
export async function usageDays(db: Db, instanceKey: string, from: string, to: string): Promise<Map<string, DayCounts>> {
  const items = await queryAll(db, {
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': usagePk(instanceKey), ':from': usageDaySk(from), ':to': usageDaySk(to) },
  });
  const days = new Map<string, DayCounts>();
  for (const item of items) {
    const counts: Record<string, number> = {};
    for (const [k, v] of Object.entries(item)) if (typeof v === 'number' && k !== 'ttl') counts[k] = v;
    days.set(String(item.SK).slice(usageDaySk('').length), counts);
  }
  return days;
}

/** The running stored-object counts of instances (BatchGetItem per 100); a missing total is 0. */
export async function storedObjects(db: Db, instanceKeys: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(instanceKeys.map((k) => [k, 0]));
  const keys = instanceKeys.map((k) => ({ PK: usagePk(k), SK: USAGE_TOTAL_SK }));
  for (const item of await batchGetItems(db, keys, { projection: 'PK, StoredObjects' })) {
    out.set(String(item.PK).slice(usagePk('').length), Number(item.StoredObjects ?? 0));
  }
  return out;
}

/** What one stream record adds to its instance's usage. */
export interface StreamUsage {
  readonly instanceKey: string;
  readonly kind: 'event' | 'audit-event' | 'object-created' | 'object-deleted';
}

type Image = Record<string, { S?: string; L?: Array<{ S?: string }> } | undefined>;

/**
 * The usage a stream record carries, read from a few attributes of its image (no unmarshalling):
 * an INSERT of an event (`O#<key>` in `events`, or a live-only `LIVE#<key>`) is an event published
 * (an audit event when its app is `auditAppKey`); an INSERT or REMOVE of any other object item is
 * an object created or deleted. The instance is the item's own (the last of its `Instances`).
 */
export function usageOfStreamRecord(record: DynamoDBRecord, auditAppKey: string): StreamUsage | undefined {
  const insert = record.eventName === 'INSERT';
  if (!insert && record.eventName !== 'REMOVE') return undefined;
  const image = (insert ? record.dynamodb?.NewImage : record.dynamodb?.OldImage) as Image | undefined;
  const pk = image?.PK?.S;
  if (!image || !pk || image.SK?.S !== OBJECT_SK) return undefined;
  const instances = image.Instances?.L ?? [];
  const instanceKey = instances[instances.length - 1]?.S;
  if (!instanceKey) return undefined;
  const live = pk.startsWith(LIVE_EVENT_PREFIX);
  if (!live && !pk.startsWith(objectPk(''))) return undefined;
  if (live || image.Coll?.S === 'events') {
    if (!insert) return undefined;
    return { instanceKey, kind: appKeyOf(image.Doc?.S) === auditAppKey ? 'audit-event' : 'event' };
  }
  return { instanceKey, kind: insert ? 'object-created' : 'object-deleted' };
}

function appKeyOf(doc: string | undefined): string | undefined {
  if (!doc) return undefined;
  try {
    const d = parseJson(doc) as { AppKey?: unknown };
    return typeof d?.AppKey === 'string' ? d.AppKey : undefined;
  } catch {
    return undefined;
  }
}
