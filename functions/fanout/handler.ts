/**
 * Fan-out family: invoked with batches of the table's stream records (the Lambda event source
 * mapping in AWS, the stream poller locally). Two consumers share each batch: the live feed
 * (new events to subscribed WebSocket clients, to the MQTT broker and to the webhook queue) and the audit trail (object changes become
 * events). Records either could not handle are returned in `batchItemFailures`
 * (ReportBatchItemFailures); both are safe to retry. The same pass meters the write side of
 * tenant usage (events published, objects created and deleted; see `shared/usage/stream.ts`), and
 * records the changes credential downloads are versioned by (`shared/access/credential-changes.ts`).
 */
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { recordCredentialChanges } from '#shared/access/credential-changes.ts';
import { auditEventsFromStream, mergeBatchResponses } from '#shared/events/audit.ts';
import { config } from '#shared/config.ts';
import { createLiveDeps, type LiveDeps, type LiveDepsOverrides } from '#shared/live/live-deps.ts';
import { fanOut } from '#shared/live/fanout.ts';
import { createIotPublisher } from '#shared/live/mqtt/publisher.ts';
import { createUsageRecorder, type UsageRecorder } from '#shared/usage/recorder.ts';
import { meterStreamBatch } from '#shared/usage/stream.ts';
import { tableQueue } from '#shared/live/webhooks/queue.ts';
import { createSqsQueue } from '#shared/live/webhooks/sqs-queue.ts';
import { mappingErrorStacks } from '#shared/error-stacks.ts';

export function createHandler(deps: () => LiveDeps) {
  let usage: UsageRecorder | undefined;
  return async function fanout(event: DynamoDBStreamEvent, _context?: Context): Promise<DynamoDBBatchResponse> {
    const records = event.Records ?? [];
    const [live, audit, credentials] = await Promise.all([fanOut(deps(), records), auditEventsFromStream(records, deps()), recordCredentialChanges(deps().db, records)]);
    const response = mergeBatchResponses(live, audit, credentials);
    usage ??= createUsageRecorder(deps());
    meterStreamBatch(usage, records, response);
    await usage.flushIfDue();
    return response;
  };
}

let deps: LiveDeps | undefined;

/**
 * The live deps with the MQTT channel on when an IoT data endpoint is configured, and webhook
 * jobs queued on SQS when a queue URL is configured (AWS), else on the table (the local runtime).
 * `transport`: how WebSocket messages and MQTT publishes go out when not through the configured
 * endpoints (the local runtime passes its gateway and broker, in the same process).
 */
export function fanoutDeps(transport: Pick<LiveDepsOverrides, 'connections' | 'mqtt'> = {}): LiveDeps {
  const cfg = config();
  const endpoint = cfg.mqttPublishUrl;
  const mqtt = transport.mqtt ?? (endpoint ? createIotPublisher({ endpoint, region: cfg.region }) : undefined);
  const live = createLiveDeps({ config: cfg, ...(mqtt ? { mqtt } : {}), ...(transport.connections ? { connections: transport.connections } : {}) });
  const queueUrl = cfg.webhookQueueUrl;
  return { ...live, webhooks: queueUrl ? createSqsQueue({ queueUrl, region: cfg.region }) : tableQueue(live.db) };
}

// Errors reach the runtime with stacks that name the TypeScript (shared/source-mapped-stack.ts).
export const handler = mappingErrorStacks(createHandler(() => (deps ??= fanoutDeps())));
