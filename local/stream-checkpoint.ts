/**
 * Where the stream poller left off, kept in `<data dir>/stream-checkpoint.json` (the stand-in for
 * the event source mapping's own position, which AWS keeps across a crash of anything): per shard
 * of the table's stream, the sequence number of the last record whose batch the fan-out accepted
 * (its webhook jobs were in the queue table by then), `null` for a shard read from its end with no
 * record yet, or `done` for a closed shard read to its end. DynamoDB Local keeps the stream (shard
 * ids, sequence numbers, records) in its database file across a restart, so after a crash or a
 * power cut the poller goes on after the checkpoint instead of from the stream's end, and the
 * records written but not fanned out before the crash still reach their channels.
 *
 * The file is replaced whole (written aside, then renamed), so a crash mid-write leaves the old
 * one: a checkpoint only ever lags what was delivered, and a lag means records fanned out again
 * (webhook deliveries again under the same `webhook-id`), never records skipped.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { PRIVATE_FILE_MODE } from './data-dir.ts';
import type { StreamCheckpoint, StreamCheckpointStore } from './stream-poller.ts';

const STREAM_CHECKPOINT_FILE = 'stream-checkpoint.json';

/** The checkpoint file of a data directory. */
export function fileStreamCheckpoints(dataDir: string, logger: Logger): StreamCheckpointStore {
  const path = join(dataDir, STREAM_CHECKPOINT_FILE);
  const aside = `${path}.next`;
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
      try {
        const parsed = JSON.parse(text) as Partial<StreamCheckpoint>;
        if (typeof parsed.streamArn === 'string' && parsed.shards && typeof parsed.shards === 'object') {
          return { streamArn: parsed.streamArn, shards: parsed.shards };
        }
      } catch {
        // Reported below.
      }
      // Never written by this code: a file edited or damaged by hand. Reading the stream from its
      // start sends old events again (same webhook-ids); skipping to its end could lose some.
      logger.warn('the stream checkpoint is not readable; the stream is read from its oldest record', { file: STREAM_CHECKPOINT_FILE });
      return { streamArn: '', shards: {}, unreadable: true };
    },
    async save(checkpoint) {
      await writeFile(aside, JSON.stringify({ streamArn: checkpoint.streamArn, shards: checkpoint.shards }), { mode: PRIVATE_FILE_MODE });
      await rename(aside, path);
    },
  };
}
