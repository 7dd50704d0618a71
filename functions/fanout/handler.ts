/**
 * Fan-out family: invoked with batches of the table's stream records (the Lambda event source
 * mapping in AWS, the stream poller locally). Two consumers share each batch: the live feed
 * (new events to subscribed WebSocket clients and to the MQTT broker) and the audit trail (object changes become
 * events). Records either could not handle are returned in `batchItemFailures`
 * (ReportBatchItemFailures); both are safe to retry.
 */
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { auditEventsFromStream, mergeBatchResponses } from '#shared/events/audit.ts';
import { config } from '#shared/config.ts';
import { createLiveDeps, type LiveDeps } from '#shared/live/deps.ts';
import { fanOut } from '#shared/live/fanout.ts';
import { createIotPublisher } from '#shared/live/mqtt-publisher.ts';

export function createHandler(deps: () => LiveDeps) {
  return async function fanout(event: DynamoDBStreamEvent, _context?: Context): Promise<DynamoDBBatchResponse> {
    const records = event.Records ?? [];
    const [live, audit] = await Promise.all([fanOut(deps(), records), auditEventsFromStream(records, deps())]);
    return mergeBatchResponses(live, audit);
  };
}

let deps: LiveDeps | undefined;

/** The live deps with the MQTT channel on when an IoT data endpoint is configured. */
function fanoutDeps(): LiveDeps {
  const cfg = config();
  const endpoint = cfg.mqttPublishUrl;
  return createLiveDeps(endpoint ? { config: cfg, mqtt: createIotPublisher({ endpoint, region: cfg.region }) } : { config: cfg });
}

export const handler = createHandler(() => (deps ??= fanoutDeps()));
