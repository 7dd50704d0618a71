/**
 * The local stand-in for the fan-out's SQS on-failure destination: each batch the stream poller
 * gives up on is appended as one JSON line to `<data dir>/fanout-dead-letters.jsonl`.
 *
 * As AWS's on-failure record, a line names the batch (stream, shard, first and last sequence
 * numbers, size, attempts) and never holds item contents: per record only its stream event id,
 * event name, sequence number and, for an event, the event's Key. Item keys are left out too, as
 * some embed names or card numbers.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { eventFromStreamRecord } from '#shared/db/live-repo.ts';
import type { FailedBatch } from './stream-poller.ts';

export const DEAD_LETTER_FILE = 'fanout-dead-letters.jsonl';

/** One line of the dead-letter file. */
export interface DeadLetter {
  readonly timestamp: string;
  readonly condition: FailedBatch['condition'];
  readonly attempts: number;
  readonly lastError: string;
  readonly streamArn: string;
  readonly shardId: string;
  readonly startSequenceNumber: string | undefined;
  readonly endSequenceNumber: string | undefined;
  readonly batchSize: number;
  readonly records: ReadonlyArray<{
    readonly eventID: string | undefined;
    readonly eventName: string | undefined;
    readonly sequenceNumber: string | undefined;
    /** The event's Key, when the record is a new event. */
    readonly eventKey?: string;
  }>;
}

/** What a failed batch leaves in the dead-letter file. */
function deadLetterOf(failure: FailedBatch, now = new Date()): DeadLetter {
  const records = failure.records.map((r) => {
    let eventKey: string | undefined;
    try {
      eventKey = eventFromStreamRecord(r)?.key;
    } catch {
      // A record that cannot be read is still named by its sequence number.
    }
    return {
      eventID: r.eventID,
      eventName: r.eventName,
      sequenceNumber: r.dynamodb?.SequenceNumber,
      ...(eventKey !== undefined ? { eventKey } : {}),
    };
  });
  return {
    timestamp: now.toISOString(),
    condition: failure.condition,
    attempts: failure.attempts,
    lastError: failure.lastError,
    streamArn: failure.streamArn,
    shardId: failure.shardId,
    startSequenceNumber: records[0]?.sequenceNumber,
    endSequenceNumber: records.at(-1)?.sequenceNumber,
    batchSize: records.length,
    records,
  };
}

/**
 * Appends failed batches to `path`, one at a time (shards fail concurrently). A line that cannot
 * be written is logged with the batch's identities, so a failure is never silent.
 */
export function fileDeadLetters(path: string, logger: Logger): (failure: FailedBatch) => Promise<void> {
  let queue: Promise<void> = Promise.resolve();
  return (failure) => {
    const letter = deadLetterOf(failure);
    queue = queue.then(async () => {
      try {
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        await appendFile(path, `${JSON.stringify(letter)}\n`, { mode: 0o600 });
      } catch (err) {
        logger.error('writing a fan-out dead letter failed', { path, error: (err as Error).message, deadLetter: letter });
      }
    });
    return queue;
  };
}
