/**
 * A failing fan-out on the table's real stream (DynamoDB Local): the stream poller retries the
 * batch with exponential backoff, then appends the batch's identities (never its contents) to
 * the dead-letter file, as the event source mapping sends a failed batch to its SQS on-failure
 * destination in AWS, and goes on delivering later batches. The local runtime writes them to
 * `<data dir>/fanout-dead-letters.jsonl`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putLiveEvent } from '#shared/db/events-repo.ts';
import { eventFromStreamRecord } from '#shared/db/live-repo.ts';
import { createStreamReader } from '#local/storage/stream-reader.ts';
import { createLogger } from '#shared/logger.ts';
import { DEAD_LETTER_FILE, fileDeadLetters, type DeadLetter } from '#local/dead-letters.ts';
import { startRuntime } from '#local/server.ts';
import { startStreamPoller, type StreamPoller } from '#local/stream-poller.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { liveEvent } from '../support/live-events.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';

const BACKOFF_MS = 40;
const ATTEMPTS = 4;
const logger = createLogger({ logLevel: 'SILENT' });
const instanceKey = randomBytes(12).toString('hex');

let t: TestDb;
let dir: string;

interface Call {
  readonly at: number;
  readonly keys: string[];
  readonly outcome: 'ok' | 'threw' | 'partial';
}

beforeAll(async () => {
  t = await createTestDb();
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-dlq-'));
});

afterAll(async () => {
  t?.db.raw.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const keysOf = (records: readonly DynamoDBRecord[]) => records.map((r) => eventFromStreamRecord(r)?.key ?? '?');

/** Writes a new live event; `named` sees its key before the write, so no batch can hold it unnamed. */
async function publish(named: (key: string) => void = () => {}): Promise<string> {
  const w = liveEvent(instanceKey);
  named(w.event.key);
  await putLiveEvent(t.db, w, Math.floor(Date.now() / 1000));
  return w.event.key;
}

async function deadLetters(path: string): Promise<DeadLetter[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as DeadLetter);
}

/** A poller on the test table whose fan-out is `fanout`, recording every call. */
async function pollerWith(
  path: string,
  fanout: (e: DynamoDBStreamEvent) => Call['outcome'] | { batchItemFailures: Array<{ itemIdentifier: string }> },
  backoffMs = BACKOFF_MS,
) {
  const calls: Call[] = [];
  const poller: StreamPoller = await startStreamPoller({
    reader: createStreamReader(t.config),
    invoke: async (e) => {
      const at = performance.now();
      const result = fanout(e);
      const outcome = typeof result === 'string' ? result : 'partial';
      calls.push({ at, keys: keysOf(e.Records), outcome });
      if (result === 'threw') throw new Error('fan-out crashed');
      return typeof result === 'string' ? { batchItemFailures: [] } : result;
    },
    logger,
    idleMs: 20,
    backoffMs,
    maxAttempts: ATTEMPTS,
    onFailedBatch: fileDeadLetters(path, logger),
  });
  return { poller, calls };
}

describe('fan-out dead letters', () => {
  it('retries a failing batch with backoff, dead-letters its identities, then delivers later batches', async () => {
    const path = join(dir, `a-${DEAD_LETTER_FILE}`);
    let poison = '';
    const { poller, calls } = await pollerWith(path, (e) => (keysOf(e.Records).includes(poison) ? 'threw' : 'ok'));
    try {
      await publish((k) => (poison = k));
      await expect.poll(() => deadLetters(path), { timeout: 15_000 }).toHaveLength(1);
      const later = await publish();
      await expect.poll(() => calls.some((c) => c.outcome === 'ok' && c.keys.includes(later)), { timeout: 15_000 }).toBe(true);

      // Retried ATTEMPTS times, each retry after twice the previous wait.
      const tries = calls.filter((c) => c.keys.includes(poison));
      expect(tries.map((c) => c.outcome)).toEqual(Array(ATTEMPTS).fill('threw'));
      const gaps = tries.slice(1).map((c, i) => c.at - tries[i]!.at);
      gaps.forEach((gap, i) => expect(gap, `wait before retry ${i + 1}`).toBeGreaterThanOrEqual(BACKOFF_MS * 2 ** i - 2));

      const [letter] = await deadLetters(path);
      expect(letter).toEqual({
        timestamp: expect.any(String),
        condition: 'RetryAttemptsExhausted',
        attempts: ATTEMPTS,
        lastError: 'Error',
        streamArn: expect.stringContaining(t.config.tableName),
        shardId: expect.any(String),
        startSequenceNumber: expect.any(String),
        endSequenceNumber: expect.any(String),
        batchSize: tries[0]!.keys.length,
        records: tries[0]!.keys.map((key) => ({ eventID: expect.any(String), eventName: 'INSERT', sequenceNumber: expect.any(String), ...(key === '?' ? {} : { eventKey: key }) })),
      });
      expect(letter!.records.map((r) => r.eventKey)).toContain(poison);
      // Identities only: nothing of the items themselves.
      const text = await readFile(path, 'utf8');
      expect(text).not.toMatch(/MessageShort|NewImage|EventMessageData|ObjectLinks|Doc/);
      expect(text).not.toContain(later);
    } finally {
      await poller.stop();
    }
  });

  it('dead-letters a batch from its first failed record only, and delivers the records before it', async () => {
    const path = join(dir, `b-${DEAD_LETTER_FILE}`);
    let poison = '';
    const { poller, calls } = await pollerWith(path, (e) => {
      const failed = e.Records.filter((r) => eventFromStreamRecord(r)?.key === poison);
      return failed.length ? { batchItemFailures: failed.map((r) => ({ itemIdentifier: r.dynamodb!.SequenceNumber! })) } : 'ok';
    });
    try {
      const before = await publish();
      await publish((k) => (poison = k));
      const after = await publish();
      await expect.poll(() => deadLetters(path), { timeout: 15_000 }).toHaveLength(1);
      const later = await publish();
      await expect.poll(() => calls.some((c) => c.outcome === 'ok' && c.keys.includes(later)), { timeout: 15_000 }).toBe(true);

      const [letter] = await deadLetters(path);
      const keys = letter!.records.map((r) => r.eventKey);
      expect(keys[0]).toBe(poison);
      expect(keys).not.toContain(before);
      // The records before the failed one were delivered; one after it either shared its batch
      // (and its fate, as in AWS) or was delivered in a later one.
      expect(calls.some((c) => c.keys.indexOf(before) >= 0 && (c.outcome === 'ok' || c.keys.indexOf(before) < c.keys.indexOf(poison)))).toBe(true);
      expect(keys.includes(after) || calls.some((c) => c.outcome === 'ok' && c.keys.includes(after))).toBe(true);
    } finally {
      await poller.stop();
    }
  });

  it('dead-letters a batch still being retried when the poller stops, without trying it again', async () => {
    const path = join(dir, `c-${DEAD_LETTER_FILE}`);
    let poison = '';
    const { poller, calls } = await pollerWith(path, (e) => (keysOf(e.Records).includes(poison) ? 'threw' : 'ok'), 60_000);
    await publish((k) => (poison = k));
    await expect.poll(() => calls.filter((c) => c.keys.includes(poison)), { timeout: 15_000 }).toHaveLength(1);

    await poller.stop();

    expect(calls.filter((c) => c.keys.includes(poison))).toHaveLength(1);
    expect(await deadLetters(path)).toEqual([
      expect.objectContaining({ condition: 'PollerStopped', attempts: 1, records: expect.arrayContaining([expect.objectContaining({ eventKey: poison })]) }),
    ]);
  });

  it('is wired into the local runtime: a batch its fan-out keeps failing lands in the data directory', async () => {
    // startRuntime configures this process's environment for the handlers (none load here).
    const tableName = `dlq-${randomBytes(6).toString('hex')}`;
    process.env.GATEHOUSE_TABLE_NAME = tableName;
    const runtimeDir = join(dir, 'runtime');
    const runtime = await startRuntime({
      port: 0,
      dataDir: runtimeDir,
      dynamodbEndpoint: dynamoEndpoint(),
      pollIntervalMs: 20,
      families: {
        invoke: async (family) => {
          if (family === 'fanout') throw new Error('fan-out crashed');
          return { statusCode: 204 };
        },
      },
    });
    const own = await createTestDb({ GATEHOUSE_TABLE_NAME: tableName });
    try {
      // The poller's first read (from LATEST) is done, so the write below comes after it on any
      // machine, however busy (as live-poller-wake.test.ts does).
      const deadline = Date.now() + 15_000;
      while (runtime.streamPollerStats().reads.start < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(runtime.streamPollerStats().reads.start).toBe(1);
      const w = liveEvent(instanceKey);
      await putLiveEvent(own.db, w, Math.floor(Date.now() / 1000));

      // Four attempts with the default backoff (200, 400, 800 ms), then the dead letter.
      await expect.poll(() => deadLetters(join(runtimeDir, DEAD_LETTER_FILE)), { timeout: 20_000, interval: 200 }).toEqual([
        expect.objectContaining({ condition: 'RetryAttemptsExhausted', attempts: 4, records: [expect.objectContaining({ eventKey: w.event.key })] }),
      ]);
    } finally {
      own.db.raw.destroy();
      await runtime.stop();
    }
  });

  it('logs the identities of a failed batch when the dead-letter file cannot be written', async () => {
    const blocker = join(dir, 'not-a-directory');
    await writeFile(blocker, '');
    const logged: Array<{ message: string; extra: any }> = [];
    const spy = { error: (message: string, extra: unknown) => logged.push({ message, extra }) } as unknown as Logger;
    const record: DynamoDBRecord = { eventID: 'e1', eventName: 'INSERT', dynamodb: { SequenceNumber: '42' } };

    await fileDeadLetters(join(blocker, DEAD_LETTER_FILE), spy)({ condition: 'RetryAttemptsExhausted', streamArn: 'arn', shardId: 's', attempts: 4, lastError: 'Error', records: [record] });

    expect(logged).toEqual([
      { message: 'writing a fan-out dead letter failed', extra: expect.objectContaining({ deadLetter: expect.objectContaining({ records: [{ eventID: 'e1', eventName: 'INSERT', sequenceNumber: '42' }] }) }) },
    ]);
  });
});
