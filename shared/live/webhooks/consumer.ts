/**
 * The webhooks function's queue consumer: a batch of delivery jobs (SQS in AWS, the runtime's
 * queue table locally), each handed to the sender. The function loads this module with its first
 * batch, so a cold start serving the webhooks API does not read the sender.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { WebhookDeps } from './access.ts';
import { parseJob } from './queue.ts';
import { handleJob } from './sender.ts';
import type { SqsWebhookQueue } from './sqs-queue.ts';

/**
 * Handles a batch of queued jobs, all at once (a slow receiver delays no other job of the batch).
 * A job that could not be handled (store or queue unavailable) is reported failed and comes back;
 * an early one (a step longer than SQS's 15 min delay) is hidden again for the rest of its wait.
 */
export async function handleQueueBatch(deps: WebhookDeps, event: SQSEvent, sqs?: SqsWebhookQueue): Promise<SQSBatchResponse> {
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (r) => {
      const job = parseJob(r.body);
      if (!job) {
        deps.logger.error('webhooks: not a delivery job; dropped', { messageId: r.messageId });
        return;
      }
      try {
        const result = await handleJob(deps, job);
        if (result.kind === 'early') {
          if (sqs) await sqs.defer(r.receiptHandle, result.waitMs / 1000);
          failures.push({ itemIdentifier: r.messageId });
        }
      } catch (err) {
        deps.logger.error('webhooks: handling a job failed; it comes back', { webhook: job.webhookKey, error: (err as Error).message });
        failures.push({ itemIdentifier: r.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
}
