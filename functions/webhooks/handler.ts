/**
 * Webhooks family: the webhooks collection's routes (see `shared/webhooks/operations.ts`) and the
 * sender. The same function consumes the delivery queue: in AWS the SQS event source mapping
 * invokes it with message batches (ReportBatchItemFailures); locally the runtime's timer invokes
 * it with the same shape from its queue table. Keeping the sender here keeps the SQS
 * client in two functions only (this one and the fan-out).
 */
import type { APIGatewayProxyEventV2, Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { config } from '#shared/config.ts';
import { createCoreDeps } from '#shared/deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import type { WebhookDeps } from '#shared/webhooks/operations.ts';
import { webhookOperations } from '#shared/webhooks/operations.ts';
import { parseJob, tableQueue } from '#shared/webhooks/queue.ts';
import { handleJob } from '#shared/webhooks/sender.ts';
import { createSqsQueue, type SqsWebhookQueue } from '#shared/webhooks/sqs-queue.ts';
import { mappingErrorStacks } from '#shared/stack.ts';

export const operations = webhookOperations;

const isQueueEvent = (event: unknown): event is SQSEvent =>
  Array.isArray((event as SQSEvent).Records) && (event as SQSEvent).Records.every((r) => r.eventSource === 'aws:sqs');

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

export function createHandler(deps: () => WebhookDeps, sqs?: () => SqsWebhookQueue | undefined) {
  const http = makeHandler({ family: 'webhooks', operations, deps });
  return async function webhooks(event: APIGatewayProxyEventV2 | SQSEvent, context: Context) {
    if (isQueueEvent(event)) return handleQueueBatch(deps(), event, sqs?.());
    return http(event, context);
  };
}

let deps: WebhookDeps | undefined;
let sqs: SqsWebhookQueue | undefined;

function defaultDeps(): WebhookDeps {
  const core = createCoreDeps();
  const url = core.config.webhookQueueUrl;
  sqs = url ? createSqsQueue({ queueUrl: url, region: core.config.region }) : undefined;
  return { ...core, queue: sqs ?? tableQueue(core.db) };
}

// Errors reach the runtime with stacks that name the TypeScript (shared/stack.ts).
export const handler = mappingErrorStacks(createHandler(
  () => (deps ??= defaultDeps()),
  () => (config().webhookQueueUrl ? sqs : undefined),
));
