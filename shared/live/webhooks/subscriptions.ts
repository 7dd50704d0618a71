/**
 * Webhook subscriptions: how a subscription is shown, and which events it receives (the body a
 * client sends is read by settings.ts). Topics are the live feed's (`/<instance>/$`, `/<instance>/<object>`) with the live
 * feed's scope rule (`inScope` in `shared/live/topics.ts`), applied to the subscription's own
 * instance: a subscription receives only events of its instance's subtree.
 */
import { SYSTEM_APP_KEY } from '../../events/system-app.ts';
import type { StoredWebhook } from '../../db/webhooks-repo.ts';
import { parseTopic, subscriptionMatches } from '../topics.ts';
import { typeTag } from '../../model/type-tags.ts';

export const WEBHOOK_TYPE = 'WebhookSubscriptionInfo';

const webhookHref = (instanceKey: string, key: string): string => `/api/f/${instanceKey}/webhooks/${key}`;

const LINKS: ReadonlyArray<readonly [relation: string, href: string, text: string]> = [
  ['Deliveries', 'deliveries', 'Deliveries'],
  ['RotateSecret', 'rotatesecret', 'Rotate Secret'],
  ['Test', 'test', 'Test Delivery'],
  ['Replay', 'replay', 'Replay'],
];

/** A subscription as the API returns it; `secret` only on create and rotation. */
export function renderWebhook(w: StoredWebhook, ns: string, secret?: string): Record<string, unknown> {
  const s = w.settings;
  return {
    $type: typeTag(ns, WEBHOOK_TYPE),
    Key: w.key,
    Href: webhookHref(w.instanceKey, w.key),
    InFolderKey: w.instanceKey,
    InFolderHref: `/api/f/${w.instanceKey}`,
    CommonName: s.CommonName,
    Url: s.Url,
    Enabled: s.Enabled,
    Topics: [...s.Topics],
    AppKeys: [...s.AppKeys],
    EventTypeKeys: [...s.EventTypeKeys],
    MinimumPriority: s.MinimumPriority,
    IncludeAuditEvents: s.IncludeAuditEvents,
    ...(secret ? { Secret: secret } : {}),
    DisabledReason: w.disabledReason,
    LastDeliveryOn: w.lastDeliveryOn,
    LastFailureOn: w.lastFailureOn,
    ConcurrencyVersion: w.version,
    Links: LINKS.map(([relation, href, text]) => ({
      $type: typeTag(ns, 'Link'),
      Relation: relation,
      Anchor: { $type: typeTag(ns, 'Anchor'), Href: href, Text: text },
    })),
  };
}

/** What matching needs of an event. */
export interface MatchableEvent {
  /** The event's instance and its ancestors. */
  readonly instances: readonly string[];
  readonly linkedObjectKeys: ReadonlySet<string>;
  readonly appKey: string | undefined;
  readonly eventTypeKey: string | undefined;
  readonly priority: number;
}

/** The fields matching reads, from the EventMessageData (stored or rendered). */
export function matchable(doc: Readonly<Record<string, unknown>>, instances: readonly string[], linked: ReadonlySet<string>): MatchableEvent {
  const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : undefined);
  return {
    instances,
    linkedObjectKeys: linked,
    appKey: lower(doc.AppKey),
    eventTypeKey: lower(doc.EventTypeKey),
    priority: typeof doc.Priority === 'number' ? doc.Priority : 0,
  };
}

/**
 * Whether an enabled subscription receives an event: the event lies in the subscription's
 * instance subtree and one of its topics takes it (an instance topic of an instance in the
 * event's chain; an object topic when the event also relates to that object), and the filters let
 * it through.
 */
export function webhookReceives(w: StoredWebhook, e: MatchableEvent): boolean {
  const s = w.settings;
  if (!s.Enabled || !e.instances.includes(w.instanceKey)) return false;
  const topicTakes = s.Topics.some((name) => {
    const t = parseTopic(name);
    if (!t || !e.instances.includes(t.instanceKey)) return false;
    return subscriptionMatches({ objectKey: t.kind === 'object' ? t.objectKey : undefined }, e.linkedObjectKeys);
  });
  if (!topicTakes) return false;
  if (s.AppKeys.length > 0 && !(e.appKey && s.AppKeys.includes(e.appKey))) return false;
  if (s.EventTypeKeys.length > 0 && !(e.eventTypeKey && s.EventTypeKeys.includes(e.eventTypeKey))) return false;
  if (s.MinimumPriority !== null && e.priority < s.MinimumPriority) return false;
  if (!s.IncludeAuditEvents && e.appKey === SYSTEM_APP_KEY) return false;
  return true;
}
