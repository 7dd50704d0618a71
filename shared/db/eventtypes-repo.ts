/**
 * Apps, event types and alarm-definition membership, as the events family reads them.
 *
 * Event types are objects (collection `eventtypes`) placed in their app (folder = app key), so an
 * app's event types are one Query of `C#<appKey>#eventtypes`. Alarm membership is a link item in
 * the event type's partition, indexed by alarm:
 *
 * | item        | PK                  | SK                | GSI1 (PK / SK)                   |
 * | ----------- | ------------------- | ----------------- | -------------------------------- |
 * | alarm link  | `O#<eventTypeKey>`  | `ALARM#<alarmKey>`| `AL#<alarmKey>` / `<eventTypeKey>` |
 *
 * so one Query of the event type's partition returns the type and its alarm links together, and
 * one Query of `AL#<alarmKey>` lists an alarm definition's event types. Adding a link (a
 * transaction) is in alarm-link-writes.ts, loaded with the writes of event types.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from './client.ts';
import { ALARM_LINK_PREFIX, OBJECT_SK, alarmLinkSk, alarmMembersPk, objectPk, partitionPk } from './item-keys.ts';
import { fromItem, send, type ExtraWrite } from './objects-repo.ts';
import { batchGetItems, queryAll } from './requests.ts';
import type { StoredObject } from '../model/stored-object.ts';

export const EVENT_TYPES_COLLECTION = 'eventtypes';
export const APPS_COLLECTION = 'apps';


/** Every app of an instance, whatever its folder (the instance's `apps` partition of GSI2). */
export async function appsOfInstance(db: Db, instanceKey: string): Promise<StoredObject[]> {
  const items = await queryAll(db, {
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :pk',
    ExpressionAttributeValues: { ':pk': partitionPk(instanceKey, APPS_COLLECTION) },
  }, { max: 10_000 });
  return items.filter((i) => i.Coll === APPS_COLLECTION).map(fromItem);
}

export interface EventTypeRecord {
  readonly type: StoredObject;
  /** Keys of the alarm definitions the event type belongs to. */
  readonly alarmKeys: string[];
}

/** An event type with its alarm links: one Query of its partition. */
export async function eventTypeWithAlarms(db: Db, key: string): Promise<EventTypeRecord | undefined> {
  const items = await queryAll(db, {
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :a)',
    ExpressionAttributeValues: { ':pk': objectPk(key), ':a': OBJECT_SK },
    ConsistentRead: true,
  }, { max: 10_000 });
  const obj = items.find((i) => i.SK === OBJECT_SK && i.Coll === EVENT_TYPES_COLLECTION);
  if (!obj) return undefined;
  const alarmKeys = items
    .filter((i) => typeof i.SK === 'string' && i.SK.startsWith(ALARM_LINK_PREFIX))
    .map((i) => (i.SK as string).slice(ALARM_LINK_PREFIX.length));
  return { type: fromItem(obj), alarmKeys };
}

/** Most alarm definitions of one instance read to tell whether one holds a built-in event type. */
const MAX_ALARMS_PER_INSTANCE = 1_000;

/**
 * Whether an alarm definition of `instanceKey` (any folder of it) holds the event type
 * `eventTypeKey`: one keys-only Query of the instance's alarm definitions (GSI2, its type
 * partition), then one BatchGetItem of their links to the type. Reads O(the instance's alarm
 * definitions), whatever the number of other instances and tenants linking the same type.
 */
export async function instanceHasAlarmOn(db: Db, instanceKey: string, eventTypeKey: string): Promise<boolean> {
  const alarms = await queryAll(
    db,
    {
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :pk',
      ExpressionAttributeValues: { ':pk': partitionPk(instanceKey, 'alarmdefinitions') },
      // The index's sort key is the alarm definition's key.
      ProjectionExpression: 'GSI2SK',
    },
    { max: MAX_ALARMS_PER_INSTANCE },
  );
  if (alarms.length === 0) return false;
  const links = alarms.map((a) => ({ PK: objectPk(eventTypeKey), SK: alarmLinkSk(a.GSI2SK as string) }));
  return (await batchGetItems(db, links, { projection: 'PK' })).length > 0;
}

/** Removes an event type from an alarm definition; false when it was not a member. */
export async function deleteAlarmLink(db: Db, alarmKey: string, eventTypeKey: string): Promise<boolean> {
  try {
    await send(
      db,
      new DeleteCommand({
        TableName: db.tableName,
        Key: { PK: objectPk(eventTypeKey), SK: alarmLinkSk(alarmKey) },
        ConditionExpression: 'attribute_exists(PK)',
      }),
    );
    return true;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

/** Keys of an alarm definition's event types, in key order: one Query of the alarm index. */
export async function alarmMembers(db: Db, alarmKey: string): Promise<string[]> {
  const items = await queryAll(db, {
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk',
    ExpressionAttributeValues: { ':pk': alarmMembersPk(alarmKey) },
  }, { max: 10_000 });
  return items.map((i) => i.GSI1SK as string);
}

/** Transaction items deleting an event type's alarm links (with the event type). */
export function deleteAlarmLinkItems(db: Db, eventTypeKey: string, alarmKeys: readonly string[]): ExtraWrite[] {
  return alarmKeys.map((a) => ({ Delete: { TableName: db.tableName, Key: { PK: objectPk(eventTypeKey), SK: alarmLinkSk(a) } } }));
}

