/**
 * The audit event of one object change, and what a deleted alarm definition or app leaves behind
 * (see audit.ts, which loads this module with the first object change of a batch: the cascades are
 * not read by a fan-out whose batches carry only events and connections).
 */
import { createHash } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Config } from '../config.ts';
import { encodeBson } from '../bson-writer.ts';
import type { Db } from '../db/client.ts';
import { putEvent, type EventWrite, type ObjectChange } from '../db/events-repo.ts';
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

/** What recording an audit event needs (the stream handler, audit.ts, is given it). */
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
