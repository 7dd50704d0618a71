/**
 * Webhooks family: the webhooks collection's routes (see `shared/live/webhooks/operations.ts`) and the
 * sender. The same function consumes the delivery queue: in AWS the SQS event source mapping
 * invokes it with message batches (ReportBatchItemFailures); locally the runtime's timer invokes
 * it with the same shape from its queue table. Keeping the sender here keeps the SQS
 * client in two functions only (this one and the fan-out).
 */
import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { config } from '#shared/config.ts';
import { createCoreDeps } from '#shared/deps.ts';
import { onFirstUse } from '#shared/first-use.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import type { WebhookDeps } from '#shared/live/webhooks/access.ts';
import { webhookOperations } from '#shared/live/webhooks/operations.ts';
import { tableQueue } from '#shared/live/webhooks/queue.ts';
import { createSqsQueue, type SqsWebhookQueue } from '#shared/live/webhooks/sqs-queue.ts';
import { mappingErrorStacks } from '#shared/error-stacks.ts';

export const operations = webhookOperations;

const isQueueEvent = (event: unknown): event is SQSEvent =>
  Array.isArray((event as SQSEvent).Records) && (event as SQSEvent).Records.every((r) => r.eventSource === 'aws:sqs');

/** The queue's consumer (the sender and its HTTP client), loaded with the first batch of jobs: an API call never reads it. */
const consumer = onFirstUse(() => import('#shared/live/webhooks/consumer.ts'));

export function createHandler(deps: () => WebhookDeps, sqs?: () => SqsWebhookQueue | undefined) {
  const http = makeHandler({ family: 'webhooks', operations, deps, middlewares: [metering] });
  return async function webhooks(event: APIGatewayProxyEventV2 | SQSEvent, context: Context) {
    if (isQueueEvent(event)) return (await consumer()).handleQueueBatch(deps(), event, sqs?.());
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
