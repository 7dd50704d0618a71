/**
 * Items of the live event feed: WebSocket connections, their subscriptions, and the events the
 * fan-out reads from the table's stream.
 *
 * | item          | PK                    | SK                        | attributes                                         |
 * | ------------- | --------------------- | ------------------------- | -------------------------------------------------- |
 * | connection    | `WSC#<connectionId>`  | `C`                       | principal fields, ConnectedAt, `Subs` (topic → instance key), ttl; GSI1 `WSU#<userKey>` / `<connectionId>` |
 * | subscription  | `SUB#<instanceKey>`   | `<connectionId>#<topic>`  | ConnectionId, Topic, ObjectKey (object topics), ttl |
 * | live event    | `LIVE#<eventKey>`     | `A`                       | as an event object (written by `events-repo.ts`)   |
 * | mqtt client   | `MQC#<clientId>`      | `C`                       | ClientId, UserKey, ttl; GSI1 `MQU#<userKey>` / `<clientId>` (AWS: written by the IoT authorizer, see `mqtt-clients.ts`) |
 *
 * Access patterns: the fan-out reads the subscribers of an instance with one Query on
 * `SUB#<instanceKey>` (and keeps them up to date from the same stream records it reads, see
 * {@link subscriptionChangeFromStreamRecord}); a disconnect deletes the connection's
 * subscriptions from the `Subs` map on the connection item (no Scan, no index); when a user's
 * sessions are revoked (or role changed) the fan-out finds the user's connections with one Query on
 * GSI1 `WSU#<userKey>` ({@link connectionsOfUser}) and closes them.
 */
import { parseJson } from '../json.ts';
import type { AttributeValue as DdbAttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { StoreUnavailable } from '../errors.ts';
import type { Principal, Role } from '../auth/principal.ts';
import type { Db } from './client.ts';
import { expandEventDoc, occurredOfItem } from './event-doc.ts';
import { LIVE_EVENT_PREFIX, OBJECT_SK, WS_CONNECTION_SK, objectPk, subscriptionPk, subscriptionSk, userConnectionsPk, wsConnectionPk } from './item-keys.ts';

import { getObject, send } from './objects-repo.ts';
import { batchWriteItems, queryAll } from './requests.ts';

const SUBSCRIPTION_PREFIX = subscriptionPk('');
const WS_CONNECTION_PREFIX = wsConnectionPk('');

/**
 * Partition key prefix of live-only events (NonLogging event types, written by `events-repo.ts`):
 * never listed, only fanned out.
 */

export interface LiveConnection {
  readonly connectionId: string;
  readonly principal: Principal;
  readonly connectedAt: string;
  /** Topic → instance key of every subscription of the connection. */
  readonly subscriptions: Readonly<Record<string, string>>;
}

export interface Subscription {
  readonly connectionId: string;
  readonly topic: string;
  /** Set for object topics (`/<instance>/<object>`). */
  readonly objectKey: string | undefined;
  /** Epoch seconds: the end of its connection's life (TTL deletes the item lazily after it). */
  readonly ttl: number;
}

/**
 * A change to the subscribers of the live feed, read from a stream record: a subscription stored
 * or replaced (`put`), one removed (`delete`: unsubscribe, disconnect or TTL), or a connection
 * removed (`disconnect`).
 */
export type SubscriptionChange =
  | { readonly kind: 'put'; readonly instanceKey: string; readonly subscription: Subscription }
  | { readonly kind: 'delete'; readonly instanceKey: string; readonly connectionId: string; readonly topic: string }
  | { readonly kind: 'disconnect'; readonly connectionId: string };

export interface NewSubscription {
  readonly connectionId: string;
  readonly instanceKey: string;
  readonly topic: string;
  readonly objectKey?: string;
  /** Epoch seconds: the connection's end of life. */
  readonly ttl: number;
  /** The most subscriptions one connection may hold. */
  readonly maxPerConnection: number;
}

export type SubscribeOutcome = 'subscribed' | 'connection-gone' | 'limit-reached';

/** An event item read from the stream: an event object or a live-only event. */
export interface StreamedEvent {
  readonly key: string;
  /** The event's instance and its ancestors (root first). */
  readonly instances: readonly string[];
  /** The folder the event was published in (its Href's first key). */
  readonly folder: string;
  /** The client-visible EventMessageData, as stored. */
  readonly doc: Readonly<Record<string, unknown>>;
}

const connectionKey = (connectionId: string) => ({ PK: wsConnectionPk(connectionId), SK: WS_CONNECTION_SK });

export async function putConnection(
  db: Db,
  c: { connectionId: string; principal: Principal; connectedAt: Date; ttl: number },
): Promise<void> {
  const p = c.principal;
  await send(
    db,
    new PutCommand({
      TableName: db.tableName,
      Item: {
        ...connectionKey(c.connectionId),
        ConnectionId: c.connectionId,
        GSI1PK: userConnectionsPk(p.userKey),
        GSI1SK: c.connectionId,
        UserKey: p.userKey,
        UserName: p.userName,
        InstanceKey: p.instanceKey,
        InstanceName: p.instanceName,
        Role: p.role,
        TokenId: p.tokenId,
        ...(p.sessionGeneration !== undefined ? { SessionGeneration: p.sessionGeneration } : {}),
        ConnectedAt: c.connectedAt.toISOString(),
        Subs: {},
        ttl: c.ttl,
      },
    }),
  );
}

/** A live connection (expired items, which TTL deletes lazily, are left out). */
export async function getConnection(db: Db, connectionId: string, nowSeconds: number): Promise<LiveConnection | undefined> {
  const out = await send<{ Item?: Record<string, unknown> }>(
    db,
    new GetCommand({ TableName: db.tableName, Key: connectionKey(connectionId), ConsistentRead: true }),
  );
  const i = out.Item;
  if (!i || Number(i.ttl ?? 0) <= nowSeconds) return undefined;
  return {
    connectionId,
    principal: {
      userKey: i.UserKey as string,
      userName: i.UserName as string,
      instanceKey: i.InstanceKey as string,
      instanceName: i.InstanceName as string,
      role: i.Role as Role,
      tokenId: i.TokenId as string,
      ...(i.SessionGeneration !== undefined ? { sessionGeneration: Number(i.SessionGeneration) } : {}),
    },
    connectedAt: i.ConnectedAt as string,
    subscriptions: (i.Subs as Record<string, string> | undefined) ?? {},
  };
}

/**
 * Adds a subscription and records it on the connection, in one transaction: the connection must
 * still exist and hold fewer than `maxPerConnection` other subscriptions. Subscribing again to the
 * same topic is a no-op that succeeds.
 */
export async function putSubscription(db: Db, s: NewSubscription): Promise<SubscribeOutcome> {
  try {
    await send(
      db,
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: db.tableName,
              Item: {
                PK: subscriptionPk(s.instanceKey),
                SK: subscriptionSk(s.connectionId, s.topic),
                ConnectionId: s.connectionId,
                Topic: s.topic,
                ObjectKey: s.objectKey,
                ttl: s.ttl,
              },
            },
          },
          {
            Update: {
              TableName: db.tableName,
              Key: connectionKey(s.connectionId),
              UpdateExpression: 'SET #subs.#topic = :instance',
              ConditionExpression: 'attribute_exists(PK) AND (attribute_exists(#subs.#topic) OR size(#subs) < :max)',
              ExpressionAttributeNames: { '#subs': 'Subs', '#topic': s.topic },
              ExpressionAttributeValues: { ':instance': s.instanceKey, ':max': s.maxPerConnection },
              // The old item tells a full connection (item returned) from a gone one (none).
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ],
      }),
    );
    return 'subscribed';
  } catch (err) {
    if ((err as { name?: string }).name !== 'TransactionCanceledException') throw err;
    const reasons = (err as { CancellationReasons?: Array<{ Code?: string; Item?: unknown }> }).CancellationReasons ?? [];
    const onConnection = reasons[1];
    if (onConnection?.Code !== 'ConditionalCheckFailed') throw new StoreUnavailable(err);
    return onConnection.Item ? 'limit-reached' : 'connection-gone';
  }
}

/** Removes one subscription (idempotent). */
export async function deleteSubscription(db: Db, connectionId: string, instanceKey: string, topic: string): Promise<void> {
  await Promise.all([
    send(db, new DeleteCommand({ TableName: db.tableName, Key: { PK: subscriptionPk(instanceKey), SK: subscriptionSk(connectionId, topic) } })),
    send(
      db,
      new UpdateCommand({
        TableName: db.tableName,
        Key: connectionKey(connectionId),
        UpdateExpression: 'REMOVE #subs.#topic',
        // Without the condition an update would re-create a connection that is gone.
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#subs': 'Subs', '#topic': topic },
      }),
    ).catch((err: unknown) => {
      if ((err as { name?: string }).name !== 'ConditionalCheckFailedException') throw err;
    }),
  ]);
}

/** Deletes a connection and every subscription it holds (idempotent). */
export async function deleteConnection(db: Db, connectionId: string): Promise<void> {
  const out = await send<{ Item?: Record<string, unknown> }>(
    db,
    new GetCommand({
      TableName: db.tableName,
      Key: connectionKey(connectionId),
      ConsistentRead: true,
      ProjectionExpression: 'Subs',
    }),
  );
  const subs = (out.Item?.Subs as Record<string, string> | undefined) ?? {};
  const keys = Object.entries(subs).map(([topic, instanceKey]) => ({
    PK: subscriptionPk(instanceKey),
    SK: subscriptionSk(connectionId, topic),
  }));
  // The connection item goes last: if a batch fails, a retry still finds the subscriptions.
  keys.push(connectionKey(connectionId));
  await batchWriteItems(db, keys.map((Key) => ({ DeleteRequest: { Key } })), { what: 'deletes' });
}

/**
 * The live subscriptions of one instance: one Query (all pages) on `SUB#<instanceKey>`. Strongly
 * consistent, so a subscription answered before the read began is in it (the fan-out keeps the
 * answer for a while).
 */
export async function subscriptionsOf(db: Db, instanceKey: string, nowSeconds: number): Promise<Subscription[]> {
  const items = await queryAll(db, {
    KeyConditionExpression: 'PK = :pk',
    // TTL deletes lazily: an expired subscription may still be stored.
    FilterExpression: '#ttl > :now',
    ProjectionExpression: 'ConnectionId, Topic, ObjectKey, #ttl',
    ConsistentRead: true,
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':pk': subscriptionPk(instanceKey), ':now': nowSeconds },
  });
  return items.map((i) => ({
    connectionId: i.ConnectionId as string,
    topic: i.Topic as string,
    objectKey: i.ObjectKey as string | undefined,
    ttl: Number(i.ttl),
  }));
}

/**
 * The instance keys from the root down to and including `instanceKey`, or undefined when no
 * instance has that key.
 */
export async function instanceLineage(db: Db, instanceKey: string): Promise<readonly string[] | undefined> {
  const o = await getObject(db, instanceKey);
  return o && o.collection === 'instances' ? o.instances : undefined;
}

/**
 * The event carried by a stream record: an INSERT of an event object (`O#<key>` / `A` with
 * `Coll` = `events`) or of a live-only event (`LIVE#<key>`). Anything else gives undefined.
 */
export function eventFromStreamRecord(record: DynamoDBRecord): StreamedEvent | undefined {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== 'INSERT' || !image) return undefined;
  // Most records of a batch are not events (an event's pointers, claims, connections...): they
  // are told apart by their keys before anything is decoded.
  const rawPk = image.PK?.S ?? '';
  const mayBeEvent = rawPk.startsWith(LIVE_EVENT_PREFIX) || (rawPk.startsWith(objectPk('')) && image.SK?.S === OBJECT_SK && image.Coll?.S === 'events');
  if (!mayBeEvent) return undefined;
  const item = unmarshall(image as Record<string, DdbAttributeValue>);
  const pk = typeof item.PK === 'string' ? item.PK : '';
  const isEventObject = pk.startsWith(objectPk('')) && item.SK === OBJECT_SK && item.Coll === 'events';
  if (!isEventObject && !pk.startsWith(LIVE_EVENT_PREFIX)) return undefined;
  if (typeof item.Doc !== 'string') return undefined;
  let doc: unknown;
  try {
    doc = parseJson(item.Doc);
  } catch {
    return undefined;
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return undefined;
  const raw = item.Instances as unknown;
  const instances = (Array.isArray(raw) ? raw : raw instanceof Set ? [...raw] : []).filter(
    (i): i is string => typeof i === 'string',
  );
  const key = String(item.Key ?? pk.slice(pk.indexOf('#') + 1));
  const folder = typeof item.Folder === 'string' ? item.Folder : (instances[instances.length - 1] ?? '');
  return { key, instances, folder, doc: expandEventDoc(doc as Record<string, unknown>, { key, folder, occurredOn: occurredOfItem(item) }) };
}

/**
 * The change to the live feed's subscribers a stream record carries: a subscription item
 * (`SUB#<instance>`) written or removed, or a connection item (`WSC#<id>` / `C`) removed.
 * Anything else (most records) gives undefined, told by its keys without decoding the item.
 */
export function subscriptionChangeFromStreamRecord(record: DynamoDBRecord): SubscriptionChange | undefined {
  const d = record.dynamodb;
  const keys = d?.Keys;
  const pk = keys?.PK?.S;
  if (!d || !pk) return undefined;
  if (pk.startsWith(SUBSCRIPTION_PREFIX)) {
    const instanceKey = pk.slice(SUBSCRIPTION_PREFIX.length);
    if (record.eventName === 'REMOVE') {
      const old = d.OldImage;
      const connectionId = old?.ConnectionId?.S;
      const topic = old?.Topic?.S;
      return connectionId !== undefined && topic !== undefined ? { kind: 'delete', instanceKey, connectionId, topic } : undefined;
    }
    const image = d.NewImage;
    const connectionId = image?.ConnectionId?.S;
    const topic = image?.Topic?.S;
    const ttl = Number(image?.ttl?.N);
    if (connectionId === undefined || topic === undefined || !Number.isFinite(ttl)) return undefined;
    return { kind: 'put', instanceKey, subscription: { connectionId, topic, objectKey: image?.ObjectKey?.S, ttl } };
  }
  if (record.eventName === 'REMOVE' && pk.startsWith(WS_CONNECTION_PREFIX) && keys.SK?.S === WS_CONNECTION_SK) {
    return { kind: 'disconnect', connectionId: pk.slice(WS_CONNECTION_PREFIX.length) };
  }
  return undefined;
}

/**
 * The ids of a user's live WebSocket connections: one Query (all pages) on GSI1 `WSU#<userKey>`.
 * The index is eventually consistent: a connection opened a moment before the revocation may be
 * missing here, and is then refused by its next subscription's status check instead.
 */
export async function connectionsOfUser(db: Db, userKey: string): Promise<string[]> {
  const items = await queryAll(db, {
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk',
    ProjectionExpression: 'ConnectionId',
    ExpressionAttributeValues: { ':pk': userConnectionsPk(userKey) },
  });
  return items.map((i) => i.ConnectionId).filter((id): id is string => typeof id === 'string');
}

/**
 * The user whose live connections a stream record ends: a user object (`O#<key>` / `A`, `Coll` =
 * `users`) deleted, or replaced with a higher session generation (new password, disabled, "sign
 * out everywhere"), a different role, or disabled. Anything else (most records) gives undefined,
 * told by its keys and collection before any document is parsed.
 */
export function revokedUserFromStreamRecord(record: DynamoDBRecord): string | undefined {
  const d = record.dynamodb;
  const pk = d?.Keys?.PK?.S;
  if (!d || !pk?.startsWith(objectPk('')) || d.Keys?.SK?.S !== OBJECT_SK) return undefined;
  const old = d.OldImage;
  if (old?.Coll?.S !== 'users') return undefined;
  const userKey = pk.slice(objectPk('').length);
  if (record.eventName === 'REMOVE') return userKey;
  const next = d.NewImage;
  if (record.eventName !== 'MODIFY' || !next) return undefined;
  const generation = (image: typeof next) => Number(image.SessionGeneration?.N ?? 0);
  if (generation(next) > generation(old)) return userKey;
  const docOf = (image: typeof next): Record<string, unknown> => {
    try {
      const doc = parseJson(image.Doc?.S ?? '{}');
      return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  };
  const [before, after] = [docOf(old), docOf(next)];
  return before.Role !== after.Role || (after.IsDisabled === true && before.IsDisabled !== true) ? userKey : undefined;
}
