/**
 * Key builders: the only place that knows how item keys are spelled. Pure functions, unit-tested.
 *
 * | item                 | PK                               | SK                      | GSI1 (PK / SK)                         | GSI2 (PK / SK)                |
 * | -------------------- | -------------------------------- | ----------------------- | -------------------------------------- | ----------------------------- |
 * | object               | `O#<key>`                        | `A`                     | `C#<folder>#<collection>` / `<key>`    | `T#<instance>#<collection>` / `<key>` |
 * | object auth state    | `O#<userKey>`                    | `AUTH`                  |                                        |                               |
 * | input status         | `O#<inputKey>`                   | `STATUS`                |                                        |                               |
 * | deleted folder       | `O#<folderKey>`                  | `GONE`                  |                                        |                               |
 * | connection (relation)| `O#<fromKey>`                    | `R#<relation>#<toKey>`  | `RB#<toKey>` / `<relation>#<fromKey>`  |                               |
 * | unique claim         | `U#<scope>#<kind>#<value>`       | `U`                     |                                        |                               |
 * | refresh token        | `RT#<sha256 of token>`           | `RT`                    | `RTF#<login family>` / `<issued>`      |                               |
 * | refresh family       | `RTF#<login family>`             | `RT`                    |                                        |                               |
 * | login name counter   | `LN#<instanceKey>#<name hash>`   | `LN`                    |                                        |                               |
 * | event pointer        | `EP#<objectKey>`                 | `<occurredOn>#<eventKey>` |                                      |                               |
 * | ws connection        | `WSC#<connectionId>`             | `C`                     | `WSU#<userKey>` / `<connectionId>`     |                               |
 * | mqtt client (AWS)    | `MQC#<clientId>`                 | `C`                     | `MQU#<userKey>` / `<clientId>`         |                               |
 * | ws subscription      | `SUB#<instanceKey>`              | `<connectionId>#<topic>`|                                        |                               |
 * | webhook subscription | `WH#<instanceKey>`               | `<webhookKey>`          |                                        |                               |
 * | webhook attempt      | `WD#<webhookKey>`                | `<attemptKey>`          |                                        |                               |
 * | webhook job (local; in the queue table `<table>-webhook-queue`) | `WQ`                             | `<dueAt ms, 15 digits>#<jobId>` |                                |                               |
 * | tenant usage, a day  | `US#<instanceKey>`               | `D#<yyyy-mm-dd>`        |                                        |                               |
 * | tenant usage, total  | `US#<instanceKey>`               | `TOTAL`                 |                                        |                               |
 * | public JWKS (AWS)    | `KEYS`                           | `JWKS`                  |                                        |                               |
 * | idempotency record   | `IK#<sha256 of caller, method, path, Idempotency-Key>` | `IK`  |                                  |                               |
 *
 * Events are objects (PK `O#<eventKey>`, SK `A`) whose GSI1 is `EV#<folder>` / `<occurredOn>#<key>`.
 *
 * GSI3 holds the search indexes: an object's CommonName (`N#<instance>` / `<CommonName>#<key>`)
 * and a card claim's number (`CN#<instance>#<number>` / `<owner key>`).
 */

export const OBJECT_SK = 'A';
export const AUTH_SK = 'AUTH';
export const STATUS_SK = 'STATUS';
/** Tombstone of a deleted folder or instance: keeps its place so its old paths answer 404, not 403. */
export const TOMBSTONE_SK = 'GONE';

export const objectPk = (key: string): string => `O#${key}`;
export const collectionPk = (folderKey: string, collection: string): string => `C#${folderKey}#${collection}`;
/** Every object of a collection in an instance, whatever its folder (search's partition). */
export const partitionPk = (instanceKey: string, collection: string): string => `T#${instanceKey}#${collection}`;
export const namePk = (instanceKey: string): string => `N#${instanceKey}`;
export const nameSk = (commonName: string, key: string): string => `${commonName}#${key}`;
export const cardNumberPk = (instanceKey: string, number: string): string => `CN#${instanceKey}#${number}`;

export const relationSk = (relation: string, toKey: string): string => `R#${relation}#${toKey}`;
export const relationPrefix = (relation?: string): string => (relation ? `R#${relation}#` : 'R#');
export const referencedByPk = (toKey: string): string => `RB#${toKey}`;

/** Unique claims: card numbers, names, monikers. `value` is case-normalised by the caller if needed. */
export const claimPk = (scope: string, kind: string, value: string): string => `U#${scope}#${kind}#${value}`;
export const CLAIM_SK = 'U';

export const refreshTokenPk = (tokenHash: string): string => `RT#${tokenHash}`;
export const REFRESH_SK = 'RT';
export const refreshFamilyPk = (familyId: string): string => `RTF#${familyId}`;

/**
 * Failed password logins of a name in an instance that no password can log in as (no such user,
 * or a user without a password), counted so it locks out like a real user's AUTH item.
 */
export const loginNamePk = (instanceKey: string, nameHash: string): string => `LN#${instanceKey}#${nameHash}`;
export const LOGIN_NAME_SK = 'LN';

export const eventFolderPk = (folderKey: string): string => `EV#${folderKey}`;
export const eventSortKey = (occurredOnIso: string, eventKey: string): string => `${occurredOnIso}#${eventKey}`;
export const eventPointerPk = (objectKey: string): string => `EP#${objectKey}`;

/** A live-only event (a non-logging type's): read by the fan-out, never listed. */
export const LIVE_EVENT_PREFIX = 'LIVE#';
export const liveEventPk = (eventKey: string): string => `${LIVE_EVENT_PREFIX}${eventKey}`;

export const wsConnectionPk = (connectionId: string): string => `WSC#${connectionId}`;
export const WS_CONNECTION_SK = 'C';
/** GSI1 partition of a user's WebSocket connections (closed when the user's sessions are revoked). */
export const userConnectionsPk = (userKey: string): string => `WSU#${userKey}`;
/** An MQTT client id the IoT authorizer let in (AWS), and GSI1 partition of a user's clients. */
export const mqttClientPk = (clientId: string): string => `MQC#${clientId}`;
export const MQTT_CLIENT_SK = 'C';
export const userMqttClientsPk = (userKey: string): string => `MQU#${userKey}`;
export const subscriptionPk = (instanceKey: string): string => `SUB#${instanceKey}`;
export const subscriptionSk = (connectionId: string, topic: string): string => `${connectionId}#${topic}`;

/** Webhook subscriptions of an instance: one Query per instance finds them all. */
export const webhookPk = (instanceKey: string): string => `WH#${instanceKey}`;
/** Delivery attempts of one webhook subscription, newest last (attempt keys are ObjectIds). */
export const webhookAttemptPk = (webhookKey: string): string => `WD#${webhookKey}`;
/** The local runtime's webhook queue: one partition, sorted by when each job is due. */
/** A subscription's replay slot (rate limit of replays): one item, kept while it holds. */
export const webhookReplayPk = (webhookKey: string): string => `WR#${webhookKey}`;
export const WEBHOOK_REPLAY_SK = 'R';
export const WEBHOOK_QUEUE_PK = 'WQ';
export const webhookQueueSk = (dueAtMs: number, jobId: string): string => `${String(Math.max(0, Math.floor(dueAtMs))).padStart(15, '0')}#${jobId}`;

/** Metered usage of one instance: one item per UTC day (`D#<yyyy-mm-dd>`) and one running total. */
export const usagePk = (instanceKey: string): string => `US#${instanceKey}`;
export const usageDaySk = (day: string): string => `D#${day}`;
export const USAGE_TOTAL_SK = 'TOTAL';

/** The public keys that verify access tokens (AWS; written by the key manager, shared/db/published-keys.ts). */
export const PUBLIC_KEYS_PK = 'KEYS';
export const PUBLIC_KEYS_SK = 'JWKS';

/**
 * An `Idempotency-Key` record (shared/db/idempotency-store.ts): the prefix of its PK, followed by
 * the hash Powertools makes of the key's scope (caller's instance and user, method, path) and the
 * key itself, and its SK. Kept 24 hours (TTL).
 */
export const IDEMPOTENCY_PREFIX = 'IK';
export const IDEMPOTENCY_SK = 'IK';

/** Object keys are 24 lower-case hex digits (ObjectIds). */
export const OBJECT_KEY = /^[0-9a-f]{24}$/;
export const isObjectKey = (s: unknown): s is string => typeof s === 'string' && OBJECT_KEY.test(s);

/** The SCIM tokens of an instance (`SCIMT#<instanceKey>` / `<tokenKey>`): shared/db/scim-repo.ts. */
export const scimTokenPk = (instanceKey: string): string => `SCIMT#${instanceKey}`;
