/**
 * The MQTT client ids the IoT authorizer let in (AWS), per user: the fan-out disconnects a revoked
 * user's clients by id (IoT's DeleteConnection). A module of its own so the authorizer's bundle
 * carries only these two calls, not the rest of the live feed's items (`live-repo.ts`).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from './client.ts';
import { MQTT_CLIENT_SK, mqttClientPk, userMqttClientsPk } from './item-keys.ts';
import { send } from './objects-repo.ts';
import { queryAll } from './requests.ts';

/**
 * Records that the IoT authorizer let MQTT client `clientId` in for `userKey` until `ttl` (epoch
 * seconds), so the fan-out can disconnect a revoked user's clients (IoT's DeleteConnection takes a
 * client id). A client id taken over by another connection overwrites the item: the id then
 * belongs to its new user's partition only.
 */
export async function putMqttClient(db: Db, c: { clientId: string; userKey: string; ttl: number }): Promise<void> {
  await send(
    db,
    new PutCommand({
      TableName: db.tableName,
      Item: {
        PK: mqttClientPk(c.clientId),
        SK: MQTT_CLIENT_SK,
        GSI1PK: userMqttClientsPk(c.userKey),
        GSI1SK: c.clientId,
        ClientId: c.clientId,
        UserKey: c.userKey,
        ttl: c.ttl,
      },
    }),
  );
}

/** The MQTT client ids the authorizer let in for a user and whose time is not over: one Query on GSI1. */
export async function mqttClientsOfUser(db: Db, userKey: string, nowSeconds: number): Promise<string[]> {
  const items = await queryAll(db, {
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk',
    FilterExpression: '#ttl > :now',
    ProjectionExpression: 'ClientId',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':pk': userMqttClientsPk(userKey), ':now': nowSeconds },
  });
  return items.map((i) => i.ClientId).filter((id): id is string => typeof id === 'string');
}

