/**
 * Key builders: each made from a template of the table's declaration (`ITEM_KINDS` in table.ts),
 * so this module spells no key itself. Pure functions, unit-tested.
 */
import { ITEM_KINDS } from './table.ts';

/** One string per `<hole>` of template `T`, in order. */
type Holes<T extends string> = T extends `${string}<${string}>${infer Rest}` ? [string, ...Holes<Rest>] : [];

/** The literal parts of a template around its holes (`O#<key>` → `['O#', '']`). */
const partsOf = (template: string): string[] => template.split(/<[^>]*>/);

/**
 * The builder of a key template: its literal text with the values put in its holes, in order
 * (`keyOf('O#<key>')('abc')` is `O#abc`).
 */
export function keyOf<T extends string>(template: T): (...values: Holes<T>) => string {
  const parts = partsOf(template);
  if (parts.length === 2) {
    const [head, tail] = parts as [string, string];
    return ((value: string) => head + value + tail) as never;
  }
  return ((...values: string[]) => {
    let key = parts[0]!;
    for (let i = 1; i < parts.length; i++) key += values[i - 1]! + parts[i]!;
    return key;
  }) as never;
}

/**
 * The beginning of a key template up to its next hole, with the first holes filled by `values`
 * (`prefixOf('R#<relation>#<toKey>')('x')` is `R#x#`, `prefixOf(…)()` is `R#`): what a
 * `begins_with` condition or a `startsWith` test matches.
 */
export function prefixOf(template: string, ...values: readonly string[]): string {
  const parts = partsOf(template);
  if (values.length > parts.length - 1) throw new RangeError(`${template} has ${parts.length - 1} holes`);
  let key = parts[0]!;
  for (let i = 0; i < values.length; i++) key += values[i]! + parts[i + 1]!;
  return key;
}

const K = ITEM_KINDS;

export const OBJECT_SK = K.object.sk;
export const AUTH_SK = K.authState.sk;
export const STATUS_SK = K.objectStatus.sk;
/** Tombstone of a deleted folder or instance: keeps its place so its old paths answer 404, not 403. */
export const TOMBSTONE_SK = K.tombstone.sk;

export const objectPk = keyOf(K.object.pk);
export const collectionPk = keyOf(K.object.indexes.GSI1[0]);
/** Every object of a collection in an instance, whatever its folder (search's partition). */
export const partitionPk = keyOf(K.object.indexes.GSI2[0]);
export const namePk = keyOf(K.object.indexes.GSI3[0]);
export const nameSk = keyOf(K.object.indexes.GSI3[1]);
export const cardNumberPk = keyOf(K.claim.indexes.GSI3[0]);

export const relationSk = keyOf(K.relation.sk);
/** The beginning of the sort keys of an object's connections: of one relation, or of all. */
export const relationPrefix = (relation?: string): string => (relation ? prefixOf(K.relation.sk, relation) : prefixOf(K.relation.sk));
export const referencedByPk = keyOf(K.relation.indexes.GSI1[0]);
export const referencedBySk = keyOf(K.relation.indexes.GSI1[1]);

/** Sort key of an event type's membership in an alarm definition. */
export const alarmLinkSk = keyOf(K.alarmLink.sk);
/** The beginning of every alarm link's sort key. */
export const ALARM_LINK_PREFIX = prefixOf(K.alarmLink.sk);
/** Index partition of an alarm definition's event types. */
export const alarmMembersPk = keyOf(K.alarmLink.indexes.GSI1[0]);

/** Unique claims: card numbers, names, monikers. `value` is case-normalised by the caller if needed. */
export const claimPk = keyOf(K.claim.pk);
export const CLAIM_SK = K.claim.sk;

export const refreshTokenPk = keyOf(K.refreshToken.pk);
export const REFRESH_SK = K.refreshToken.sk;
export const refreshFamilyPk = keyOf(K.refreshFamily.pk);

/**
 * Failed password logins of a name in an instance that no password can log in as (no such user,
 * or a user without a password), counted so it locks out like a real user's AUTH item.
 */
export const loginNamePk = keyOf(K.loginName.pk);
export const LOGIN_NAME_SK = K.loginName.sk;

export const eventFolderPk = keyOf(K.event.indexes.GSI1[0]);
/** An event's place on its timeline and under each related object (the same sort key for both). */
export const eventSortKey = keyOf(K.eventPointer.sk);
export const eventPointerPk = keyOf(K.eventPointer.pk);

/** A live-only event (a non-logging type's): read by the fan-out, never listed. */
export const LIVE_EVENT_PREFIX = prefixOf(K.liveEvent.pk);
export const liveEventPk = keyOf(K.liveEvent.pk);

export const wsConnectionPk = keyOf(K.wsConnection.pk);
export const WS_CONNECTION_SK = K.wsConnection.sk;
/** GSI1 partition of a user's WebSocket connections (closed when the user's sessions are revoked). */
export const userConnectionsPk = keyOf(K.wsConnection.indexes.GSI1[0]);
/** An MQTT client id the IoT authorizer let in (AWS), and GSI1 partition of a user's clients. */
export const mqttClientPk = keyOf(K.mqttClient.pk);
export const MQTT_CLIENT_SK = K.mqttClient.sk;
export const userMqttClientsPk = keyOf(K.mqttClient.indexes.GSI1[0]);
export const subscriptionPk = keyOf(K.wsSubscription.pk);
export const subscriptionSk = keyOf(K.wsSubscription.sk);

/** Webhook subscriptions of an instance: one Query per instance finds them all. */
export const webhookPk = keyOf(K.webhook.pk);
/** Delivery attempts of one webhook subscription, newest last (attempt keys are ObjectIds). */
export const webhookAttemptPk = keyOf(K.webhookAttempt.pk);
/** A subscription's replay slot (rate limit of replays): one item, kept while it holds. */
export const webhookReplayPk = keyOf(K.webhookReplay.pk);
export const WEBHOOK_REPLAY_SK = K.webhookReplay.sk;
/** The local runtime's webhook queue: one partition, sorted by when each job is due. */
export const WEBHOOK_QUEUE_PK = K.webhookJob.pk;
const webhookJobSk = keyOf(K.webhookJob.sk);
/** A queued job's sort key: when it is due (epoch ms, 15 digits, so that text order is time order), then its id. */
export const webhookQueueSk = (dueAtMs: number, jobId: string): string => webhookJobSk(String(Math.max(0, Math.floor(dueAtMs))).padStart(15, '0'), jobId);

/** Metered usage of one instance: one item per UTC day (`D#<yyyy-mm-dd>`) and one running total. */
export const usagePk = keyOf(K.usageDay.pk);
export const usageDaySk = keyOf(K.usageDay.sk);
export const USAGE_TOTAL_SK = K.usageTotal.sk;

/** The public keys that verify access tokens (AWS; written by the key manager, shared/db/published-keys.ts). */
export const PUBLIC_KEYS_PK = K.publicKeys.pk;
export const PUBLIC_KEYS_SK = K.publicKeys.sk;

/**
 * An `Idempotency-Key` record (shared/db/idempotency-store.ts): the prefix of its PK, which
 * Powertools joins with `#` to the hash it makes of the key's scope (caller's instance and user,
 * method, path) and the key itself, and its SK. Kept 24 hours (TTL).
 */
export const IDEMPOTENCY_PREFIX = prefixOf(K.idempotencyRecord.pk).replace(/#$/, '');
export const IDEMPOTENCY_SK = K.idempotencyRecord.sk;

/** Object keys are 24 lower-case hex digits (ObjectIds). */
export const OBJECT_KEY = /^[0-9a-f]{24}$/;
export const isObjectKey = (s: unknown): s is string => typeof s === 'string' && OBJECT_KEY.test(s);
