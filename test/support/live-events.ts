/**
 * Live-event fixtures shared by the integration, reliability and e2e tests of the live feed.
 */
import { randomBytes } from 'node:crypto';
import type { EventWrite } from '#shared/db/events-repo.ts';

/**
 * A live-only event (as a NonLogging event type's) in `instance`, or in the last of `instances`
 * (root first), relating to `linked`.
 */
export function liveEvent(instance: string | readonly string[], linked: readonly string[] = []): EventWrite {
  const instances = typeof instance === 'string' ? [instance] : [...instance];
  const folder = instances[instances.length - 1]!;
  const key = randomBytes(12).toString('hex');
  const now = new Date().toISOString();
  const doc = {
    $type: 'EventMessageData',
    Key: key,
    InFolderKey: folder,
    MessageShort: `test ${key}`,
    ObjectLinks: linked.map((k) => ({ $type: 'ObjectLinkItem', LinkedObjectKey: k, Relation: 'Reader' })),
  };
  return {
    event: { key, collection: 'events', type: 'EventMessageData', folder, path: [folder], instances, version: 1, doc },
    occurredOn: now,
    relatedKeys: [...linked],
    summary: { EventKey: key, EventTypeKey: '', AppKey: '', OccurredOn: now, PublishedOn: now, Priority: 0, MessageShort: doc.MessageShort },
    expiresAt: Math.floor(Date.now() / 1000) + 3600,
  };
}
