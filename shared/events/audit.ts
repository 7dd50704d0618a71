/**
 * The audit trail: every create, update and delete of an object becomes an event of the built-in
 * system app, written from the table stream (the fan-out function's batches), never in the
 * request path. The event's related object is the changed object (Relation `Object`); it lies in
 * the object's folder (an event type's: its app's folder; a root instance's: itself), so it is
 * listed, returned by lastevent for the object, and delivered live like any event.
 *
 * Idempotent: an event's key is derived from the stream record (8 hex digits of the change's
 * time, 16 of a hash of its eventID), and the write is conditional, so a retried batch writes
 * nothing twice.
 *
 * Not audited: events themselves (their acknowledgements included), and items that are not
 * objects (claims, connections, pointers, tokens, status items, tombstones).
 *
 * The same pass removes what a deleted object leaves behind in the events model: an alarm
 * definition's event-type links, and an app's event types (each delete then audited in turn).
 *
 * The event of a change and the cascades are made in audit-event.ts, loaded with the first object
 * change a fan-out meets: a batch of events and connections alone never reads the BSON codec.
 *
 * The system app and its event types are fixed, documented keys (they are not stored objects):
 *
 * | what           | Key                        | Moniker (Namespace `Gatehouse.System`) |
 * | -------------- | -------------------------- | -------------------------------------- |
 * | system app     | `000000000000000000000001` | `Gatehouse`                            |
 * | object created | `000000000000000000000002` | `ObjectCreated`                        |
 * | object updated | `000000000000000000000003` | `ObjectUpdated`                        |
 * | object deleted | `000000000000000000000004` | `ObjectDeleted`                        |
 */
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import { EVENTS_COLLECTION, objectChangeFromStreamRecord } from '../db/events-repo.ts';
import { onFirstUse } from '../first-use.ts';
import type { AuditDeps } from './audit-event.ts';
import { SYSTEM_APP_KEY, SYSTEM_NAMESPACE } from './system-app.ts';

export { SYSTEM_APP_KEY, SYSTEM_NAMESPACE };

/** Collections whose changes are not audited: events (an audit event would audit itself). */
const NOT_AUDITED: ReadonlySet<string> = new Set([EVENTS_COLLECTION]);

/** Records handled at once. */
const CONCURRENCY = 16;

/** The audit event's writing (audit-event.ts), loaded with the first object change. */
const recording = onFirstUse(() => import('./audit-event.ts'));

/**
 * Writes the audit events of a batch of stream records (and removes what deleted alarm
 * definitions and apps leave behind). Records that failed are reported by sequence number, as
 * the event source mapping's ReportBatchItemFailures expects; retrying them is harmless.
 */
export async function auditEventsFromStream(records: readonly DynamoDBRecord[], deps: AuditDeps): Promise<DynamoDBBatchResponse> {
  const failed = new Set<number>();
  let next = 0;
  const worker = async () => {
    while (next < records.length) {
      const i = next++;
      const change = objectChangeFromStreamRecord(records[i]!, NOT_AUDITED);
      if (!change) continue;
      try {
        await (await recording()).recordChange(deps, change);
      } catch (err) {
        deps.logger.error('audit: recording an object change failed', { eventId: change.eventId, error: (err as Error).message });
        failed.add(i);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, records.length) }, worker));
  return {
    batchItemFailures: [...failed].sort((a, b) => a - b).map((i) => ({ itemIdentifier: records[i]!.dynamodb?.SequenceNumber ?? '' })),
  };
}

/** One batch response for two consumers of the same records (the fan-out and the audit trail). */
export function mergeBatchResponses(...responses: DynamoDBBatchResponse[]): DynamoDBBatchResponse {
  const ids = new Set(responses.flatMap((r) => r.batchItemFailures.map((f) => f.itemIdentifier)));
  return { batchItemFailures: [...ids].map((itemIdentifier) => ({ itemIdentifier })) };
}
