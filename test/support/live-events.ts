/**
 * Live-event fixtures shared by the integration, reliability and e2e tests of the live feed.
 */
import { randomBytes } from 'node:crypto';
import type { EventWrite } from '#shared/db/events-repo.ts';

/** A live-only event (as a NonLogging event type's) in `instanceKey`, relating to `linked`. */
export function liveEvent(instanceKey: string, linked: readonly string[] = []): EventWrite {
  const key = randomBytes(12).toString('hex');
  const now = new Date().toISOString();
  const doc = {
    $type: 'EventMessageData',
    Key: key,
    InFolderKey: instanceKey,
    MessageShort: `test ${key}`,
    ObjectLinks: linked.map((k) => ({ $type: 'ObjectLinkItem', LinkedObjectKey: k, Relation: 'Reader' })),
  };
  return {
    event: { key, collection: 'events', type: 'EventMessageData', folder: instanceKey, path: [instanceKey], instances: [instanceKey], version: 1, doc },
    occurredOn: now,
    relatedKeys: [...linked],
    summary: { EventKey: key, EventTypeKey: '', AppKey: '', OccurredOn: now, PublishedOn: now, Priority: 0, MessageShort: doc.MessageShort },
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
  };
}
