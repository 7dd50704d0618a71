/**
 * The local runtime's webhook queue table, as its runner reads it (local/webhook-queue.ts): the
 * due jobs, a job's body, the deletes of handled jobs, and the move of the jobs an earlier version
 * queued in the main table. The functions put jobs on it through shared/db/webhooks-repo.ts
 * (`putQueuedJobs`), which the same code does in AWS with SQS instead; nothing here runs in AWS.
 */
import type { Db } from '#shared/db/client.ts';
import { WEBHOOK_QUEUE_PK, webhookQueueSk } from '#shared/db/item-keys.ts';
import { getItem } from '#shared/db/item-reads.ts';
import { batchWriteItems, queryAll, queryPage } from '#shared/db/requests.ts';
import type { QueuedJobRef } from '#shared/db/webhooks-repo.ts';

const WHAT = 'webhook queue writes';

/**
 * Jobs due at `nowMs` or earlier, oldest first (their ids and subscriptions only): one Query of
 * at most `limit` items, from `start` (the `next` of the page before).
 */
export async function dueJobs(
  db: Db,
  nowMs: number,
  limit: number,
  start?: Record<string, unknown>,
): Promise<{ jobs: QueuedJobRef[]; next: Record<string, unknown> | undefined }> {
  const page = await queryPage(
    db,
    {
      ConsistentRead: true,
      KeyConditionExpression: 'PK = :pk AND SK <= :due',
      ProjectionExpression: 'PK, SK, WebhookKey, InstanceKey',
      ExpressionAttributeValues: { ':pk': WEBHOOK_QUEUE_PK, ':due': webhookQueueSk(nowMs, '~') },
      Limit: limit,
    },
    start,
  );
  return {
    jobs: page.items.map((i) => ({
      id: i.SK as string,
      webhookKey: i.WebhookKey as string,
      ...(typeof i.InstanceKey === 'string' ? { instanceKey: i.InstanceKey } : {}),
    })),
    next: page.next,
  };
}

/** The body of a queued job, or undefined when it is gone (handled meanwhile). One GetItem. */
export async function queuedJobBody(db: Db, id: string): Promise<string | undefined> {
  const item = await getItem(db, WEBHOOK_QUEUE_PK, id, true);
  return typeof item?.Job === 'string' ? item.Job : undefined;
}

/**
 * Moves the jobs an earlier version queued in the main table's `WQ` partition to the queue table
 * (puts there first, then deletes here: a crash in between leaves a job in both, and the sender's
 * receivers de-duplicate on webhook-id). Returns how many moved. Run once at the runtime's start.
 */
export async function moveQueuedJobs(from: Db, to: Db): Promise<number> {
  const items = await queryAll(from, { KeyConditionExpression: 'PK = :pk', ExpressionAttributeValues: { ':pk': WEBHOOK_QUEUE_PK }, ConsistentRead: true });
  if (items.length === 0) return 0;
  await batchWriteItems(to, items.map((Item) => ({ PutRequest: { Item } })), { what: WHAT });
  await batchWriteItems(from, items.map((i) => ({ DeleteRequest: { Key: { PK: i.PK, SK: i.SK } } })), { what: WHAT });
  return items.length;
}

/** Removes jobs that were handled (idempotent): BatchWriteItem, 25 a request. */
export async function deleteQueuedJobs(db: Db, ids: readonly string[]): Promise<void> {
  await batchWriteItems(db, ids.map((id) => ({ DeleteRequest: { Key: { PK: WEBHOOK_QUEUE_PK, SK: id } } })), { what: WHAT });
}
