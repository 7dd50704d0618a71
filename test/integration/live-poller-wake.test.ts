/**
 * The local runtime wakes its stream poller when a request that may write is answered, so a new
 * event's stream record is read at once rather than after the idle interval. The runtime runs
 * in this process on the table's real stream (DynamoDB Local), with an idle interval no test
 * could wait out; its families are stand-ins that write one live event (the `events` family) and
 * record what the fan-out receives, so the mechanism is asserted, not a latency.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putLiveEvent } from '#shared/db/events-repo.ts';
import { eventFromStreamRecord } from '#shared/db/live-repo.ts';
import { startRuntime, type Runtime } from '#local/server.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { liveEvent } from '../support/live-events.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';

const FOREVER_MS = 10 * 60_000;
const instanceKey = randomBytes(12).toString('hex');

let runtime: Runtime;
let own: TestDb;
let dir: string;
const fannedOut: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-wake-'));
  // startRuntime configures this process's environment for the handlers (none load here).
  const tableName = `wake-${randomBytes(6).toString('hex')}`;
  process.env.GATEHOUSE_TABLE_NAME = tableName;
  runtime = await startRuntime({
    port: 0,
    dataDir: join(dir, 'runtime'),
    dynamodbEndpoint: dynamoEndpoint(),
    pollIntervalMs: FOREVER_MS,
    families: {
      invoke: async (family, event) => {
        if (family === 'fanout') {
          for (const r of (event as DynamoDBStreamEvent).Records) {
            const key = eventFromStreamRecord(r)?.key;
            if (key) fannedOut.push(key);
          }
          return { batchItemFailures: [] };
        }
        if (family === 'events') {
          const w = liveEvent(instanceKey);
          await putLiveEvent(own.db, w, Math.floor(Date.now() / 1000));
          return { statusCode: 201, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ Key: w.event.key }) };
        }
        return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
      },
    },
  });
  own = await createTestDb({ GATEHOUSE_TABLE_NAME: tableName });
  // The poller's first read (from LATEST) is done: whatever it reads later, it read on a trigger.
  const deadline = Date.now() + 15_000;
  while (runtime.streamPollerStats().reads.start < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
});

afterAll(async () => {
  own?.db.raw.destroy();
  await runtime?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the runtime wakes its stream poller', () => {
  it('does not wake it for a read-only request', async () => {
    expect(runtime.streamPollerStats().reads.start).toBe(1);
    const res = await fetch(`${runtime.url}/api/f/${instanceKey}/people/${randomBytes(12).toString('hex')}`);

    expect(res.status).toBe(200);
    expect(runtime.streamPollerStats().wakes).toBe(0);
  });

  it('reads the record of a published event on the wake, not after the idle interval', async () => {
    const res = await fetch(`${runtime.url}/api/f/${instanceKey}/eventmessagesink`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(201);
    const { Key } = (await res.json()) as { Key: string };

    // With a ten-minute idle interval, only the wake can have brought it in.
    await expect.poll(() => fannedOut, { timeout: 30_000 }).toContain(Key);
    const stats = runtime.streamPollerStats();
    expect(stats.wakes).toBe(1);
    expect(stats.readsWithRecords.wake).toBe(1);
    expect(stats.reads.idle).toBe(0);
  });
});
