/**
 * The local stand-in for the webhook SQS queue and its event source mapping: the jobs queued in
 * this process (by the fan-out and the `webhooks` family) are handed to the runner as they are
 * stored, and a timer reads the due jobs of the queue table (`queueTableOf`: those of a previous run,
 * or of another process); each is invoked on the `webhooks` family as an SQS-shaped event, one job
 * per invocation, many at once. A job is deleted once the handler has
 * handled it (the sender has queued any next attempt by then); a job reported failed stays and is
 * tried again after a backoff. Jobs live in the table, so pending attempts survive a restart, and
 * a job in flight when the process dies is simply made again (at least once).
 *
 * Fairness between instances (docs/architecture.md, "Webhook fairness"): an instance has at most
 * {@link PER_INSTANCE} jobs in flight and a subscription {@link PER_WEBHOOK}; each free slot goes
 * to the instance with the fewest jobs in flight (then, within it, to the subscription with the
 * fewest), and an instance with fewer than {@link INSTANCE_FLOOR} in flight starts its next job
 * even when all {@link MAX_IN_FLIGHT} shared slots are taken. So dead receivers (each attempt held
 * up to 10 s) and a backlog of thousands of jobs of one instance never make another instance's
 * delivery wait for them. The due jobs are read as ids (a small projection), a bounded number per
 * instance kept, a long backlog read in slices (each read goes on where the last stopped), and the
 * body of a job not queued in this process read when it starts.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Db } from '#shared/db/client.ts';
import type { QueuedJobRef } from '#shared/db/webhooks-repo.ts';
import { deleteQueuedJobs, dueJobs, queuedJobBody } from './storage/webhook-queue-table.ts';
import { onTableJobsQueued } from '#shared/live/webhooks/queue.ts';

/**
 * Jobs of one subscription in flight at once: a dead receiver of an instance leaves the
 * instance's other subscriptions the rest of its share. Measured (`npm run bench -- --only
 * webhooks`, one busy subscription, 10 clients publishing): 16 capped its deliveries below the
 * publish rate of this 2-core machine (p50 1.3-2.4 s publish to delivery), 32 gave p50 0.6-0.8 s,
 * and 64 of 128 slots 1.1-1.3 s (each attempt waits longer for the CPU than it saves).
 */
const PER_WEBHOOK = 32;
/** Jobs of one instance in flight at once: what is left of the shared slots goes to the others. */
export const PER_INSTANCE = 40;
/** Jobs in flight at once, shared by the instances. */
const MAX_IN_FLIGHT = 64;
/**
 * Jobs an instance may have in flight beyond the shared slots: with fewer than this in flight,
 * its next due job starts at once, whatever the other instances hold.
 */
const INSTANCE_FLOOR = 4;
/** Jobs read from the table kept waiting per instance (the rest stay in the table for a later read). */
const READ_PER_INSTANCE = 1000;
/** Due jobs read per Query, and Queries per read at most. */
const PAGE_SIZE = 1000;
const PAGES_PER_READ = 10;
/** Reads at most this often while jobs wait that the last read could not bring. */
const MIN_READ_GAP_MS = 20;
/** The shortest wait between two rounds of the timer. */
const MIN_WAIT_MS = 1;
/** Handled jobs deleted together (BatchWriteItem's limit). */
const DELETE_BATCH = 25;
/** A job handled this recently is not started again from a read that began before it was deleted. */
const DONE_MEMORY_MS = 60_000;

export interface WebhookQueueOptions {
  readonly db: Db;
  /** Invokes the webhooks handler with one queue event. */
  readonly invoke: (event: SQSEvent) => Promise<unknown>;
  readonly logger: Logger;
  /**
   * How often the table is read for due jobs: those of a previous run, of another process, and
   * retries. Jobs queued in this process start without a read. @default 1000
   */
  readonly idleMs?: number;
}

export interface WebhookQueueRunner {
  /** Stops reading; waits a moment for jobs in flight (those not done stay queued). */
  stop(): Promise<void>;
}

function sqsRecord(id: string, body: string): SQSRecord {
  const now = String(Date.now());
  return {
    messageId: id,
    receiptHandle: id,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: now,
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: now,
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:local:000000000000:gatehouse-webhooks',
    awsRegion: 'local',
  };
}

export function startWebhookQueue(opts: WebhookQueueOptions): WebhookQueueRunner {
  const idleMs = opts.idleMs ?? 1000;
  const inFlight = new Map<string, Promise<void>>();
  const perWebhook = new Map<string, number>();
  const perInstance = new Map<string, number>();
  /** Job id → epoch ms before which a failed job is not tried again, and its failures so far. */
  const backoff = new Map<string, { until: number; failures: number }>();
  /** Job id → when it was handled and deleted. */
  const done = new Map<string, number>();
  /** The bodies of the jobs queued in this process and not handled yet: no GetItem to start them. */
  const bodies = new Map<string, string>();
  /** Handled jobs not deleted yet (deleted 25 per request by {@link flush}). */
  let handled: string[] = [];
  /** The delete of handled jobs in progress (one at a time, never waited for by a start). */
  let flushing: Promise<void> | undefined;
  /** Deletes the handled jobs in the background, unless a delete is already running. */
  const flushSoon = (): void => {
    if (flushing || handled.length === 0) return;
    flushing = flush().finally(() => (flushing = undefined));
  };
  /** Handled jobs whose delete failed: kept out of the buffer until a later flush deletes them. */
  async function flush(): Promise<void> {
    if (handled.length === 0) return;
    const ids = handled;
    handled = [];
    try {
      await deleteQueuedJobs(opts.db, ids);
    } catch (err) {
      handled.push(...ids);
      opts.logger.warn('webhook queue: deleting handled jobs failed; retried', { error: (err as Error).message });
    }
  }
  /** Jobs known and not started yet, by id: from the last read and from this process's queueing. */
  let buffer = new Map<string, Waiting>();
  let lastRead = 0;
  /** The last read stopped at its page limit: more jobs are due than it brought. */
  let truncated = false;
  /** Where the next read goes on (after the last one's page limit); undefined: from the oldest. */
  let cursor: Record<string, unknown> | undefined;
  let stopped = false;
  let wake: (() => void) | undefined;
  // Jobs queued in this process (the fan-out, a retry, a redelivery) start from here when due.
  const stopListening = onTableJobsQueued((tableName, jobs) => {
    if (tableName !== opts.db.tableName) return;
    for (const j of jobs) {
      bodies.set(j.id, j.body);
      if (!buffer.has(j.id)) buffer.set(j.id, { id: j.id, webhookKey: j.webhookKey, instanceKey: j.instanceKey, dueAt: j.dueAt });
    }
    pump();
    wake?.();
  });

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });

  async function run(job: QueuedJobRef): Promise<void> {
    let ok = false;
    try {
      const body = bodies.get(job.id) ?? (await queuedJobBody(opts.db, job.id));
      // Gone: another round handled it.
      if (body === undefined) return void done.set(job.id, Date.now());
      const res = (await opts.invoke({ Records: [sqsRecord(job.id, body)] })) as Partial<SQSBatchResponse> | undefined;
      ok = (res?.batchItemFailures ?? []).length === 0;
      if (ok) {
        // Handled: never started again here; deleted with the next batch of handled jobs.
        done.set(job.id, Date.now());
        bodies.delete(job.id);
        handled.push(job.id);
        if (handled.length >= DELETE_BATCH) flushSoon();
      }
    } catch (err) {
      opts.logger.error('webhook queue: a job failed; it stays queued', { error: (err as Error).message });
    }
    if (ok) {
      backoff.delete(job.id);
    } else if (!done.has(job.id)) {
      const failures = (backoff.get(job.id)?.failures ?? 0) + 1;
      backoff.set(job.id, { until: Date.now() + Math.min(60_000, 500 * 2 ** failures), failures });
      // It waits in the buffer for its backoff (a read would bring it back as well).
      buffer.set(job.id, { id: job.id, webhookKey: job.webhookKey, instanceKey: job.instanceKey, dueAt: 0 });
    }
  }

  const add = (counts: Map<string, number>, key: string, by: number) => {
    const n = (counts.get(key) ?? 0) + by;
    if (n <= 0) counts.delete(key);
    else counts.set(key, n);
  };

  function start(job: QueuedJobRef): void {
    add(perWebhook, job.webhookKey, 1);
    add(perInstance, instanceOf(job), 1);
    const p = run(job).finally(() => {
      inFlight.delete(job.id);
      add(perWebhook, job.webhookKey, -1);
      add(perInstance, instanceOf(job), -1);
      // A free slot: start a waiting job now (the timer only waits for jobs due later).
      pump();
      wake?.();
    });
    inFlight.set(job.id, p);
  }

  /** When the job may start: its due time, or the end of its backoff after a failure. */
  const readyAt = (job: Waiting) => Math.max(job.dueAt, backoff.get(job.id)?.until ?? 0);
  /** Whether the job's instance and subscription are below their limits (the subscription's own first). */
  const underLimits = (job: Waiting) =>
    (perWebhook.get(job.webhookKey) ?? 0) < PER_WEBHOOK && (perInstance.get(instanceOf(job)) ?? 0) < PER_INSTANCE;
  /** Whether a slot is free for the instance: a shared one, or one of its floor. */
  const slotFor = (instance: string) => inFlight.size < MAX_IN_FLIGHT || (perInstance.get(instance) ?? 0) < INSTANCE_FLOOR;
  const startable = (job: Waiting, now: number) =>
    !inFlight.has(job.id) && !done.has(job.id) && readyAt(job) <= now && underLimits(job) && slotFor(instanceOf(job));

  /**
   * Starts what the buffer holds, as slots allow: each slot to the instance with the fewest jobs
   * in flight, within it to the subscription with the fewest, and a subscription's jobs in the
   * order they were learnt (a read brings the due jobs oldest first; this process queues them in
   * the order they come). One pass over the buffer, then the dealing over the few jobs that can
   * start (a subscription's list holds at most what it may start).
   */
  function startFromBuffer(now: number): void {
    const ready = new Map<string, Map<string, Waiting[]>>();
    for (const job of buffer.values()) {
      if (inFlight.has(job.id) || done.has(job.id)) {
        buffer.delete(job.id);
        continue;
      }
      if (readyAt(job) > now || !underLimits(job)) continue;
      const instance = instanceOf(job);
      let subs = ready.get(instance);
      if (!subs) ready.set(instance, (subs = new Map()));
      let list = subs.get(job.webhookKey);
      if (!list) subs.set(job.webhookKey, (list = []));
      if (list.length < PER_WEBHOOK) list.push(job);
    }
    for (;;) {
      const instance = fewest(ready, perInstance);
      // None left, or no free slot for the least served (nor, then, for any other).
      if (instance === undefined || !slotFor(instance)) return;
      const subs = ready.get(instance)!;
      const webhook = fewest(subs, perWebhook);
      const job = webhook === undefined ? undefined : subs.get(webhook)!.shift();
      if (!job || !underLimits(job)) {
        // This subscription, or the instance, is at its limit now: drop it from the dealing.
        if (webhook === undefined || (perInstance.get(instance) ?? 0) >= PER_INSTANCE) ready.delete(instance);
        else subs.delete(webhook);
        continue;
      }
      if (subs.get(webhook!)!.length === 0) subs.delete(webhook!);
      if (subs.size === 0) ready.delete(instance);
      buffer.delete(job.id);
      start(job);
    }
  }

  /** Starts the waiting jobs that are ready, as slots allow (not once stopping). */
  function pump(): void {
    if (!stopped) startFromBuffer(Date.now());
  }

  async function read(now: number): Promise<void> {
    const jobs: QueuedJobRef[] = [];
    const fromOldest = cursor === undefined;
    let next = cursor;
    for (let page = 0; page < PAGES_PER_READ; page++) {
      const due = await dueJobs(opts.db, now, PAGE_SIZE, next);
      jobs.push(...due.jobs);
      next = due.next;
      if (!next) break;
    }
    truncated = next !== undefined;
    cursor = next;
    // What the table holds that is due (at most READ_PER_INSTANCE an instance), plus what this
    // process queued and has not handled (due later, or stored after the read began). A read that
    // goes on after an earlier one keeps what that one brought; one from the oldest replaces it
    // (a job no longer there was handled elsewhere).
    const known = new Map<string, Waiting>();
    const kept = new Map<string, number>();
    const keep = (j: Waiting) => {
      const n = kept.get(instanceOf(j)) ?? 0;
      if (n >= READ_PER_INSTANCE) return;
      kept.set(instanceOf(j), n + 1);
      known.set(j.id, j);
    };
    if (!fromOldest) for (const j of buffer.values()) if (!bodies.has(j.id) && j.dueAt <= now) keep(j);
    for (const j of jobs) if (!known.has(j.id)) keep(buffer.get(j.id) ?? { ...j, dueAt: 0 });
    for (const [id, j] of buffer) if (!known.has(id) && (j.dueAt > now || bodies.has(id))) known.set(id, j);
    buffer = known;
    lastRead = now;
    const pendingDelete = new Set(handled);
    for (const [id, at] of done) if (now - at > DONE_MEMORY_MS && !pendingDelete.has(id)) done.delete(id);
  }

  /**
   * Milliseconds until the next waiting job becomes ready, or the next read (the timer's wait at
   * most). Called right after {@link pump}: a job ready now is waiting for a slot, and the job that
   * frees it starts it, so only jobs ready later count (counting those would spin the timer).
   */
  function untilNextReady(now: number): number {
    let soonest = lastRead + idleMs;
    for (const job of buffer.values()) {
      const at = readyAt(job);
      if (at > now && at < soonest) soonest = at;
    }
    return soonest - now;
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        const now = Date.now();
        // Read when the timer is due, or sooner when the last read could not bring every due job
        // and nothing known can start. Jobs queued in this process need no read.
        let canStart = false;
        for (const j of buffer.values()) if ((canStart = startable(j, now))) break;
        const due = now - lastRead >= idleMs || (truncated && !canStart && inFlight.size < MAX_IN_FLIGHT && now - lastRead >= MIN_READ_GAP_MS);
        flushSoon();
        if (due) await read(now);
        pump();
      } catch (err) {
        opts.logger.warn('webhook queue: reading due jobs failed', { error: (err as Error).message });
      }
      if (!stopped) {
        const now = Date.now();
        pump();
        await sleep(Math.max(MIN_WAIT_MS, untilNextReady(now)));
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      stopListening();
      wake?.();
      await loop;
      // Jobs in flight finish or stay queued for the next start (at least once).
      await Promise.race([Promise.allSettled([...inFlight.values()]), new Promise((r) => setTimeout(r, 2000).unref())]);
      await flushing;
      await flush();
    },
  };
}

/** The instance a job counts for (a job an earlier version queued counts as its subscription's own). */
const instanceOf = (job: QueuedJobRef): string => job.instanceKey ?? `webhook:${job.webhookKey}`;

/** The key of `groups` whose count is the smallest (the first learnt among equals). */
function fewest(groups: ReadonlyMap<string, unknown>, counts: ReadonlyMap<string, number>): string | undefined {
  let best: string | undefined;
  let least = Infinity;
  for (const key of groups.keys()) {
    const n = counts.get(key) ?? 0;
    if (n < least) [best, least] = [key, n];
  }
  return best;
}

/** A known job not started yet. */
interface Waiting extends QueuedJobRef {
  /** Epoch ms from which it is due (0: due when read). */
  readonly dueAt: number;
}
