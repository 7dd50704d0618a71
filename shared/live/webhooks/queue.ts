/**
 * The delivery queue: one job per (event, subscription) delivery attempt. In AWS a job is an SQS
 * message (`sqs-queue.ts`); on the local runtime it is an item of the queue table beside the main
 * one (`queueTableOf`), which the runtime's runner reads (`local/webhook-queue.ts`). Either way the same sender
 * (`sender.ts`) handles each job, and a failed attempt puts the next one back on the queue.
 */
import { queueDbOf, type Db } from '../../db/client.ts';
import { putQueuedJobs, type StoredJob } from '../../db/webhooks-repo.ts';
import { newKey } from '../../model/placement.ts';

/** One delivery attempt to make. */
export interface DeliveryJob {
  readonly webhookKey: string;
  /** The instance holding the subscription (its item's partition). */
  readonly instanceKey: string;
  /** The event delivered; `null` for a test delivery. */
  readonly eventKey: string | null;
  /** The `webhook-id`: the same on every attempt, redelivery and replay of the event. */
  readonly messageId: string;
  /** `event`, or `webhook.test`. */
  readonly type: string;
  /** The body's `timestamp` (ISO). */
  readonly timestamp: string;
  /** The body's `data`: the EventMessageData as the API returns it. */
  readonly data: Readonly<Record<string, unknown>>;
  /**
   * The subscription's version the job was matched with (its ConcurrencyVersion). The sender
   * delivers with that version or a later one, never an earlier copy it kept (a `PUT`'s new URL
   * applies to every event published after its answer); absent on jobs an earlier version queued.
   */
  readonly webhookVersion?: number;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Epoch ms before which the attempt must not be made. */
  readonly notBefore: number;
}

export interface WebhookQueue {
  /** Queues jobs; resolves once every one is stored (throws if any could not be). */
  send(jobs: readonly DeliveryJob[]): Promise<void>;
  /** The largest job (JSON bytes) the queue carries; undefined: no limit below the event's own. */
  readonly maxJobBytes?: number;
}

/** Days a queued job is kept at most (the schedule spans about three). */
const JOB_TTL_SECONDS = 14 * 86_400;

const queuedListeners = new Set<(tableName: string, jobs: readonly StoredJob[]) => void>();

/**
 * Calls `listener` with the jobs put on a table's queue in this process (and the table's name),
 * once they are stored: the local runtime's runner (same process) starts those of its table when
 * due without reading them back. Returns the function that stops listening.
 */
export function onTableJobsQueued(listener: (tableName: string, jobs: readonly StoredJob[]) => void): () => void {
  queuedListeners.add(listener);
  return () => queuedListeners.delete(listener);
}

/**
 * The local runtime's queue: items of the queue table beside `db`'s (see `queueTableOf`), handed
 * to the runtime's runner as well. The runtime creates the table at start (`ensureQueueTable`):
 * creating it here would put the table-management commands in the fan-out's and the webhooks
 * function's bundles, which never use this queue in AWS.
 */
export function tableQueue(db: Db): WebhookQueue {
  const queueDb = queueDbOf(db);
  return {
    async send(jobs) {
      if (jobs.length === 0) return;
      const ttl = Math.floor(Date.now() / 1000) + JOB_TTL_SECONDS;
      const stored = await putQueuedJobs(
        queueDb,
        jobs.map((j) => ({ jobId: newKey(), webhookKey: j.webhookKey, instanceKey: j.instanceKey, dueAt: j.notBefore, body: JSON.stringify(j) })),
        ttl,
      );
      for (const l of queuedListeners) l(queueDb.tableName, stored);
    },
  };
}

/** Parses a job from a queue message; undefined when it is not one. */
export function parseJob(body: string): DeliveryJob | undefined {
  try {
    const j = JSON.parse(body) as Partial<DeliveryJob>;
    if (typeof j.webhookKey !== 'string' || typeof j.instanceKey !== 'string' || typeof j.messageId !== 'string') return undefined;
    if (typeof j.attempt !== 'number' || typeof j.notBefore !== 'number' || !j.data || typeof j.data !== 'object') return undefined;
    return j as DeliveryJob;
  } catch {
    return undefined;
  }
}
