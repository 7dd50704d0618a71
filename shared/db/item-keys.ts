/**
 * Key builders: each made from a template of the table's declaration (the item kinds of
 * table.ts), so this module spells no key itself. Pure functions, unit-tested; each made with a
 * `@__PURE__` call, so a function's bundle keeps only the builders (and kinds) it uses.
 */
import {
  alarmLinkItem,
  authStateItem,
  claimItem,
  eventItem,
  eventPointerItem,
  idempotencyRecordItem,
  liveEventItem,
  loginNameItem,
  mqttClientItem,
  objectItem,
  objectStatusItem,
  publicKeysItem,
  refreshFamilyItem,
  refreshTokenItem,
  relationItem,
  tombstoneItem,
  usageDayItem,
  usageTotalItem,
  webhookItem,
  webhookAttemptItem,
  webhookJobItem,
  webhookReplayItem,
  scimTokenItem,
  identityProviderSecretItem,
  ssoPendingLoginItem,
  ssoCodeItem,
  lockdownItem,
  readerModeItem,
  doorUnlockItem,
  credentialCounterItem,
  credentialChangeItem,
  wsConnectionItem,
  wsSubscriptionItem,
  type ItemKind,
} from './table.ts';

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

/*
 * The kinds' templates are read inside these functions, each call marked `@__PURE__`: a bundle
 * drops a call whose result it never uses, and then the kind it names, which a property read at
 * the top level (`objectItem.pk`) would keep.
 */

type IndexTemplates<K extends ItemKind> = NonNullable<K['indexes']>;
type IndexTemplate<K extends ItemKind, I extends keyof IndexTemplates<K>, P extends 0 | 1> = Extract<Extract<IndexTemplates<K>[I], readonly [string, string]>[P], string>;

/** The builder of a kind's partition key (`pk`) or sort key (`sk`). */
function keyOfKind<K extends ItemKind, F extends 'pk' | 'sk'>(kind: K, field: F): (...values: Holes<K[F]>) => string {
  return keyOf(kind[field]);
}

/** A kind's key without holes, as it is (`A`, `KEYS`). */
function literalOf<K extends ItemKind, F extends 'pk' | 'sk'>(kind: K, field: F): K[F] {
  return kind[field];
}

/** The literal beginning of a kind's key, before its first hole (`R#`, `LIVE#`). */
function prefixOfKind(kind: ItemKind, field: 'pk' | 'sk'): string {
  return prefixOf(kind[field]);
}

/** The builder of a kind's key on an index: its partition key (0) or sort key (1). */
function indexKeyOf<K extends ItemKind, I extends keyof IndexTemplates<K>, P extends 0 | 1>(kind: K, index: I, part: P): (...values: Holes<IndexTemplate<K, I, P>>) => string {
  const templates = kind.indexes as Readonly<Record<PropertyKey, readonly [string, string]>>;
  return keyOf(templates[index as PropertyKey]![part] as IndexTemplate<K, I, P>);
}

export const OBJECT_SK = /* @__PURE__ */ literalOf(objectItem, 'sk');
export const AUTH_SK = /* @__PURE__ */ literalOf(authStateItem, 'sk');
export const STATUS_SK = /* @__PURE__ */ literalOf(objectStatusItem, 'sk');
/** Tombstone of a deleted folder or instance: keeps its place so its old paths answer 404, not 403. */
export const TOMBSTONE_SK = /* @__PURE__ */ literalOf(tombstoneItem, 'sk');

export const objectPk = /* @__PURE__ */ keyOfKind(objectItem, 'pk');
export const collectionPk = /* @__PURE__ */ indexKeyOf(objectItem, 'GSI1', 0);
/** Every object of a collection in an instance, whatever its folder (search's partition). */
export const partitionPk = /* @__PURE__ */ indexKeyOf(objectItem, 'GSI2', 0);
export const namePk = /* @__PURE__ */ indexKeyOf(objectItem, 'GSI3', 0);
export const nameSk = /* @__PURE__ */ indexKeyOf(objectItem, 'GSI3', 1);
export const cardNumberPk = /* @__PURE__ */ indexKeyOf(claimItem, 'GSI3', 0);

export const relationSk = /* @__PURE__ */ keyOfKind(relationItem, 'sk');
/** The beginning of the sort keys of an object's connections: of one relation, or of all. */
export const relationPrefix = (relation?: string): string => prefixOf(relationItem.sk, ...(relation ? [relation] : []));
export const referencedByPk = /* @__PURE__ */ indexKeyOf(relationItem, 'GSI1', 0);
export const referencedBySk = /* @__PURE__ */ indexKeyOf(relationItem, 'GSI1', 1);

/** Sort key of an event type's membership in an alarm definition. */
export const alarmLinkSk = /* @__PURE__ */ keyOfKind(alarmLinkItem, 'sk');
/** The beginning of every alarm link's sort key. */
export const ALARM_LINK_PREFIX = /* @__PURE__ */ prefixOfKind(alarmLinkItem, 'sk');
/** Index partition of an alarm definition's event types. */
export const alarmMembersPk = /* @__PURE__ */ indexKeyOf(alarmLinkItem, 'GSI1', 0);

/** Unique claims: card numbers, names, monikers. `value` is case-normalised by the caller if needed. */
export const claimPk = /* @__PURE__ */ keyOfKind(claimItem, 'pk');
export const CLAIM_SK = /* @__PURE__ */ literalOf(claimItem, 'sk');

export const refreshTokenPk = /* @__PURE__ */ keyOfKind(refreshTokenItem, 'pk');
export const REFRESH_SK = /* @__PURE__ */ literalOf(refreshTokenItem, 'sk');
export const refreshFamilyPk = /* @__PURE__ */ keyOfKind(refreshFamilyItem, 'pk');

/**
 * Failed password logins of a name in an instance that no password can log in as (no such user,
 * or a user without a password), counted so it locks out like a real user's AUTH item.
 */
export const loginNamePk = /* @__PURE__ */ keyOfKind(loginNameItem, 'pk');
export const LOGIN_NAME_SK = /* @__PURE__ */ literalOf(loginNameItem, 'sk');

export const eventFolderPk = /* @__PURE__ */ indexKeyOf(eventItem, 'GSI1', 0);
/** An event's place on its timeline and under each related object (the same sort key for both). */
export const eventSortKey = /* @__PURE__ */ keyOfKind(eventPointerItem, 'sk');
export const eventPointerPk = /* @__PURE__ */ keyOfKind(eventPointerItem, 'pk');

/** A live-only event (a non-logging type's): read by the fan-out, never listed. */
export const LIVE_EVENT_PREFIX = /* @__PURE__ */ prefixOfKind(liveEventItem, 'pk');
export const liveEventPk = /* @__PURE__ */ keyOfKind(liveEventItem, 'pk');

export const wsConnectionPk = /* @__PURE__ */ keyOfKind(wsConnectionItem, 'pk');
export const WS_CONNECTION_SK = /* @__PURE__ */ literalOf(wsConnectionItem, 'sk');
/** GSI1 partition of a user's WebSocket connections (closed when the user's sessions are revoked). */
export const userConnectionsPk = /* @__PURE__ */ indexKeyOf(wsConnectionItem, 'GSI1', 0);
/** An MQTT client id the IoT authorizer let in (AWS), and GSI1 partition of a user's clients. */
export const mqttClientPk = /* @__PURE__ */ keyOfKind(mqttClientItem, 'pk');
export const MQTT_CLIENT_SK = /* @__PURE__ */ literalOf(mqttClientItem, 'sk');
export const userMqttClientsPk = /* @__PURE__ */ indexKeyOf(mqttClientItem, 'GSI1', 0);
export const subscriptionPk = /* @__PURE__ */ keyOfKind(wsSubscriptionItem, 'pk');
export const subscriptionSk = /* @__PURE__ */ keyOfKind(wsSubscriptionItem, 'sk');

/** Webhook subscriptions of an instance: one Query per instance finds them all. */
export const webhookPk = /* @__PURE__ */ keyOfKind(webhookItem, 'pk');
export const IDP_SECRET_SK = /* @__PURE__ */ literalOf(identityProviderSecretItem, 'sk');
export const ssoPendingPk = /* @__PURE__ */ keyOfKind(ssoPendingLoginItem, 'pk');
export const SSO_PENDING_SK = /* @__PURE__ */ literalOf(ssoPendingLoginItem, 'sk');
export const ssoCodePk = /* @__PURE__ */ keyOfKind(ssoCodeItem, 'pk');
export const SSO_CODE_SK = /* @__PURE__ */ literalOf(ssoCodeItem, 'sk');
export const lockdownPk = /* @__PURE__ */ keyOfKind(lockdownItem, 'pk');
export const LOCKDOWN_SK = /* @__PURE__ */ literalOf(lockdownItem, 'sk');
export const READER_MODE_SK = /* @__PURE__ */ literalOf(readerModeItem, 'sk');
export const DOOR_UNLOCK_SK = /* @__PURE__ */ literalOf(doorUnlockItem, 'sk');
export const credentialCounterPk = /* @__PURE__ */ keyOfKind(credentialCounterItem, 'pk');
export const CREDENTIAL_COUNTER_SK = /* @__PURE__ */ literalOf(credentialCounterItem, 'sk');
export const credentialChangePk = /* @__PURE__ */ keyOfKind(credentialChangeItem, 'pk');
export const scimTokenPk = /* @__PURE__ */ keyOfKind(scimTokenItem, 'pk');
export const SCIM_TOKEN_PREFIX = /* @__PURE__ */ prefixOf(scimTokenItem.pk);
/** Delivery attempts of one webhook subscription, newest last (attempt keys are ObjectIds). */
export const webhookAttemptPk = /* @__PURE__ */ keyOfKind(webhookAttemptItem, 'pk');
/** A subscription's replay slot (rate limit of replays): one item, kept while it holds. */
export const webhookReplayPk = /* @__PURE__ */ keyOfKind(webhookReplayItem, 'pk');
export const WEBHOOK_REPLAY_SK = /* @__PURE__ */ literalOf(webhookReplayItem, 'sk');
/** The local runtime's webhook queue: one partition, sorted by when each job is due. */
export const WEBHOOK_QUEUE_PK = /* @__PURE__ */ literalOf(webhookJobItem, 'pk');
const webhookJobSk = /* @__PURE__ */ keyOfKind(webhookJobItem, 'sk');
/** A queued job's sort key: when it is due (epoch ms, 15 digits, so that text order is time order), then its id. */
export const webhookQueueSk = (dueAtMs: number, jobId: string): string => webhookJobSk(String(Math.max(0, Math.floor(dueAtMs))).padStart(15, '0'), jobId);

/** Metered usage of one instance: one item per UTC day (`D#<yyyy-mm-dd>`) and one running total. */
export const usagePk = /* @__PURE__ */ keyOfKind(usageDayItem, 'pk');
export const usageDaySk = /* @__PURE__ */ keyOfKind(usageDayItem, 'sk');
export const USAGE_TOTAL_SK = /* @__PURE__ */ literalOf(usageTotalItem, 'sk');

/** The public keys that verify access tokens (AWS; written by the key manager, shared/db/published-keys.ts). */
export const PUBLIC_KEYS_PK = /* @__PURE__ */ literalOf(publicKeysItem, 'pk');
export const PUBLIC_KEYS_SK = /* @__PURE__ */ literalOf(publicKeysItem, 'sk');

/**
 * An `Idempotency-Key` record (shared/db/idempotency-store.ts): the prefix of its PK, which
 * Powertools joins with `#` to the hash it makes of the key's scope (caller's instance and user,
 * method, path) and the key itself, and its SK. Kept 24 hours (TTL).
 */
export const IDEMPOTENCY_PREFIX = /* @__PURE__ */ beforeLastHash(idempotencyRecordItem);
export const IDEMPOTENCY_SK = /* @__PURE__ */ literalOf(idempotencyRecordItem, 'sk');

/** The literal beginning of a template without its last `#` (`IK#<hash>` → `IK`). */
function beforeLastHash(kind: ItemKind): string {
  return prefixOfKind(kind, 'pk').replace(/#$/, '');
}

/** Object keys are 24 lower-case hex digits (ObjectIds). */
const OBJECT_KEY = /^[0-9a-f]{24}$/;
export const isObjectKey = (s: unknown): s is string => typeof s === 'string' && OBJECT_KEY.test(s);
