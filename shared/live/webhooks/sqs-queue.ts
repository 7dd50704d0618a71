/**
 * The delivery queue in AWS: one SQS message per job, sent 10 at a time. A job due later than
 * SQS's longest message delay (15 min) is sent with that delay; when it arrives early the sender
 * hides it again for the rest of the wait (up to SQS's 12 h visibility limit) and the queue
 * delivers it once more. Only the fan-out and the webhooks function (the sender) import this
 * module, and the SDK client is loaded and created on first use (sqs-client.ts).
 *
 * Each message carries its subscription's instance as MessageGroupId: on a standard queue that
 * makes it an SQS fair queue, which serves the messages of a quiet instance before those of one
 * holding a disproportionate share of the messages in flight or of the consumer's time (dead
 * receivers, a replay's backlog). See docs/architecture.md, "Webhook fairness".
 */
import type { WebhookQueue } from './queue.ts';
import { onFirstUse } from '../../first-use.ts';

/** SQS's largest message, and largest batch (the sum of its messages). */
const MAX_BATCH_BYTES = 256 * 1024;
/** SQS's longest DelaySeconds. */
const MAX_DELAY_SECONDS = 900;
/** SQS's longest visibility timeout. */
const MAX_VISIBILITY_SECONDS = 43_200;

export interface SqsWebhookQueue extends WebhookQueue {
  /** Hides a received message for `seconds` more (it comes back then). */
  defer(receiptHandle: string, seconds: number): Promise<void>;
}

/** A queue for one SQS queue URL. Create once per execution environment. */
export function createSqsQueue(opts: { queueUrl: string; region: string; now?: () => number; endpoint?: string }): SqsWebhookQueue {
  const now = opts.now ?? Date.now;
  // An explicit endpoint is a stand-in on this machine (tests): it checks no signature.
  const local = opts.endpoint ? { endpoint: opts.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {};
  // Kept once loaded (the module is part of the same bundle).
  const sqs = onFirstUse(() => import('./sqs-client.ts').then((m) => m.sqsCalls({ region: opts.region, ...local })));
  return {
    maxJobBytes: MAX_BATCH_BYTES,
    async send(jobs) {
      if (jobs.length === 0) return;
      const c = await sqs();
      // Batches of at most 10 messages and 256 KB in all.
      const batches: Array<Array<{ Id: string; MessageBody: string; DelaySeconds: number; MessageGroupId: string }>> = [];
      let batch: Array<{ Id: string; MessageBody: string; DelaySeconds: number; MessageGroupId: string }> = [];
      let bytes = 0;
      for (const j of jobs) {
        const body = JSON.stringify(j);
        const size = Buffer.byteLength(body);
        if (size > MAX_BATCH_BYTES) throw new Error(`A webhook job of ${size} bytes is larger than an SQS message (event ${j.eventKey})`);
        if (batch.length === 10 || bytes + size > MAX_BATCH_BYTES) {
          batches.push(batch);
          batch = [];
          bytes = 0;
        }
        batch.push({
          Id: String(batch.length),
          MessageBody: body,
          DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((j.notBefore - now()) / 1000))),
          // The fair queue's tenant.
          MessageGroupId: j.instanceKey,
        });
        bytes += size;
      }
      if (batch.length > 0) batches.push(batch);
      for (const first of batches) {
        let entries = first;
        for (let attempt = 1; entries.length > 0; attempt++) {
          const failed = new Set(await c.sendBatch(opts.queueUrl, entries));
          entries = entries.filter((e) => failed.has(e.Id));
          if (entries.length > 0 && attempt >= 4) throw new Error(`SQS refused ${entries.length} webhook jobs`);
          if (entries.length > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
        }
      }
    },
    async defer(receiptHandle, seconds) {
      await (await sqs()).changeVisibility(opts.queueUrl, receiptHandle, Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(seconds))));
    },
  };
}
