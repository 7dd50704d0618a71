/**
 * The single table, declared once as data: its keys, indexes, TTL attribute and stream
 * ({@link TABLE}), which the CDK stack (infra/gatehouse-table.ts) and the local runtime's table
 * creation (local/storage/create-tables.ts) both build from, and every kind of item it holds
 * ({@link ITEM_KINDS}): its key templates, the index keys it carries, whether it expires, and what
 * it is. The key builders of `item-keys.ts` are made from these templates, so a key's spelling
 * lives here and nowhere else.
 *
 * A template is literal text with `<holes>`: `O#<key>` is `O#` followed by the object's key. The
 * hole's name says what fills it; the builder takes the values in the holes' order.
 */

interface IndexDef {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
}

export interface TableDef {
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly indexes: readonly IndexDef[];
  /** Epoch seconds; DynamoDB deletes the item some time after. Reads must also filter on it. */
  readonly ttlAttribute: string;
  readonly stream: 'NEW_AND_OLD_IMAGES';
}

export const TABLE: TableDef = Object.freeze({
  partitionKey: 'PK',
  sortKey: 'SK',
  indexes: Object.freeze([
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
    { name: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK' },
  ]),
  ttlAttribute: 'ttl',
  stream: 'NEW_AND_OLD_IMAGES',
});

/** The name of an index of {@link TABLE}. */
type IndexName = 'GSI1' | 'GSI2' | 'GSI3';

/** One kind of item: how its keys are spelled, the indexes it is in, whether it expires. */
export interface ItemKind {
  /** What the item is, in one line. */
  readonly meaning: string;
  /** Template of the partition key (`PK`). */
  readonly pk: string;
  /** Template of the sort key (`SK`). */
  readonly sk: string;
  /** The index keys the item carries (partition / sort key templates), by index. */
  readonly indexes?: Readonly<Partial<Record<IndexName, readonly [pk: string, sk: string]>>>;
  /**
   * It carries {@link TableDef.ttlAttribute} (epoch seconds): it expires, and its reads filter
   * expired ones out; absent: it is kept. Why and when it expires is said beside each kind.
   */
  readonly ttl?: true;
  /**
   * The table holding it when not the main one: `webhook-queue` is the local runtime's queue
   * table (`queueTableOf`: same keys, no index, no stream).
   */
  readonly table?: 'webhook-queue';
}

/*
 * Every kind of item, each a constant of its own (a function's bundle keeps only the kinds whose
 * keys it builds), then all of them by name in {@link ITEM_KINDS}. Objects of every collection
 * share one kind; an event is an object whose GSI1 is its folder's timeline instead of a
 * collection page.
 */

export const objectItem = {
  meaning: 'a stored object (person, device, folder, instance, user, app, event type, …): its document and the attributes that find and scope it',
  pk: 'O#<key>',
  sk: 'A',
  indexes: {
    GSI1: ['C#<folder>#<collection>', '<key>'],
    GSI2: ['T#<instance>#<collection>', '<key>'],
    GSI3: ['N#<instance>', '<commonName>#<key>'],
  },
} as const satisfies ItemKind;

export const eventItem = {
  meaning: 'an event of a logging type: an object of collection `events` on its folder’s timeline',
  pk: 'O#<eventKey>',
  sk: 'A',
  indexes: { GSI1: ['EV#<folder>', '<occurredOn>#<eventKey>'] },
  // Events are kept for their retention.
  ttl: true,
} as const satisfies ItemKind;

export const liveEventItem = {
  meaning: 'an event of a non-logging type: read by the fan-out from the stream, never listed',
  pk: 'LIVE#<eventKey>',
  sk: 'A',
  // Short-lived: the fan-out reads it from the stream record, never from the table.
  ttl: true,
} as const satisfies ItemKind;

export const eventPointerItem = {
  meaning: 'an event related to an object, under the object (its events and last event)',
  pk: 'EP#<objectKey>',
  sk: '<occurredOn>#<eventKey>',
  // Expires with its event.
  ttl: true,
} as const satisfies ItemKind;

export const authStateItem = {
  meaning: 'a user’s password hash, failed logins, lock and one-time code',
  pk: 'O#<userKey>',
  sk: 'AUTH',
} as const satisfies ItemKind;

export const objectStatusItem = {
  meaning: 'the latest status document of an object (inputs)',
  pk: 'O#<inputKey>',
  sk: 'STATUS',
} as const satisfies ItemKind;

export const tombstoneItem = {
  meaning: 'where a deleted folder or instance was: its old paths answer 404, not 403',
  pk: 'O#<folderKey>',
  sk: 'GONE',
  // Kept 90 days.
  ttl: true,
} as const satisfies ItemKind;

export const relationItem = {
  meaning: 'a connection of an object to another (access levels, readers, …), indexed by its target',
  pk: 'O#<fromKey>',
  sk: 'R#<relation>#<toKey>',
  indexes: { GSI1: ['RB#<toKey>', '<relation>#<fromKey>'] },
} as const satisfies ItemKind;

export const alarmLinkItem = {
  meaning: 'an event type’s membership in an alarm definition, indexed by alarm',
  pk: 'O#<eventTypeKey>',
  sk: 'ALARM#<alarmKey>',
  indexes: { GSI1: ['AL#<alarmKey>', '<eventTypeKey>'] },
} as const satisfies ItemKind;

export const claimItem = {
  meaning: 'a unique value (card number, name, moniker) and its owner; a card claim is indexed by number',
  pk: 'U#<scope>#<kind>#<value>',
  sk: 'U',
  indexes: { GSI3: ['CN#<instance>#<number>', '<ownerKey>'] },
} as const satisfies ItemKind;

export const refreshTokenItem = {
  meaning: 'a refresh token (only its hash), indexed by its login family',
  pk: 'RT#<tokenHash>',
  sk: 'RT',
  indexes: { GSI1: ['RTF#<family>', '<issuedAt>'] },
  // Expires with the token.
  ttl: true,
} as const satisfies ItemKind;

export const refreshFamilyItem = {
  meaning: 'a login family: the session generation of its login, revoked at once on reuse',
  pk: 'RTF#<family>',
  sk: 'RT',
  // Expires with its first token.
  ttl: true,
} as const satisfies ItemKind;

export const loginNameItem = {
  meaning: 'failed password logins of a name no password logs in as, locked out like a user',
  pk: 'LN#<instanceKey>#<nameHash>',
  sk: 'LN',
  // Forgotten after the lock window.
  ttl: true,
} as const satisfies ItemKind;

export const wsConnectionItem = {
  meaning: 'a WebSocket connection: its principal and subscriptions, indexed by user',
  pk: 'WSC#<connectionId>',
  sk: 'C',
  indexes: { GSI1: ['WSU#<userKey>', '<connectionId>'] },
  // Expires when the connection could last no longer.
  ttl: true,
} as const satisfies ItemKind;

export const mqttClientItem = {
  meaning: 'an MQTT client id the IoT authorizer let in (AWS), indexed by user',
  pk: 'MQC#<clientId>',
  sk: 'C',
  indexes: { GSI1: ['MQU#<userKey>', '<clientId>'] },
  // Expires when the connection could last no longer.
  ttl: true,
} as const satisfies ItemKind;

export const wsSubscriptionItem = {
  meaning: 'a WebSocket connection’s subscription to a topic, under the topic’s instance',
  pk: 'SUB#<instanceKey>',
  sk: '<connectionId>#<topic>',
  // Expires when the connection could last no longer.
  ttl: true,
} as const satisfies ItemKind;

export const webhookItem = {
  meaning: 'a webhook subscription, under its instance (one Query finds an instance’s)',
  pk: 'WH#<instanceKey>',
  sk: '<webhookKey>',
} as const satisfies ItemKind;

export const webhookAttemptItem = {
  meaning: 'a delivery attempt of a webhook subscription, newest last',
  pk: 'WD#<webhookKey>',
  sk: '<attemptKey>',
  // Kept 30 days.
  ttl: true,
} as const satisfies ItemKind;

export const webhookReplayItem = {
  meaning: 'a subscription’s replay slot: one replay a minute',
  pk: 'WR#<webhookKey>',
  sk: 'R',
  // Expires a minute after the slot frees.
  ttl: true,
} as const satisfies ItemKind;

export const scimTokenItem = {
  meaning: 'an instance’s SCIM token: its sha256, never the token (shared/db/scim-repo.ts)',
  pk: 'SCIMT#<instanceKey>',
  sk: '<tokenKey>',
} as const satisfies ItemKind;

export const identityProviderSecretItem = {
  meaning: 'an identity provider’s client secret, sealed (shared/db/sso-repo.ts), beside the provider object',
  pk: 'O#<providerKey>',
  sk: 'IDPSECRET',
} as const satisfies ItemKind;

export const ssoPendingLoginItem = {
  meaning: 'a single sign-on waiting for the provider’s answer, keyed by a hash of Gatehouse’s state: taken once',
  pk: 'SSO#<stateHash>',
  sk: 'P',
  ttl: true,
} as const satisfies ItemKind;

export const ssoCodeItem = {
  meaning: 'a one-time authorization code handed to a client, keyed by a hash of the code: redeemed once',
  pk: 'SSO#<codeHash>',
  sk: 'C',
  ttl: true,
} as const satisfies ItemKind;

export const lockdownItem = {
  meaning: 'a lockdown of a folder or instance and everything below it: one item, whatever the number of readers (shared/db/door-state.ts)',
  pk: 'LD#<folderKey>',
  sk: 'LD',
} as const satisfies ItemKind;

export const readerModeItem = {
  meaning: 'a reader’s mode set by an operator, until an instant or until reset (readers compare Until themselves)',
  pk: 'O#<readerKey>',
  sk: 'MODE',
  ttl: true,
} as const satisfies ItemKind;

export const doorUnlockItem = {
  meaning: 'a door’s momentary unlock, until an instant',
  pk: 'O#<doorKey>',
  sk: 'UNLOCK',
  ttl: true,
} as const satisfies ItemKind;

export const credentialCounterItem = {
  meaning: 'an instance’s count of the changes a credential download depends on (its Version) (shared/db/credential-log.ts)',
  pk: 'AV#<instanceKey>',
  sk: 'AV',
} as const satisfies ItemKind;

export const credentialChangeItem = {
  meaning: 'one change a credential download depends on, by its sequence number (12 digits): what `since` reads',
  pk: 'AC#<instanceKey>',
  sk: '<seq>',
  ttl: true,
} as const satisfies ItemKind;

export const webhookJobItem = {
  meaning: 'a job of the local runtime’s webhook queue, sorted by when it is due (15 digits of epoch ms)',
  pk: 'WQ',
  sk: '<dueAtMs>#<jobId>',
  // Dropped after the retry schedule.
  ttl: true,
  table: 'webhook-queue',
} as const satisfies ItemKind;

export const usageDayItem = {
  meaning: 'the metered usage of an instance on one UTC day',
  pk: 'US#<instanceKey>',
  sk: 'D#<day>',
  // Kept for the usage report’s range.
  ttl: true,
} as const satisfies ItemKind;

export const usageTotalItem = {
  meaning: 'the running stored-object count of an instance',
  pk: 'US#<instanceKey>',
  sk: 'TOTAL',
} as const satisfies ItemKind;

export const publicKeysItem = {
  meaning: 'the public keys that verify access tokens (AWS; written by the key manager)',
  pk: 'KEYS',
  sk: 'JWKS',
} as const satisfies ItemKind;

export const idempotencyRecordItem = {
  meaning: 'an Idempotency-Key’s claim and saved answer; the hash is Powertools’ of the caller, method, path and key',
  pk: 'IK#<hash>',
  sk: 'IK',
  // Kept 24 hours.
  ttl: true,
} as const satisfies ItemKind;

/** Every kind of item, by name. */
export const ITEM_KINDS = {
  object: objectItem,
  event: eventItem,
  liveEvent: liveEventItem,
  eventPointer: eventPointerItem,
  authState: authStateItem,
  objectStatus: objectStatusItem,
  tombstone: tombstoneItem,
  relation: relationItem,
  alarmLink: alarmLinkItem,
  claim: claimItem,
  refreshToken: refreshTokenItem,
  refreshFamily: refreshFamilyItem,
  loginName: loginNameItem,
  wsConnection: wsConnectionItem,
  mqttClient: mqttClientItem,
  wsSubscription: wsSubscriptionItem,
  webhook: webhookItem,
  webhookAttempt: webhookAttemptItem,
  webhookReplay: webhookReplayItem,
  scimToken: scimTokenItem,
  identityProviderSecret: identityProviderSecretItem,
  ssoPendingLogin: ssoPendingLoginItem,
  ssoCode: ssoCodeItem,
  lockdown: lockdownItem,
  readerMode: readerModeItem,
  doorUnlock: doorUnlockItem,
  credentialCounter: credentialCounterItem,
  credentialChange: credentialChangeItem,
  webhookJob: webhookJobItem,
  usageDay: usageDayItem,
  usageTotal: usageTotalItem,
  publicKeys: publicKeysItem,
  idempotencyRecord: idempotencyRecordItem,
} as const;

