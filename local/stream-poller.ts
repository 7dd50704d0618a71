/**
 * The local stand-in for the Lambda event source mapping: reads the table's DynamoDB stream and
 * invokes the `fanout` family with `DynamoDBStreamEvent` batches.
 *
 * - With a {@link StreamCheckpointStore} (the runtime's, in its data directory), where each shard
 *   was left is saved once its batch was delivered, and a start goes on after it: what a crash
 *   (SIGKILL, a power cut) left unread or undelivered is delivered after the restart, at least
 *   once. A shard the checkpoint does not know (it appeared since) is read from TRIM_HORIZON, after
 *   its parent; a saved position the stream no longer holds (trimmed) from TRIM_HORIZON as well.
 * - Without a checkpoint (the first start on a data directory, or no store), shards open at
 *   start are read from LATEST (what happened before has no listener); shards that appear later
 *   (splits, rollover) from TRIM_HORIZON, after their parent.
 * - A batch whose handler throws or reports `batchItemFailures` is retried from the first failed
 *   record with backoff, a bounded number of times; then what is left of it goes to
 *   `onFailedBatch` (the mapping's on-failure destination) and the shard reads on.
 * - A shard that had no records waits `idleMs` before its next read, unless {@link StreamPoller.wake}
 *   is called: the runtime, which runs the writers in the same process, wakes the poller when a
 *   write completes, so a new record is read at once (a wake whose read finds nothing reads again
 *   after 10, 20, 40 ms... then every second for 30 s, never waiting longer than the idle
 *   interval: the record can reach the stream a little after the write is answered, later on a
 *   busy machine) and the idle wait only bounds how late a write nobody announced (a script on the
 *   same table) is seen.
 * - While a batch is delivered, the shard's next page is already being read (batches are still
 *   delivered one at a time and in order), so a busy stream does not wait for a read per batch.
 * - {@link StreamPoller.drain} (the runtime's stop, once no request runs) reads every open shard
 *   to its end and delivers what it finds before the poller stops, so a clean stop leaves nothing
 *   for the next start to deliver late.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { StreamPositionLost, type RecordPage, type ShardPosition, type StreamReader, type StreamShard } from './storage/stream-reader.ts';

/** A batch given up on: the records from the first failed one, and why. */
export interface FailedBatch {
  /** `RetryAttemptsExhausted`, as in AWS's on-failure records, or `PollerStopped` mid-retry. */
  readonly condition: 'RetryAttemptsExhausted' | 'PollerStopped';
  readonly streamArn: string;
  readonly shardId: string;
  /** Invocations made for the batch. */
  readonly attempts: number;
  /** The last invocation's outcome: an error's name, or how many records it reported failed. */
  readonly lastError: string;
  readonly records: readonly DynamoDBRecord[];
}

/**
 * Where the poller left each shard: the sequence number of the last record of a delivered batch,
 * `null` for a shard read from LATEST that had no record yet, `done` for a closed shard read to
 * its end.
 */
export interface StreamCheckpoint {
  readonly streamArn: string;
  readonly shards: Readonly<Record<string, string | null>>;
  /** Set by a store whose saved checkpoint could not be read: every shard is read from its start. */
  readonly unreadable?: boolean;
}

/** Keeps the {@link StreamCheckpoint} across restarts (and crashes). */
export interface StreamCheckpointStore {
  /** The last saved checkpoint, or undefined when none was ever saved. */
  load(): Promise<StreamCheckpoint | undefined>;
  /** Replaces the saved checkpoint; a crash while saving must leave the previous one. */
  save(checkpoint: StreamCheckpoint): Promise<void>;
}

/** The checkpoint's mark of a closed shard read to its end. */
const SHARD_DONE = 'done';

/**
 * Where a start began reading: after a saved `checkpoint`, at the stream's end (`latest`: no
 * checkpoint, or one of another stream), or at its start (`oldest`: the checkpoint was unreadable).
 */
type StreamStart = 'checkpoint' | 'latest' | 'oldest';

export interface StreamPollerOptions {
  readonly reader: StreamReader;
  /** Invokes the fan-out handler with one batch. */
  readonly invoke: (event: DynamoDBStreamEvent) => Promise<unknown>;
  readonly logger: Logger;
  /** Wait between polls of a shard that had no records. @default 200 */
  readonly idleMs?: number;
  /** Records per batch (the mapping's BatchSize). @default 100 */
  readonly batchSize?: number;
  /** Attempts per batch before it is skipped. @default 4 */
  readonly maxAttempts?: number;
  /** First retry delay, doubled on each retry. @default 200 */
  readonly backoffMs?: number;
  /** How often new shards are looked for. @default 5000 */
  readonly shardRefreshMs?: number;
  /**
   * Receives each batch given up on (awaited before the shard reads on; its errors are logged).
   * @default - the batch is only logged
   */
  readonly onFailedBatch?: (failure: FailedBatch) => Promise<void> | void;
  /** Sees every read that returned records and every delivered batch, with their timings. */
  readonly observer?: StreamPollObserver;
  /** Keeps where each shard was left, for the next start. @default - every start reads from LATEST */
  readonly checkpoint?: StreamCheckpointStore;
}

/**
 * Why a shard was read: `start` (its first read), `more` (the previous read returned records),
 * `wake` ({@link StreamPoller.wake} was called since the previous read began) or `idle` (the idle
 * wait ran out).
 */
export type ReadTrigger = 'start' | 'more' | 'wake' | 'idle';

/**
 * Waits before the further reads of a wake that found no record: the write's record may reach the
 * stream a little after the write was answered, seconds later when the machine is busy. The last
 * wait repeats until {@link WAKE_FOLLOW_UP_WINDOW_MS} has passed since the wake, then the idle
 * interval applies; no wait is longer than the idle interval itself.
 */
const WAKE_FOLLOW_UPS_MS = [10, 20, 40, 80, 160, 320, 640, 1000] as const;
/** How long after a wake that found nothing the poller keeps looking (see above). */
const WAKE_FOLLOW_UP_WINDOW_MS = 30_000;
/**
 * While draining, a shard is done at its first read that finds nothing and began this long after
 * the drain did: a write answered just before the drain can reach the stream a little later.
 */
const DRAIN_QUIET_MS = 1000;
/** The wait between two reads of a shard while draining. */
const DRAIN_POLL_MS = 50;

/** One GetRecords call that returned records. Times are `performance.now()` milliseconds. */
interface StreamRead {
  readonly shardId: string;
  readonly trigger: ReadTrigger;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly records: readonly DynamoDBRecord[];
}

/** One batch handed to the fan-out, from the first invocation to the last attempt's end. */
interface StreamDelivery {
  readonly shardId: string;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly attempts: number;
  readonly records: readonly DynamoDBRecord[];
}

export interface StreamPollObserver {
  read?(read: StreamRead): void;
  delivered?(delivery: StreamDelivery): void;
}

/** What the poller has done since it started. */
export interface StreamPollerStats {
  /** GetRecords calls that answered, by what triggered them (a read after a batch is `more`). */
  readonly reads: Readonly<Record<ReadTrigger, number>>;
  /** Reads that returned records, by trigger. */
  readonly readsWithRecords: Readonly<Record<ReadTrigger, number>>;
  /** Calls of {@link StreamPoller.wake}. */
  readonly wakes: number;
  /** Where this start began reading (see {@link StreamStart}). */
  readonly start: StreamStart;
}

/** A GetRecords call's page with what started it. */
interface Read {
  readonly page: RecordPage;
  readonly trigger: ReadTrigger;
  /** The wake generation when the read began. */
  readonly generation: number;
  readonly startedAt: number;
  readonly endedAt: number;
}

export interface StreamPoller {
  /**
   * Something was written: read every open shard now instead of after its idle wait (a shard
   * being read or delivered reads again as soon as it is done). Cheap; call it after each write.
   */
  wake(): void;
  stats(): StreamPollerStats;
  /**
   * Reads every open shard until a read finds nothing after the writes so far (see
   * {@link DRAIN_QUIET_MS}), delivering what it reads (failed batches are retried as usual), or
   * until `timeoutMs` has passed. Resolves true when every shard was drained; call
   * {@link StreamPoller.stop} after it.
   */
  drain(timeoutMs: number): Promise<boolean>;
  /** Resolves when every shard reader has stopped. */
  stop(): Promise<void>;
}

export async function startStreamPoller(opts: StreamPollerOptions): Promise<StreamPoller> {
  const { reader, logger } = opts;
  const idleMs = opts.idleMs ?? 200;
  const batchSize = opts.batchSize ?? 100;
  const maxAttempts = opts.maxAttempts ?? 4;
  const backoffMs = opts.backoffMs ?? 200;
  const shardRefreshMs = opts.shardRefreshMs ?? 5000;

  const streamArn = await reader.latestStreamArn();
  if (!streamArn) throw new Error('The table has no stream: live events cannot be delivered');

  const stopping = new AbortController();
  const readers = new Map<string, Promise<void>>();
  let refreshWanted: (() => void) | undefined;
  const observer = opts.observer;
  const zero = (): Record<ReadTrigger, number> => ({ start: 0, more: 0, wake: 0, idle: 0 });
  const reads = zero();
  const readsWithRecords = zero();
  let wakes = 0;
  /** Bumped by wake(): a reader that saw another value when its read began reads again at once. */
  let wakeGeneration = 0;
  /** Ends the idle waits in progress (each reader waiting adds its own). */
  const wakeWaiters = new Set<() => void>();
  /** Set by drain(): a read that began after this (`performance.now()`) and found nothing ends its shard. */
  let drainQuietFrom: number | undefined;
  /** The checkpoint being kept: shard id → last delivered sequence number, `null` or {@link SHARD_DONE}. */
  const positions = new Map<string, string | null>();
  /** A save is in progress, and whether positions moved since it began. */
  let saving: Promise<void> | undefined;
  let unsaved = false;
  /** Saves the positions, one save at a time; a position noted during a save is saved after it. */
  const checkpoint = (): Promise<void> | undefined => {
    const store = opts.checkpoint;
    if (!store) return undefined;
    unsaved = true;
    return (saving ??= (async () => {
      while (unsaved) {
        unsaved = false;
        try {
          await store.save({ streamArn: streamArn!, shards: Object.fromEntries(positions) });
        } catch (err) {
          // Saved with the next delivered batch; a restart meanwhile delivers some records again.
          unsaved = true;
          logger.warn('saving the stream checkpoint failed', { error: (err as Error).message });
          break;
        }
      }
      saving = undefined;
    })());
  };
  const advance = (shardId: string, position: string): void => {
    positions.set(shardId, position);
    void checkpoint();
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopping.signal.aborted) return resolve();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        stopping.signal.removeEventListener('abort', done);
        resolve();
      }
      stopping.signal.addEventListener('abort', done, { once: true });
    });

  /** Calls the observer; what it throws is logged, never taken for a failed read. */
  const observe = (call: () => void): void => {
    try {
      call();
    } catch (err) {
      logger.debug('the stream observer failed', { error: (err as Error).message });
    }
  };

  /** The idle wait of a shard: ends early on wake() (or stop); true when woken. */
  const idle = (ms: number): Promise<boolean> =>
    new Promise<boolean>((resolve) => {
      if (stopping.signal.aborted) return resolve(false);
      const t = setTimeout(() => done(false), ms);
      const woken = () => done(true);
      function done(wasWoken: boolean) {
        clearTimeout(t);
        wakeWaiters.delete(woken);
        stopping.signal.removeEventListener('abort', aborted);
        resolve(wasWoken);
      }
      const aborted = () => done(false);
      wakeWaiters.add(woken);
      stopping.signal.addEventListener('abort', aborted, { once: true });
    });

  /** Delivers one batch, retrying failed records; never throws. */
  async function deliver(shardId: string, records: DynamoDBRecord[]): Promise<void> {
    const startedAt = performance.now();
    const delivered = (attempts: number) => observe(() => observer?.delivered?.({ shardId, startedAt, endedAt: performance.now(), attempts, records }));
    let batch = records;
    for (let attempt = 1; ; attempt++) {
      let failedFrom = 0;
      let lastError: string;
      try {
        const result = (await opts.invoke({ Records: batch })) as Partial<DynamoDBBatchResponse> | undefined;
        const failures = result?.batchItemFailures ?? [];
        if (failures.length === 0) return delivered(attempt);
        // As the event source mapping does: resume at the lowest failed sequence number; an
        // unknown identifier fails the whole batch.
        const ids = new Set(failures.map((f) => f.itemIdentifier));
        const first = batch.findIndex((r) => ids.has(r.dynamodb?.SequenceNumber ?? ''));
        failedFrom = first >= 0 && failures.every((f) => batch.some((r) => r.dynamodb?.SequenceNumber === f.itemIdentifier)) ? first : 0;
        lastError = `${failures.length} batchItemFailures`;
        logger.warn('fan-out reported failed records', { failed: failures.length, attempt });
      } catch (err) {
        lastError = err instanceof Error ? err.name : 'Error';
        logger.error('fan-out failed', { attempt, error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
      }
      batch = batch.slice(failedFrom);
      if (attempt < maxAttempts) {
        await sleep(backoffMs * 2 ** (attempt - 1));
        // Stopping ends the wait early: give the batch up rather than try it once more.
        if (!stopping.signal.aborted) continue;
      }
      await giveUp(shardId, batch, attempt, lastError);
      return delivered(attempt);
    }
  }

  /** Logs a batch given up on and hands it to the on-failure destination; never throws. */
  async function giveUp(shardId: string, failed: DynamoDBRecord[], attempts: number, lastError: string): Promise<void> {
    const condition = attempts >= maxAttempts ? 'RetryAttemptsExhausted' : 'PollerStopped';
    logger.error('fan-out batch given up', {
      condition,
      shard: shardId,
      attempts,
      records: failed.length,
      firstSequenceNumber: failed[0]?.dynamodb?.SequenceNumber,
      lastSequenceNumber: failed.at(-1)?.dynamodb?.SequenceNumber,
    });
    try {
      await opts.onFailedBatch?.({ condition, streamArn: streamArn!, shardId, attempts, lastError, records: failed });
    } catch (err) {
      logger.error('recording a failed fan-out batch failed', { shard: shardId, error: (err as Error).message });
    }
  }

  /** A wait between reads: short while draining. */
  const waitFor = (ms: number): number => (drainQuietFrom === undefined ? ms : Math.min(ms, DRAIN_POLL_MS));

  async function readShard(shard: StreamShard, from: ShardPosition, firstIterator?: string): Promise<void> {
    let start = from;
    // Records of a child shard come after its parent's: finish the parent first.
    const parent = shard.parentShardId ? readers.get(shard.parentShardId) : undefined;
    if (parent) await parent;
    let lastSequence: string | undefined;
    const position = (): ShardPosition =>
      lastSequence ? { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: lastSequence } : start;
    let iterator: string | undefined = firstIterator;
    let failures = 0;
    let trigger: ReadTrigger = 'start';
    /** Reads since a wake found nothing (see {@link WAKE_FOLLOW_UPS_MS}), and when the first began. */
    let followUps = 0;
    let followUpsSince = 0;
    /** The read of the next page, started while the current one is delivered. */
    let ahead: Promise<Read> | undefined;
    const read = async (from: string, why: ReadTrigger): Promise<Read> => {
      // A wake() after this point means a write this read may have missed: read again without waiting.
      const generation = wakeGeneration;
      const startedAt = performance.now();
      const page = await reader.records(from, batchSize);
      return { page, trigger: why, generation, startedAt, endedAt: performance.now() };
    };
    while (!stopping.signal.aborted) {
      try {
        let r: Read;
        if (ahead) {
          const next = ahead;
          ahead = undefined;
          r = await next;
        } else {
          try {
            iterator ??= await reader.iterator(streamArn!, shard.shardId, position());
          } catch (err) {
            // The saved position was trimmed from the stream: what is left of the shard is after it.
            if (!(err instanceof StreamPositionLost) || start.type !== 'AFTER_SEQUENCE_NUMBER' || lastSequence !== undefined) throw err;
            logger.warn('the stream checkpoint is no longer in the stream; the shard is read from its oldest record', { shard: shard.shardId });
            start = { type: 'TRIM_HORIZON' };
            continue;
          }
          if (!iterator) break; // the shard is gone (trimmed)
          r = await read(iterator, trigger);
        }
        const { page } = r;
        failures = 0;
        reads[r.trigger]++;
        if (page.records.length > 0) {
          readsWithRecords[r.trigger]++;
          observe(() => observer?.read?.({ shardId: shard.shardId, trigger: r.trigger, startedAt: r.startedAt, endedAt: r.endedAt, records: page.records }));
          // The next page is read while this one is delivered; batches are still delivered one
          // at a time, in order (a failed read is retried from the last delivered record).
          if (page.next) {
            ahead = read(page.next, 'more');
            ahead.catch(() => {});
          }
          await deliver(shard.shardId, page.records);
          lastSequence = page.records[page.records.length - 1]!.dynamodb?.SequenceNumber ?? lastSequence;
          // Delivered (or given up on, in the dead-letter file): a restart goes on after it.
          if (lastSequence) advance(shard.shardId, lastSequence);
        }
        if (!page.next) {
          advance(shard.shardId, SHARD_DONE);
          break; // closed and fully read
        }
        iterator = page.next;
        // Draining: this shard has nothing more once a read begun after the quiet time finds nothing.
        if (drainQuietFrom !== undefined && page.records.length === 0 && r.startedAt >= drainQuietFrom) return;
        if (page.records.length > 0) {
          trigger = 'more';
          followUps = 0;
        } else if (wakeGeneration !== r.generation) {
          trigger = 'wake';
          followUps = 0;
        } else if (r.trigger === 'wake' && (followUps === 0 || performance.now() - followUpsSince < WAKE_FOLLOW_UP_WINDOW_MS)) {
          // DynamoDB Local may answer a write before its record is in the stream (more so on a
          // busy machine): a wake that found nothing looks again shortly before idling.
          if (followUps === 0) followUpsSince = r.startedAt;
          await idle(waitFor(Math.min(WAKE_FOLLOW_UPS_MS[Math.min(followUps++, WAKE_FOLLOW_UPS_MS.length - 1)]!, idleMs)));
          trigger = 'wake';
        } else {
          followUps = 0;
          trigger = (await idle(waitFor(idleMs))) ? 'wake' : 'idle';
        }
      } catch (err) {
        iterator = undefined;
        ahead = undefined;
        if (err instanceof StreamPositionLost) continue;
        failures++;
        if (failures === 1 || failures % 50 === 0) {
          logger.warn('reading the stream failed', { shard: shard.shardId, error: (err as Error).message, failures });
        }
        await sleep(Math.min(5000, backoffMs * 2 ** Math.min(failures, 5)));
      }
    }
    // A closed shard means its children exist now.
    refreshWanted?.();
  }

  function startShard(shard: StreamShard, start: ShardPosition): void {
    readers.set(shard.shardId, readShard(shard, start));
  }

  const saved = await opts.checkpoint?.load();
  const startedFrom: StreamStart = saved?.unreadable ? 'oldest' : saved?.streamArn === streamArn ? 'checkpoint' : 'latest';
  if (saved && !saved.unreadable && startedFrom === 'latest') {
    // The table was made again: its new stream holds nothing delivered before.
    logger.warn('the stream checkpoint is of another stream; reading from the end of the current one', { saved: saved.streamArn });
  }
  const done = (shard: StreamShard) => {
    readers.set(shard.shardId, Promise.resolve());
    positions.set(shard.shardId, SHARD_DONE);
  };
  let resumed = 0;
  for (const shard of await reader.shards(streamArn)) {
    const at = startedFrom === 'checkpoint' ? saved!.shards[shard.shardId] : undefined;
    if (startedFrom === 'oldest' || (startedFrom === 'checkpoint' && at === undefined)) {
      // Unknown to the checkpoint: it appeared since, after its parent was read.
      startShard(shard, { type: 'TRIM_HORIZON' });
    } else if (at === SHARD_DONE) {
      done(shard);
    } else if (typeof at === 'string') {
      resumed++;
      positions.set(shard.shardId, at);
      startShard(shard, { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: at });
    } else if (shard.closed) {
      // Closed before this start read anything of it (or read from LATEST with no record since):
      // what it holds happened before any listener.
      done(shard);
    } else {
      // The iterator is taken now, so that every write after start-up is delivered.
      const latest = { type: 'LATEST' } as const;
      positions.set(shard.shardId, null);
      readers.set(shard.shardId, readShard(shard, latest, await reader.iterator(streamArn, shard.shardId, latest)));
    }
  }
  logger.info('stream poller resumed', { from: startedFrom, shards: readers.size, shardsAfterCheckpoint: resumed });
  // A checkpoint from the first start on: a crash before the first batch still resumes here.
  await checkpoint();

  const refresher = (async () => {
    while (!stopping.signal.aborted) {
      await new Promise<void>((resolve) => {
        refreshWanted = resolve;
        void sleep(shardRefreshMs).then(resolve);
      });
      if (stopping.signal.aborted) break;
      try {
        const listed = await reader.shards(streamArn);
        for (const shard of listed) {
          if (!readers.has(shard.shardId)) startShard(shard, { type: 'TRIM_HORIZON' });
        }
        // Shards trimmed from the stream leave the checkpoint.
        const ids = new Set(listed.map((s) => s.shardId));
        if ([...positions.keys()].some((id) => !ids.has(id))) {
          for (const id of positions.keys()) if (!ids.has(id)) positions.delete(id);
          void checkpoint();
        }
      } catch (err) {
        logger.debug('listing stream shards failed', { error: (err as Error).message });
      }
    }
  })();

  return {
    wake() {
      wakes++;
      wakeGeneration++;
      for (const w of [...wakeWaiters]) w();
    },
    stats: () => ({ reads: { ...reads }, readsWithRecords: { ...readsWithRecords }, wakes, start: startedFrom }),
    async drain(timeoutMs) {
      drainQuietFrom ??= performance.now() + DRAIN_QUIET_MS;
      // Idle waits end now; later ones are short (see waitFor).
      for (const w of [...wakeWaiters]) w();
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        (async () => {
          // A shard that closes while draining starts its children's readers: wait for those too.
          for (let seen = -1; seen !== readers.size; ) {
            seen = readers.size;
            await Promise.allSettled([...readers.values()]);
          }
          return true as const;
        })(),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      return drained;
    },
    async stop() {
      stopping.abort();
      refreshWanted?.();
      await refresher;
      await Promise.allSettled([...readers.values()]);
      reader.destroy();
      // The last positions, saved before the runtime goes on to stop Java.
      while (saving) await saving;
      if (unsaved) await checkpoint();
    },
  };
}
