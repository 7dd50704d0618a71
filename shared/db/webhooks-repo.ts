/**
 * Webhook items: subscriptions, delivery attempts, and the local runtime's delivery queue.
 *
 * | item          | PK                  | SK                               | attributes                                    |
 * | ------------- | ------------------- | -------------------------------- | --------------------------------------------- |
 * | subscription  | `WH#<instanceKey>`  | `<webhookKey>`                   | Key, Instances, Doc (JSON), Secret, PreviousSecret (both sealed: shared/auth/secret-box.ts), PreviousSecretUntil, Version, DisabledReason, LastDeliveryOn, LastFailureOn, FailingSince |
 * | attempt       | `WD#<webhookKey>`   | `<attemptKey>`                   | EventKey, MessageId, Attempt, StatusCode or Error, DurationMs, AttemptedOn, NextAttemptOn, DeadLettered, ttl |
 * | queued job    | `WQ`                | `<dueAt ms>#<jobId>`             | WebhookKey, InstanceKey, Job (JSON), ttl      |
 * | replay slot   | `WR#<webhookKey>`   | `R`                              | Until (epoch ms), ttl                         |
 *
 * Queued jobs live in the local runtime's queue table (`queueTableOf` in client.ts: same keys,
 * no stream), not in the main table: {@link putQueuedJobs} takes a queue `Db`. The runner's reads
 * and deletes of jobs are local-only: local/storage/webhook-queue-table.ts.
 *
 * Access patterns: the subscriptions of an instance are one Query on `WH#<instance>` (the fan-out
 * runs one per instance of the batch's chains, per batch, never reused); one subscription is one
 * GetItem; the attempts of a subscription, newest first, are one Query on `WD#<webhookKey>`. The
 * queue partition is only used by the local runtime (in AWS the jobs are SQS messages).
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { isSealed, openSecret, sealSecret } from '../auth/secret-box.ts';
import { ConditionFailed } from '../errors.ts';
import { parseJson, stringifyJson } from '../json.ts';
import type { Db } from './client.ts';
import { WEBHOOK_QUEUE_PK, WEBHOOK_REPLAY_SK, webhookAttemptPk, webhookPk, webhookQueueSk, webhookReplayPk } from './item-keys.ts';
import { getItem } from './item-reads.ts';
import { send } from './objects-repo.ts';
import { batchWriteItems, queryAll, versionCondition } from './requests.ts';

/** What the client sets on a subscription (stored as the document). */
export interface WebhookSettings {
  readonly CommonName: string;
  readonly Url: string;
  readonly Enabled: boolean;
  readonly Topics: readonly string[];
  readonly AppKeys: readonly string[];
  readonly EventTypeKeys: readonly string[];
  readonly MinimumPriority: number | null;
  readonly IncludeAuditEvents: boolean;
}

export interface StoredWebhook {
  readonly key: string;
  /** The instance that holds it (its Href's folder). */
  readonly instanceKey: string;
  readonly settings: WebhookSettings;
  readonly secret: string;
  readonly previousSecret: string | undefined;
  /** Epoch ms until which the previous secret still signs. */
  readonly previousSecretUntil: number | undefined;
  readonly version: number;
  readonly disabledReason: string | null;
  readonly lastDeliveryOn: string | null;
  readonly lastFailureOn: string | null;
  /** ISO time of the first failure since the last success. */
  readonly failingSince: string | null;
}

/**
 * What a subscription's secrets are sealed for (shared/auth/secret-box.ts): its instance and key,
 * so a sealed secret opens on its own item only (PreviousSecret is a copy of Secret's value).
 */
const secretContext = (w: Pick<StoredWebhook, 'instanceKey' | 'key'>) => `webhook/${w.instanceKey}/${w.key}`;

/**
 * A subscription as stored, its secrets opened. Secrets are sealed at rest; one stored in clear
 * (before sealing existed) reads as it is and is sealed by the next write ({@link sealClearSecrets}).
 */
async function toWebhook(i: Record<string, unknown>): Promise<StoredWebhook> {
  const at = { instanceKey: i.Instance as string, key: i.Key as string };
  const previous = i.PreviousSecret as string | undefined;
  return {
    key: i.Key as string,
    instanceKey: i.Instance as string,
    settings: parseJson(i.Doc as string) as WebhookSettings,
    secret: await openSecret(i.Secret as string, secretContext(at)),
    previousSecret: previous === undefined ? undefined : await openSecret(previous, secretContext(at)),
    previousSecretUntil: typeof i.PreviousSecretUntil === 'number' ? i.PreviousSecretUntil : undefined,
    version: Number(i.Version ?? 1),
    disabledReason: (i.DisabledReason as string | undefined) ?? null,
    lastDeliveryOn: (i.LastDeliveryOn as string | undefined) ?? null,
    lastFailureOn: (i.LastFailureOn as string | undefined) ?? null,
    failingSince: (i.FailingSince as string | undefined) ?? null,
  };
}

/** Creates a subscription (its key is new: the write fails only if it somehow exists). */
export async function putWebhook(db: Db, w: StoredWebhook): Promise<void> {
  return writing(db, w, async () => {
    await send(
      db,
      new PutCommand({
        TableName: db.tableName,
        Item: {
          PK: webhookPk(w.instanceKey),
          SK: w.key,
          Key: w.key,
          Instance: w.instanceKey,
          Doc: stringifyJson(w.settings),
          Secret: await sealSecret(w.secret, secretContext(w)),
          Version: w.version,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  });
}

/** One subscription, or undefined. One strongly consistent GetItem. */
export async function getWebhook(db: Db, instanceKey: string, key: string): Promise<StoredWebhook | undefined> {
  // Through getItem: it joins a gathering of reads by key (shared/db/item-reads.ts).
  const item = await getItem(db, webhookPk(instanceKey), key, true);
  return item ? await toWebhook(item) : undefined;
}

/** How long the sender reuses a subscription it read (per execution environment). */
export const RECENT_WEBHOOK_MS = 1000;
/** Subscriptions read by {@link getRecentWebhook}: table/instance/key → the read and when. */
const recent = new Map<string, { readonly hook: StoredWebhook | undefined; readonly at: number }>();
/** Bounds the memory of {@link recent} (it is emptied beyond this many subscriptions). */
const RECENT_WEBHOOKS_MAX = 10_000;
const recentKey = (db: Db, instanceKey: string, key: string) => `${db.tableName}/${instanceKey}/${key}`;

/**
 * One subscription as read at most {@link RECENT_WEBHOOK_MS} ago in this process, or undefined:
 * what the sender uses, so a busy subscription costs one GetItem a second instead of one per
 * delivery. Every write of this module forgets the subscription, so a change made in the same
 * process applies to the next delivery; one made in another execution environment within a
 * second, or at once when the caller names the version it needs (`minVersion`: the version a
 * job was matched with; an older copy is read again, a deleted one stays deleted).
 */
export async function getRecentWebhook(db: Db, instanceKey: string, key: string, now = Date.now(), minVersion = 0): Promise<StoredWebhook | undefined> {
  const k = recentKey(db, instanceKey, key);
  const hit = recent.get(k);
  if (hit && now - hit.at < RECENT_WEBHOOK_MS && (hit.hook?.version ?? minVersion) >= minVersion) return hit.hook;
  const before = recentWrites;
  const hook = await getWebhook(db, instanceKey, key);
  // A write of this process began meanwhile: the read may predate it, so it is not kept.
  if (before !== recentWrites) return hook;
  if (recent.size >= RECENT_WEBHOOKS_MAX) recent.clear();
  recent.set(k, { hook, at: now });
  return hook;
}

/** Counts the writes begun and ended in this process (see {@link getRecentWebhook}). */
let recentWrites = 0;

/** Runs a write of a subscription: it is forgotten when the write begins and when it ends. */
async function writing<T>(db: Db, w: Pick<StoredWebhook, 'instanceKey' | 'key'>, write: () => Promise<T>): Promise<T> {
  const k = recentKey(db, w.instanceKey, w.key);
  recentWrites++;
  recent.delete(k);
  try {
    return await write();
  } finally {
    recentWrites++;
    recent.delete(k);
  }
}

/** Every subscription of one instance: one strongly consistent Query (all pages) on `WH#<instance>`. */
export async function webhooksOf(db: Db, instanceKey: string): Promise<StoredWebhook[]> {
  // Strongly consistent: the fan-out relies on seeing every write answered before the read.
  const items = await queryAll(db, { KeyConditionExpression: 'PK = :pk', ExpressionAttributeValues: { ':pk': webhookPk(instanceKey) }, ConsistentRead: true });
  return Promise.all(items.map(toWebhook));
}

const isConditionFailure = (err: unknown) => (err as { name?: string }).name === 'ConditionalCheckFailedException';

/**
 * Updates a subscription that exists (never re-creating a deleted one), under `ConditionExpression`
 * when given: the subscription as updated, or undefined when it is gone or the condition failed.
 */
async function updateWebhook(
  db: Db,
  w: Pick<StoredWebhook, 'instanceKey' | 'key'>,
  update: Required<Pick<UpdateCommandInput, 'UpdateExpression' | 'ExpressionAttributeValues'>> & Pick<UpdateCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames'>,
): Promise<StoredWebhook | undefined> {
  return writing(db, w, async () => {
    try {
      const out = await send<{ Attributes?: Record<string, unknown> }>(
        db,
        new UpdateCommand({
          TableName: db.tableName,
          Key: { PK: webhookPk(w.instanceKey), SK: w.key },
          ConditionExpression: 'attribute_exists(PK)',
          ...update,
          ReturnValues: 'ALL_NEW',
        }),
      );
      if (!out.Attributes) return undefined;
      await sealClearSecrets(db, out.Attributes);
      return await toWebhook(out.Attributes);
    } catch (err) {
      if (isConditionFailure(err)) return undefined;
      throw err;
    }
  });
}

/**
 * Seals the secrets of a subscription stored before sealing existed, as the write that just
 * returned `item` found them: each only if it is still that clear value (a rotation meanwhile
 * wins). A failed condition means another writer got there first.
 */
async function sealClearSecrets(db: Db, item: Record<string, unknown>): Promise<void> {
  const at = { instanceKey: item.Instance as string, key: item.Key as string };
  for (const name of ['Secret', 'PreviousSecret'] as const) {
    const stored = item[name];
    if (typeof stored !== 'string' || isSealed(stored)) continue;
    try {
      await send(
        db,
        new UpdateCommand({
          TableName: db.tableName,
          Key: { PK: webhookPk(at.instanceKey), SK: at.key },
          UpdateExpression: 'SET #s = :sealed',
          ConditionExpression: '#s = :clear',
          ExpressionAttributeNames: { '#s': name },
          ExpressionAttributeValues: { ':sealed': await sealSecret(stored, secretContext(at)), ':clear': stored },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }
}

/**
 * Replaces the settings of a subscription if it exists (and, when `expectedVersion` is given, if
 * it still has that version). Enabling clears the reason it was disabled and its failure streak.
 */
export async function replaceWebhookSettings(
  db: Db,
  w: Pick<StoredWebhook, 'instanceKey' | 'key'>,
  settings: WebhookSettings,
  expectedVersion: number | undefined,
): Promise<StoredWebhook> {
  const condition = versionCondition(expectedVersion);
  const updated = await updateWebhook(db, w, {
    UpdateExpression: `SET Doc = :doc, Version = Version + :one${settings.Enabled ? ' REMOVE DisabledReason, FailingSince' : ''}`,
    ...condition,
    ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ':doc': stringifyJson(settings), ':one': 1 },
  });
  if (!updated) throw new ConditionFailed('The webhook changed or is gone.');
  return updated;
}

/** Replaces the secret, keeping the old one as the previous secret until `previousUntil`. */
export async function rotateWebhookSecret(
  db: Db,
  w: Pick<StoredWebhook, 'instanceKey' | 'key'>,
  secret: string,
  previousUntil: number,
): Promise<StoredWebhook> {
  const updated = await updateWebhook(db, w, {
    UpdateExpression: 'SET PreviousSecret = Secret, PreviousSecretUntil = :until, Secret = :secret, Version = Version + :one',
    ExpressionAttributeValues: { ':secret': await sealSecret(secret, secretContext(w)), ':until': previousUntil, ':one': 1 },
  });
  if (!updated) throw new ConditionFailed('The webhook is gone.');
  return updated;
}

/** Deletes a subscription (idempotent). Its attempt records expire with their TTL. */
export async function deleteWebhook(db: Db, instanceKey: string, key: string): Promise<boolean> {
  return writing(db, { instanceKey, key }, async () => {
    const out = await send<{ Attributes?: unknown }>(
      db,
      new DeleteCommand({ TableName: db.tableName, Key: { PK: webhookPk(instanceKey), SK: key }, ReturnValues: 'ALL_OLD' }),
    );
    return out.Attributes !== undefined;
  });
}

/** The outcome of a delivery attempt, as the subscription keeps it. */
export type WebhookOutcome = { readonly kind: 'delivered' | 'failed'; readonly at: string };

/**
 * Records a delivery's outcome on the subscription (never re-creating a deleted one): a success
 * sets LastDeliveryOn and ends the failure streak; a failure sets LastFailureOn and starts the
 * streak if none is running. Returns the subscription as updated, or undefined when it is gone.
 */
export async function recordWebhookOutcome(
  db: Db,
  w: Pick<StoredWebhook, 'instanceKey' | 'key'>,
  outcome: WebhookOutcome,
): Promise<StoredWebhook | undefined> {
  return updateWebhook(db, w, {
    UpdateExpression:
      outcome.kind === 'delivered'
        ? 'SET LastDeliveryOn = :at REMOVE FailingSince'
        : 'SET LastFailureOn = :at, FailingSince = if_not_exists(FailingSince, :at)',
    ExpressionAttributeValues: { ':at': outcome.at },
  });
}

/** Turns a subscription off with a reason (its document's Enabled becomes false); nothing if it is gone. */
export async function disableWebhook(db: Db, w: StoredWebhook, reason: string): Promise<void> {
  await updateWebhook(db, w, {
    UpdateExpression: 'SET Doc = :doc, DisabledReason = :reason, Version = Version + :one',
    ExpressionAttributeValues: { ':doc': stringifyJson({ ...w.settings, Enabled: false }), ':reason': reason, ':one': 1 },
  });
}

/** One delivery attempt, as listed by `GET <webhook>/deliveries`. */
export interface DeliveryAttempt {
  readonly key: string;
  readonly webhookKey: string;
  /** The event's key; `null` for a test delivery. */
  readonly eventKey: string | null;
  /** The `webhook-id` header sent. */
  readonly messageId: string;
  readonly attempt: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly attemptedOn: string;
  readonly nextAttemptOn: string | null;
  /** The last attempt failed and no further one is scheduled: kept for replay and redelivery. */
  readonly deadLettered: boolean;
}

/** Keeps an attempt record until `ttl` (epoch seconds). */
export async function putAttempt(db: Db, a: DeliveryAttempt, ttl: number): Promise<void> {
  await send(
    db,
    new PutCommand({
      TableName: db.tableName,
      Item: {
        PK: webhookAttemptPk(a.webhookKey),
        SK: a.key,
        Key: a.key,
        EventKey: a.eventKey,
        MessageId: a.messageId,
        Attempt: a.attempt,
        StatusCode: a.statusCode,
        Error: a.error,
        DurationMs: a.durationMs,
        AttemptedOn: a.attemptedOn,
        NextAttemptOn: a.nextAttemptOn,
        DeadLettered: a.deadLettered,
        ttl,
      },
    }),
  );
}

function toAttempt(webhookKey: string, i: Record<string, unknown>): DeliveryAttempt {
  return {
    key: i.Key as string,
    webhookKey,
    eventKey: (i.EventKey as string | null | undefined) ?? null,
    messageId: i.MessageId as string,
    attempt: Number(i.Attempt ?? 1),
    statusCode: typeof i.StatusCode === 'number' ? i.StatusCode : null,
    error: (i.Error as string | null | undefined) ?? null,
    durationMs: Number(i.DurationMs ?? 0),
    attemptedOn: i.AttemptedOn as string,
    nextAttemptOn: (i.NextAttemptOn as string | null | undefined) ?? null,
    deadLettered: i.DeadLettered === true,
  };
}

/** One attempt record, or undefined (expired ones too). */
export async function getAttempt(db: Db, webhookKey: string, key: string, nowEpoch: number): Promise<DeliveryAttempt | undefined> {
  const out = await send<{ Item?: Record<string, unknown> }>(
    db,
    new GetCommand({ TableName: db.tableName, Key: { PK: webhookAttemptPk(webhookKey), SK: key } }),
  );
  const i = out.Item;
  if (!i || (typeof i.ttl === 'number' && i.ttl <= nowEpoch)) return undefined;
  return toAttempt(webhookKey, i);
}

/**
 * The attempts of a subscription, newest first: the first `limit` after skipping `skip`. One Query
 * reading at most `skip + limit` items (pages are bounded by the caller).
 */
export async function listAttempts(db: Db, webhookKey: string, skip: number, limit: number, nowEpoch: number): Promise<DeliveryAttempt[]> {
  const items = await queryAll(
    db,
    {
      KeyConditionExpression: 'PK = :pk',
      FilterExpression: 'attribute_not_exists(#ttl) OR #ttl > :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':pk': webhookAttemptPk(webhookKey), ':now': nowEpoch },
      ScanIndexForward: false,
    },
    { limit: skip + limit },
  );
  return items.slice(skip, skip + limit).map((i) => toAttempt(webhookKey, i));
}

/** A job of the local runtime's queue, as listed (the body is read when the job starts). */
export interface QueuedJobRef {
  /** The item's sort key (local/storage/webhook-queue-table.ts reads and deletes a job by it). */
  readonly id: string;
  readonly webhookKey: string;
  /** The subscription's instance (the runner's fairness unit); absent on jobs an earlier version queued. */
  readonly instanceKey?: string;
}

/** A job as {@link putQueuedJobs} stored it. */
export interface StoredJob extends QueuedJobRef {
  /** Epoch ms from which it is due. */
  readonly dueAt: number;
  /** The job's JSON. */
  readonly body: string;
}

/**
 * Puts jobs on the local queue, each due at its `dueAt` (epoch ms): BatchWriteItem, 25 a request.
 * Here, not in local/, because the same functions queue jobs locally (shared/live/webhooks/queue.ts
 * `tableQueue`); the runner's reads and deletes are local/storage/webhook-queue-table.ts.
 */
export async function putQueuedJobs(
  db: Db,
  jobs: ReadonlyArray<{ jobId: string; webhookKey: string; instanceKey: string; dueAt: number; body: string }>,
  ttl: number,
): Promise<StoredJob[]> {
  const stored = jobs.map((j) => ({ id: webhookQueueSk(j.dueAt, j.jobId), webhookKey: j.webhookKey, instanceKey: j.instanceKey, dueAt: j.dueAt, body: j.body }));
  await batchWriteItems(
    db,
    stored.map((j) => ({ PutRequest: { Item: { PK: WEBHOOK_QUEUE_PK, SK: j.id, WebhookKey: j.webhookKey, InstanceKey: j.instanceKey, Job: j.body, ttl } } })),
    { what: 'webhook queue writes' },
  );
  return stored;
}

/**
 * Claims a subscription's replay slot for `intervalMs` from `nowMs`: one conditional PutItem,
 * which succeeds only when no claim of the subscription holds at `nowMs` (two replays at once
 * cannot both win). Returns undefined when claimed, else the epoch ms at which the slot frees.
 */
export async function claimReplaySlot(db: Db, webhookKey: string, nowMs: number, intervalMs: number): Promise<number | undefined> {
  const until = nowMs + intervalMs;
  try {
    await send(
      db,
      new PutCommand({
        TableName: db.tableName,
        Item: { PK: webhookReplayPk(webhookKey), SK: WEBHOOK_REPLAY_SK, Until: until, ttl: Math.ceil(until / 1000) + 60 },
        ConditionExpression: 'attribute_not_exists(PK) OR #until <= :now',
        ExpressionAttributeNames: { '#until': 'Until' },
        ExpressionAttributeValues: { ':now': nowMs },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return undefined;
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    // The old item comes back in the wire form (the document client does not convert errors).
    const held = Number((err as { Item?: { Until?: { N?: string } } }).Item?.Until?.N);
    return Number.isFinite(held) && held > nowMs ? held : until;
  }
}
