/**
 * The write that adds an event type to an alarm definition (the link item described in
 * eventtypes-repo.ts). Its own module so that the functions reading event types do not load the
 * repository's transaction code (object-writes.ts).
 */
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Db } from './client.ts';
import { OBJECT_SK, alarmLinkSk, alarmMembersPk, objectPk } from './item-keys.ts';
import { transact } from './object-writes.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Adds an event type to an alarm definition (idempotent): one transaction that also checks that
 * both still exist. Throws `ConditionFailed` (index 0: event type, 1: alarm) otherwise. A built-in
 * event type (events/builtin-apps.ts: a fixed key, no stored item) is not checked: then index 0 is
 * the alarm. Its link is the same item, in the partition of the fixed key.
 */
export async function putAlarmLink(db: Db, alarmKey: string, eventTypeKey: string, addedOn: string, builtinType = false): Promise<void> {
  const exists = (key: string): TransactItem => ({
    ConditionCheck: {
      TableName: db.tableName,
      Key: { PK: objectPk(key), SK: OBJECT_SK },
      ConditionExpression: 'attribute_exists(PK)',
    },
  });
  await transact(db, [
    ...(builtinType ? [] : [exists(eventTypeKey)]),
    exists(alarmKey),
    {
      Put: {
        TableName: db.tableName,
        Item: {
          PK: objectPk(eventTypeKey),
          SK: alarmLinkSk(alarmKey),
          GSI1PK: alarmMembersPk(alarmKey),
          GSI1SK: eventTypeKey,
          AlarmKey: alarmKey,
          EventTypeKey: eventTypeKey,
          AddedOn: addedOn,
        },
      },
    },
  ]);
}
