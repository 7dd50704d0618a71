/**
 * Fan-out family: invoked with batches of the table's stream records (the Lambda event source
 * mapping in AWS, the stream poller locally). Two consumers share each batch: the live feed
 * (new events to subscribed WebSocket clients) and the audit trail (object changes become
 * events). Records either could not handle are returned in `batchItemFailures`
 * (ReportBatchItemFailures); both are safe to retry.
 */
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { auditEventsFromStream, mergeBatchResponses } from '#shared/events/audit.ts';
import { createLiveDeps, type LiveDeps } from '#shared/live/deps.ts';
import { fanOut } from '#shared/live/fanout.ts';

export function createHandler(deps: () => LiveDeps) {
  return async function fanout(event: DynamoDBStreamEvent, _context?: Context): Promise<DynamoDBBatchResponse> {
    const records = event.Records ?? [];
    const [live, audit] = await Promise.all([fanOut(deps(), records), auditEventsFromStream(records, deps())]);
    return mergeBatchResponses(live, audit);
  };
}

let deps: LiveDeps | undefined;

export const handler = createHandler(() => (deps ??= createLiveDeps()));
