/**
 * The stream poller's delivery rules, with a scripted stream (so batches, failures and shard
 * splits are exact): retries from the first failed record with backoff, gives up after the
 * bounded attempts, reads a child shard after its parent closes, reads at once when woken (the
 * runtime wakes it after each write) and reads the next page while a batch is delivered.
 */
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { StreamPositionLost, type RecordPage, type ShardPosition, type StreamReader, type StreamShard } from '#local/storage/stream-reader.ts';
import { createLogger } from '#shared/logger.ts';
import { startStreamPoller, type StreamCheckpoint, type StreamCheckpointStore } from '#local/stream-poller.ts';

const logger = createLogger({ logLevel: 'SILENT' });

const record = (seq: string): DynamoDBRecord => ({ eventName: 'INSERT', dynamodb: { SequenceNumber: seq, Keys: { PK: { S: seq } } } });

/**
 * A stream whose shards each return their pages once, then empty pages; a shard whose script
 * ends with `closed` returns no next iterator after its last page.
 */
function scriptedStream(script: Record<string, { parent?: string; pages: DynamoDBRecord[][]; closed?: boolean; appearsAfterMs?: number }>) {
  const started = Date.now();
  const positions: Array<{ shardId: string; position: ShardPosition }> = [];
  const reader: StreamReader = {
    latestStreamArn: async () => 'arn:stream',
    shards: async () =>
      Object.entries(script)
        .filter(([, s]) => Date.now() - started >= (s.appearsAfterMs ?? 0))
        .map(([shardId, s]): StreamShard => ({ shardId, parentShardId: s.parent, closed: s.closed === true })),
    iterator: async (_arn, shardId, position) => {
      positions.push({ shardId, position });
      return `${shardId}:0`;
    },
    records: async (iterator): Promise<RecordPage> => {
      const [shardId, n] = iterator.split(':') as [string, string];
      const s = script[shardId]!;
      const i = Number(n);
      if (i < s.pages.length) {
        const last = i === s.pages.length - 1;
        return { records: s.pages[i]!, next: last && s.closed ? undefined : `${shardId}:${i + 1}` };
      }
      return { records: [], next: s.closed ? undefined : iterator };
    },
    destroy: () => {},
  };
  return { reader, positions };
}

const seqs = (e: DynamoDBStreamEvent) => e.Records.map((r) => r.dynamodb!.SequenceNumber!);

/** An idle wait no test may sit out: a record read while it runs was read on a wake. */
const FOREVER_MS = 10 * 60_000;

/**
 * One open shard whose reads return what was appended before each read began; `hold()` makes
 * the next reads wait until `release()`.
 */
function appendableStream() {
  const appended: DynamoDBRecord[] = [];
  let held: Promise<void> | undefined;
  let release = () => {};
  let readsStarted = 0;
  const reader: StreamReader = {
    latestStreamArn: async () => 'arn:stream',
    shards: async () => [{ shardId: 's1', parentShardId: undefined, closed: false }],
    iterator: async () => 's1',
    records: async (iterator) => {
      readsStarted++;
      const records = appended.splice(0);
      if (held) await held;
      return { records, next: iterator };
    },
    destroy: () => {},
  };
  return {
    reader,
    append: (...records: DynamoDBRecord[]) => appended.push(...records),
    hold: () => (held = new Promise<void>((r) => (release = r))),
    release: () => {
      held = undefined;
      release();
    },
    readsStarted: () => readsStarted,
  };
}

const recording = (calls: string[][]) => async (e: DynamoDBStreamEvent) => {
  calls.push(seqs(e));
  return { batchItemFailures: [] };
};

describe('stream poller', () => {
  it('retries a failed batch from the first failed record', async () => {
    const { reader } = scriptedStream({ s1: { pages: [[record('1'), record('2'), record('3')]] } });
    const calls: string[][] = [];
    const invoke = async (e: DynamoDBStreamEvent) => {
      calls.push(seqs(e));
      if (calls.length === 1) throw new Error('cold start failed');
      if (calls.length === 2) return { batchItemFailures: [{ itemIdentifier: '2' }] };
      return { batchItemFailures: [] };
    };

    const poller = await startStreamPoller({ reader, invoke, logger, idleMs: 10, backoffMs: 5 });
    await expect.poll(() => calls.length).toBe(3);
    await poller.stop();

    expect(calls).toEqual([
      ['1', '2', '3'],
      ['1', '2', '3'],
      ['2', '3'],
    ]);
  });

  it('skips a batch after the bounded attempts and reads on', async () => {
    const { reader } = scriptedStream({ s1: { pages: [[record('1')], [record('2')]] } });
    const calls: string[][] = [];
    const invoke = async (e: DynamoDBStreamEvent) => {
      calls.push(seqs(e));
      if (seqs(e).includes('1')) throw new Error('poison record');
      return { batchItemFailures: [] };
    };

    const poller = await startStreamPoller({ reader, invoke, logger, idleMs: 10, backoffMs: 5, maxAttempts: 3 });
    await expect.poll(() => calls.length).toBe(4);
    await poller.stop();

    expect(calls).toEqual([['1'], ['1'], ['1'], ['2']]);
  });

  it('retries the whole batch when a failure names an unknown record', async () => {
    const { reader } = scriptedStream({ s1: { pages: [[record('1'), record('2')]] } });
    const calls: string[][] = [];
    const invoke = async (e: DynamoDBStreamEvent) => {
      calls.push(seqs(e));
      return { batchItemFailures: calls.length === 1 ? [{ itemIdentifier: '' }] : [] };
    };

    const poller = await startStreamPoller({ reader, invoke, logger, idleMs: 10, backoffMs: 5 });
    await expect.poll(() => calls.length).toBe(2);
    await poller.stop();

    expect(calls).toEqual([
      ['1', '2'],
      ['1', '2'],
    ]);
  });

  it('skips shards closed at start and reads a shard that appears later from TRIM_HORIZON', async () => {
    const { reader, positions } = scriptedStream({
      old: { pages: [[record('0')]], closed: true },
      open: { pages: [[record('1')]] },
      child: { parent: 'old', pages: [[record('2')]], appearsAfterMs: 50 },
    });
    const calls: string[][] = [];

    const poller = await startStreamPoller({
      reader,
      invoke: async (e) => {
        calls.push(seqs(e));
        return { batchItemFailures: [] };
      },
      logger,
      idleMs: 10,
      shardRefreshMs: 20,
    });
    await expect.poll(() => calls.flat().sort()).toEqual(['1', '2']);
    await poller.stop();

    // A closed shard at start holds history nobody listened to.
    expect(positions.some((p) => p.shardId === 'old')).toBe(false);
    expect(positions).toContainEqual({ shardId: 'open', position: { type: 'LATEST' } });
    expect(positions).toContainEqual({ shardId: 'child', position: { type: 'TRIM_HORIZON' } });
  });

  it('reads an open shard to its end before its child shard', async () => {
    let parentOpen = true;
    const order: string[] = [];
    const reader: StreamReader = {
      latestStreamArn: async () => 'arn:stream',
      shards: async () => [
        { shardId: 'p', parentShardId: undefined, closed: !parentOpen },
        ...(parentOpen ? [] : [{ shardId: 'c', parentShardId: 'p', closed: false }]),
      ],
      iterator: async (_arn, shardId) => `${shardId}:0`,
      records: async (it) => {
        const [shardId, n] = it.split(':') as [string, string];
        if (shardId === 'p') {
          if (n === '0') return { records: [], next: 'p:1' };
          // The parent closes: its last records, then no next iterator.
          parentOpen = false;
          if (n === '1') return { records: [record('p1')], next: undefined };
        }
        if (n === '0') return { records: [record('c1')], next: 'c:1' };
        return { records: [], next: it };
      },
      destroy: () => {},
    };

    const poller = await startStreamPoller({
      reader,
      invoke: async (e) => {
        order.push(...seqs(e));
        return { batchItemFailures: [] };
      },
      logger,
      idleMs: 10,
      shardRefreshMs: 10_000,
    });
    await expect.poll(() => order).toEqual(['p1', 'c1']);
    await poller.stop();
  });

  it('reads a record at once when woken, instead of after the idle wait', async () => {
    const stream = appendableStream();
    const calls: string[][] = [];
    const poller = await startStreamPoller({ reader: stream.reader, invoke: recording(calls), logger, idleMs: FOREVER_MS });
    await expect.poll(() => poller.stats().reads.start).toBe(1);

    stream.append(record('1'));
    poller.wake();
    await expect.poll(() => calls).toEqual([['1']]);
    const stats = poller.stats();
    await poller.stop();

    expect(stats.wakes).toBe(1);
    expect(stats.readsWithRecords).toEqual({ start: 0, more: 0, wake: 1, idle: 0 });
    expect(stats.reads.idle).toBe(0);
  });

  it('reads again without an idle wait when woken during a read that missed the write', async () => {
    const stream = appendableStream();
    const calls: string[][] = [];
    stream.hold();
    const poller = await startStreamPoller({ reader: stream.reader, invoke: recording(calls), logger, idleMs: FOREVER_MS });
    await expect.poll(() => stream.readsStarted()).toBe(1);

    // The write lands after the read in progress looked: only the wake can bring it in.
    stream.append(record('1'));
    poller.wake();
    stream.release();
    await expect.poll(() => calls).toEqual([['1']]);
    const stats = poller.stats();
    await poller.stop();

    expect(stats.readsWithRecords).toEqual({ start: 0, more: 0, wake: 1, idle: 0 });
    expect(stats.reads.idle).toBe(0);
  });

  it('looks again shortly when a wake finds nothing yet (the record reaches the stream after the write is answered)', async () => {
    const stream = appendableStream();
    const calls: string[][] = [];
    const poller = await startStreamPoller({ reader: stream.reader, invoke: recording(calls), logger, idleMs: FOREVER_MS });
    await expect.poll(() => poller.stats().reads.start).toBe(1);

    // The wake's own read finds nothing; the record appears while the follow-up reads run.
    poller.wake();
    await expect.poll(() => poller.stats().reads.wake).toBeGreaterThanOrEqual(2);
    stream.append(record('1'));
    await expect.poll(() => calls).toEqual([['1']]);
    const stats = poller.stats();
    await poller.stop();

    expect(stats.wakes).toBe(1);
    expect(stats.readsWithRecords).toEqual({ start: 0, more: 0, wake: 1, idle: 0 });
    expect(stats.reads.idle).toBe(0);
  });

  it('reads the next page while a batch is delivered, and still delivers the batches in order', async () => {
    const { reader } = scriptedStream({ s1: { pages: [[record('1')], [record('2')], [record('3')]] } });
    const log: string[] = [];
    const records = reader.records.bind(reader);
    reader.records = async (iterator, limit) => {
      log.push(`read ${iterator}`);
      return records(iterator, limit);
    };
    let firstDelivered = () => {};
    const holdFirst = new Promise<void>((r) => (firstDelivered = r));
    const poller = await startStreamPoller({
      reader,
      invoke: async (e) => {
        log.push(`deliver ${seqs(e).join()}`);
        if (seqs(e).includes('1')) await holdFirst;
        return { batchItemFailures: [] };
      },
      logger,
      idleMs: FOREVER_MS,
    });
    // The second page is read while the first batch is still being delivered.
    await expect.poll(() => log).toContain('read s1:1');
    expect(log.filter((l) => l.startsWith('deliver'))).toEqual(['deliver 1']);
    firstDelivered();
    await expect.poll(() => log.filter((l) => l.startsWith('deliver'))).toEqual(['deliver 1', 'deliver 2', 'deliver 3']);
    await poller.stop();
  });
  describe('with a checkpoint (crash recovery)', () => {
    /** A store in memory: what was saved, in order. */
    const memoryStore = (initial?: StreamCheckpoint) => {
      const saves: StreamCheckpoint[] = [];
      const store: StreamCheckpointStore = {
        load: async () => initial,
        save: async (c) => void saves.push(c),
      };
      return { store, saves, last: () => saves.at(-1) };
    };

    it('saves each shard after its delivered batch, and a start without a checkpoint reads from LATEST', async () => {
      const { reader, positions } = scriptedStream({ s1: { pages: [[record('1'), record('2')], [record('3')]] } });
      const { store, last } = memoryStore();
      const calls: string[][] = [];
      const poller = await startStreamPoller({ reader, invoke: recording(calls), logger, idleMs: 10, checkpoint: store });
      await expect.poll(() => last()?.shards.s1).toBe('3');
      expect(poller.stats().start).toBe('latest');
      await poller.stop();
      expect(positions[0]).toEqual({ shardId: 's1', position: { type: 'LATEST' } });
      expect(last()).toEqual({ streamArn: 'arn:stream', shards: { s1: '3' } });
    });

    it('goes on after the saved sequence number, skips shards it read to their end and reads new ones from TRIM_HORIZON', async () => {
      const { reader, positions } = scriptedStream({
        s0: { pages: [], closed: true },
        s1: { parent: 's0', pages: [[record('7')]] },
        s2: { pages: [[record('9')]] },
      });
      const { store, last } = memoryStore({ streamArn: 'arn:stream', shards: { s0: 'done', s1: '6' } });
      const calls: string[][] = [];
      const poller = await startStreamPoller({ reader, invoke: recording(calls), logger, idleMs: 10, checkpoint: store });
      await expect.poll(() => calls.length).toBe(2);
      expect(poller.stats().start).toBe('checkpoint');
      await poller.stop();
      expect(positions).toEqual(
        expect.arrayContaining([
          { shardId: 's1', position: { type: 'AFTER_SEQUENCE_NUMBER', sequenceNumber: '6' } },
          { shardId: 's2', position: { type: 'TRIM_HORIZON' } },
        ]),
      );
      expect(positions.some((p) => p.shardId === 's0')).toBe(false);
      expect(last()?.shards).toEqual({ s0: 'done', s1: '7', s2: '9' });
    });

    it('reads a shard from TRIM_HORIZON when its saved position was trimmed from the stream', async () => {
      const { reader, positions } = scriptedStream({ s1: { pages: [[record('20')]] } });
      const trimmed: StreamReader = {
        ...reader,
        iterator: async (arn, shardId, position) => {
          if (position.type === 'AFTER_SEQUENCE_NUMBER') throw new StreamPositionLost(new Error('TrimmedDataAccessException'));
          return reader.iterator(arn, shardId, position);
        },
      };
      const { store } = memoryStore({ streamArn: 'arn:stream', shards: { s1: '5' } });
      const calls: string[][] = [];
      const poller = await startStreamPoller({ reader: trimmed, invoke: recording(calls), logger, idleMs: 10, checkpoint: store });
      await expect.poll(() => calls.length).toBe(1);
      await poller.stop();
      expect(calls).toEqual([['20']]);
      expect(positions[0]).toEqual({ shardId: 's1', position: { type: 'TRIM_HORIZON' } });
    });

    it('reads from the end of the stream when the checkpoint is of another stream (the table was made again)', async () => {
      const { reader, positions } = scriptedStream({ s1: { pages: [] } });
      const { store } = memoryStore({ streamArn: 'arn:old-stream', shards: { old: '5' } });
      const poller = await startStreamPoller({ reader, invoke: recording([]), logger, idleMs: 10, checkpoint: store });
      expect(poller.stats().start).toBe('latest');
      await poller.stop();
      expect(positions[0]).toEqual({ shardId: 's1', position: { type: 'LATEST' } });
    });
  });
});
