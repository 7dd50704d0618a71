/**
 * The delivery queue in AWS: one SQS message per job, sent 10 at a time. A job due later than
 * SQS's longest message delay (15 min) is sent with that delay; when it arrives early the sender
 * hides it again for the rest of the wait (up to SQS's 12 h visibility limit) and the queue
 * delivers it once more. Only the fan-out and the webhooks function (the sender) import this
 * module, and the SDK client is created on first use. Its classes are imported by name, not
 * loaded with `import()`: esbuild cannot tree-shake a package reached by a dynamic import, so that
 * form bundled the whole SQS client (every command) into both functions.
 */
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { WebhookQueue } from './queue.ts';

/** SQS's largest message, and largest batch (the sum of its messages). */
export const MAX_BATCH_BYTES = 256 * 1024;
/** SQS's longest DelaySeconds. */
export const MAX_DELAY_SECONDS = 900;
/** SQS's longest visibility timeout. */
export const MAX_VISIBILITY_SECONDS = 43_200;

export interface SqsWebhookQueue extends WebhookQueue {
  /** Hides a received message for `seconds` more (it comes back then). */
  defer(receiptHandle: string, seconds: number): Promise<void>;
}

/** A queue for one SQS queue URL. Create once per execution environment. */
export function createSqsQueue(opts: { queueUrl: string; region: string; now?: () => number; endpoint?: string }): SqsWebhookQueue {
  const now = opts.now ?? Date.now;
  let client: SQSClient | undefined;
  // An explicit endpoint is a stand-in on this machine (tests): it checks no signature.
  const local = opts.endpoint ? { endpoint: opts.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {};
  const sqs = (): SQSClient => (client ??= new SQSClient({ region: opts.region, ...local }));
  return {
    maxJobBytes: MAX_BATCH_BYTES,
    async send(jobs) {
      const c = sqs();
      // Batches of at most 10 messages and 256 KB in all.
      const batches: Array<Array<{ Id: string; MessageBody: string; DelaySeconds: number }>> = [];
      let batch: Array<{ Id: string; MessageBody: string; DelaySeconds: number }> = [];
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
        batch.push({ Id: String(batch.length), MessageBody: body, DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((j.notBefore - now()) / 1000))) });
        bytes += size;
      }
      if (batch.length > 0) batches.push(batch);
      for (const first of batches) {
        let entries = first;
        for (let attempt = 1; entries.length > 0; attempt++) {
          const out = await c.send(new SendMessageBatchCommand({ QueueUrl: opts.queueUrl, Entries: entries }));
          const failed = new Set((out.Failed ?? []).map((f) => f.Id));
          entries = entries.filter((e) => failed.has(e.Id));
          if (entries.length > 0 && attempt >= 4) throw new Error(`SQS refused ${entries.length} webhook jobs`);
          if (entries.length > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
        }
      }
    },
    async defer(receiptHandle, seconds) {
      await sqs().send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: opts.queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(seconds))),
        }),
      );
    },
  };
}
