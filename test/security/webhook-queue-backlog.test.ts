/**
 * Issue #34, finding 6, on the local runtime's queue table: a backlog of one instance left in the
 * table (a previous run's jobs, more than one read brings) whose attempts all hang must not hide
 * another instance's due job from the runner (docs/architecture.md, "Webhook fairness"). The runner is
 * the real one over DynamoDB Local; `invoke` plays the webhooks function, holding every attempt of
 * the flooding instance as a dead receiver would.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDbOf, type Db } from '#shared/db/client.ts';
import { ensureQueueTable } from '#local/storage/create-tables.ts';
import { putQueuedJobs } from '#shared/db/webhooks-repo.ts';
import { PER_INSTANCE, startWebhookQueue, type WebhookQueueRunner } from '../../local/webhook-queue.ts';
import { createTestDb } from '../support/db.ts';
import { waitFor } from '../support/webhook-receiver.ts';

const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
/** More due jobs of A than one read of the runner brings (10 pages of 1 000). */
const BACKLOG = 12_000;
/** How soon after the runner starts B's job must be handed to the sender. */
const BOUND_MS = 5000;

let queueDb: Db;
let runner: WebhookQueueRunner | undefined;
const held: Array<() => void> = [];

beforeAll(async () => {
  const t = await createTestDb();
  queueDb = queueDbOf(t.db);
  await ensureQueueTable(queueDb);
});

afterAll(async () => {
  for (const release of held) release();
  await runner?.stop();
});

const body = (instanceKey: string, webhookKey: string, n: number) =>
  JSON.stringify({ webhookKey, instanceKey, eventKey: null, messageId: `msg_${instanceKey}_${n}`, type: 'webhook.test', timestamp: new Date().toISOString(), data: {}, attempt: 1, notBefore: 0 });

describe('the local webhook queue under one instance\'s backlog', () => {
  it(`rejects starving another instance: its due job starts within ${BOUND_MS / 1000} s behind ${BACKLOG} hanging jobs of one instance`, async () => {
    const now = Date.now();
    // A's backlog, due before B's job, spread over 100 subscriptions (none held back by its own limit).
    await putQueuedJobs(
      queueDb,
      Array.from({ length: BACKLOG }, (_, i) => {
        const webhookKey = `${String(i % 100).padStart(2, '0')}${'c'.repeat(22)}`;
        return { jobId: `a${i}`, webhookKey, instanceKey: A, dueAt: now - 120_000 + i, body: body(A, webhookKey, i) };
      }),
      Math.floor(now / 1000) + 3600,
    );
    await putQueuedJobs(queueDb, [{ jobId: 'b0', webhookKey: 'd'.repeat(24), instanceKey: B, dueAt: now - 1000, body: body(B, 'd'.repeat(24), 0) }], Math.floor(now / 1000) + 3600);

    let bStartedAt: number | undefined;
    let aStarted = 0;
    const started = Date.now();
    runner = startWebhookQueue({
      db: queueDb,
      logger: new Logger({ logLevel: 'SILENT' }),
      invoke: (event: SQSEvent) => {
        const job = JSON.parse(event.Records[0]!.body) as { instanceKey: string };
        if (job.instanceKey === B) {
          bStartedAt ??= Date.now();
          return Promise.resolve({ batchItemFailures: [] });
        }
        aStarted++;
        // A dead receiver: the attempt hangs until the test ends.
        return new Promise((resolve) => held.push(() => resolve({ batchItemFailures: [] })));
      },
    });

    expect(await waitFor(() => bStartedAt !== undefined, BOUND_MS + 5000, 20), `A started ${aStarted}`).toBe(true);
    expect(bStartedAt! - started).toBeLessThanOrEqual(BOUND_MS);
    // A held its share of the slots meanwhile, not all of them.
    expect(aStarted).toBeGreaterThan(0);
    expect(aStarted).toBeLessThanOrEqual(PER_INSTANCE);
  });
});
