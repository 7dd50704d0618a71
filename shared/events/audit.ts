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
 * The system app and its event types are fixed, documented keys (they are not stored objects):
 *
 * | what           | Key                        | Moniker (Namespace `Gatehouse.System`) |
 * | -------------- | -------------------------- | -------------------------------------- |
 * | system app     | `000000000000000000000001` | `Gatehouse`                            |
 * | object created | `000000000000000000000002` | `ObjectCreated`                        |
 * | object updated | `000000000000000000000003` | `ObjectUpdated`                        |
 * | object deleted | `000000000000000000000004` | `ObjectDeleted`                        |
 */
import { createHash } from 'node:crypto';
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Config } from '../config.ts';
import { encodeBson } from '../bson-writer.ts';
import type { Db } from '../db/client.ts';
import { EVENTS_COLLECTION, objectChangeFromStreamRecord, putEvent, type EventWrite, type ObjectChange } from '../db/events-repo.ts';
import {
  EVENT_TYPES_COLLECTION,
  alarmMembers,
  deleteAlarmLink,
  deleteAlarmLinkItems,
  eventTypeWithAlarms,
} from '../db/eventtypes-repo.ts';
import { listCollection } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { deleteObject } from '../db/object-writes.ts';
import type { Placement } from '../model/placement.ts';
import { eventTypeClaims } from './event-type-body.ts';
import { fillTemplate } from './posting.ts';
import { eventWrite } from './publish.ts';
import { appOf, canonicalHref } from './render.ts';
import { SYSTEM_APP_KEY, SYSTEM_NAMESPACE } from './system-app.ts';

export { SYSTEM_APP_KEY, SYSTEM_NAMESPACE };

/** Collections whose changes are not audited: events (an audit event would audit itself). */
const NOT_AUDITED: ReadonlySet<string> = new Set([EVENTS_COLLECTION]);

/** Records handled at once. */
const CONCURRENCY = 16;

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
        await recordChange(deps, change);
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

/** What recording an audit event needs (the stream handler, {@link auditEventsFromStream}, is given it). */
export interface AuditDeps {
  readonly db: Db;
  readonly config: Pick<Config, 'eventRetentionDays'>;
  readonly now: () => Date;
  readonly logger: Pick<Logger, 'error' | 'warn'>;
}

export type ChangeKind = ObjectChange['kind'];

export interface SystemEventType {
  readonly Key: string;
  readonly Nickname: string;
  readonly Priority: number;
  readonly MessageTemplateShort: string;
  readonly MessageTemplateLong: string;
}

/** The system app's event types, by kind of change. */
export const SYSTEM_EVENT_TYPES: Readonly<Record<ChangeKind, SystemEventType>> = Object.freeze({
  created: {
    Key: '000000000000000000000002',
    Nickname: 'ObjectCreated',
    Priority: 0,
    MessageTemplateShort: '{Type} {CommonName} created',
    MessageTemplateLong: '{Type} "{CommonName}" ({ObjectKey}) was created in folder {FolderKey}.',
  },
  updated: {
    Key: '000000000000000000000003',
    Nickname: 'ObjectUpdated',
    Priority: 0,
    MessageTemplateShort: '{Type} {CommonName} updated',
    MessageTemplateLong: '{Type} "{CommonName}" ({ObjectKey}) was updated to version {ConcurrencyVersion}.',
  },
  deleted: {
    Key: '000000000000000000000004',
    Nickname: 'ObjectDeleted',
    Priority: 0,
    MessageTemplateShort: '{Type} {CommonName} deleted',
    MessageTemplateLong: '{Type} "{CommonName}" ({ObjectKey}) was deleted from folder {FolderKey}.',
  },
});

/** The audit event's key: the change's time (8 hex digits) and 16 hex digits of its eventID's hash. */
export function auditEventKey(change: Pick<ObjectChange, 'at' | 'eventId'>): string {
  const seconds = Math.max(0, Math.min(0xffffffff, Math.floor(change.at / 1000)));
  const hash = createHash('sha256').update(change.eventId).digest('hex').slice(0, 16);
  return seconds.toString(16).padStart(8, '0') + hash;
}

/** Where an object's audit events live: its folder (an event type's: its app's folder; a root instance: itself). */
export function auditPlacement(o: StoredObject): Placement {
  if (o.collection === EVENT_TYPES_COLLECTION) {
    const path = o.path.slice(0, -1);
    return { folder: appOf(o).appFolder, path, instances: [...o.instances] };
  }
  if (!o.folder) return { folder: o.key, path: [o.key], instances: [...o.instances] };
  // An instance lists itself last in `instances`; its events belong to the instance above it.
  const instances = o.collection === 'instances' ? o.instances.slice(0, -1) : [...o.instances];
  return { folder: o.folder, path: [...o.path], instances };
}

/** The audit event of an object change. */
export function auditEvent(change: ObjectChange, publishedOn: Date, retentionDays: number): EventWrite {
  const o = (change.after ?? change.before)!;
  const t = SYSTEM_EVENT_TYPES[change.kind];
  const placement = auditPlacement(o);
  const commonName = typeof o.doc.CommonName === 'string' && o.doc.CommonName !== '' ? o.doc.CommonName : null;
  const data = {
    Change: t.Nickname,
    ObjectKey: o.key,
    Collection: o.collection,
    Type: o.type,
    CommonName: commonName ?? o.key,
    ConcurrencyVersion: o.version,
    FolderKey: placement.folder,
  };
  const related = [{ Relation: 'Object', LinkedObjectKey: o.key, CommonName: commonName ?? undefined }];
  return eventWrite({
    key: auditEventKey(change),
    placement,
    appKey: SYSTEM_APP_KEY,
    eventTypeKey: t.Key,
    eventTypeMoniker: { Namespace: SYSTEM_NAMESPACE, Nickname: t.Nickname },
    occurredOn: new Date(change.at),
    publishedOn,
    priority: t.Priority,
    requiresAcknowledgement: false,
    messageLong: fillTemplate(t.MessageTemplateLong, data, related),
    messageShort: fillTemplate(t.MessageTemplateShort, data, related),
    objectLinks: [
      { $type: 'ObjectLinkItem', Href: canonicalHref(o), LinkedObjectKey: o.key, CommonName: commonName, Relation: 'Object', MetaDataBson: null },
    ],
    eventDataBsonBase64: Buffer.from(encodeBson(data)).toString('base64'),
    retentionDays,
  });
}

/** Removes what a deleted alarm definition or app leaves behind (links, event types). */
async function cascade(db: Db, change: ObjectChange): Promise<void> {
  const o = change.before;
  if (change.kind !== 'deleted' || !o) return;
  if (o.collection === 'alarmdefinitions') {
    const members = await alarmMembers(db, o.key);
    await Promise.all(members.map((t) => deleteAlarmLink(db, o.key, t)));
  }
  if (o.collection === 'apps') {
    let after: string | undefined;
    do {
      const page = await listCollection(db, o.key, EVENT_TYPES_COLLECTION, 100, after);
      for (const t of page.items) {
        const rec = await eventTypeWithAlarms(db, t.key);
        if (rec) await deleteObject(db, rec.type, eventTypeClaims(rec.type.folder, rec.type.doc), deleteAlarmLinkItems(db, rec.type.key, rec.alarmKeys));
      }
      after = page.nextStart;
    } while (after);
  }
}

/** Records one object change: its audit event (a conditional put: a retried batch writes it once), then the cascade. */
export async function recordChange(deps: AuditDeps, change: ObjectChange): Promise<void> {
  await putEvent(deps.db, auditEvent(change, deps.now(), deps.config.eventRetentionDays), true);
  await cascade(deps.db, change);
}
