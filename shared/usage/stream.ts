/**
 * Write-side usage from the table's stream: the fan-out sees every record, so it counts events
 * published (audit events apart) and objects created and deleted per instance, into its
 * environment's usage recorder (flushed at most once a minute like the request counts).
 *
 * Only the records the event source mapping will not deliver again are counted: with
 * ReportBatchItemFailures it resumes from the first failed record, so the records before it are
 * counted now and the rest when they come back. A batch that fails as a whole counts nothing.
 */
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import { usageOfStreamRecord } from '../db/usage-repo.ts';
import { SYSTEM_APP_KEY } from '../events/system-app.ts';
import type { Counter } from './meter.ts';
import type { UsageRecorder } from './recorder.ts';

const COUNTER_OF = {
  event: 'EventsPublished',
  'audit-event': 'AuditEvents',
  'object-created': 'ObjectsCreated',
  'object-deleted': 'ObjectsDeleted',
} as const satisfies Record<string, Counter>;

/** Counts the usage of the records of a handled batch that will not come back. */
export function meterStreamBatch(recorder: Pick<UsageRecorder, 'add'>, records: readonly DynamoDBRecord[], response: DynamoDBBatchResponse): void {
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  for (const r of records) {
    if (failed.has(r.dynamodb?.SequenceNumber ?? '')) break;
    const u = usageOfStreamRecord(r, SYSTEM_APP_KEY);
    if (u) recorder.add(u.instanceKey, { [COUNTER_OF[u.kind]]: 1 });
  }
}
