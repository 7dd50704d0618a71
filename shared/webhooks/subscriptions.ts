/**
 * Webhook subscriptions: the body a client sends, how a subscription is shown, and which events
 * it receives. Topics are the live feed's (`/<instance>/$`, `/<instance>/<object>`) with the live
 * feed's scope rule (`inScope` in `shared/live/connections.ts`), applied to the subscription's own
 * instance: a subscription receives only events of its instance's subtree.
 */
import { ApiError, badRequest, forbidden } from '../errors.ts';
import { SYSTEM_APP_KEY } from '../events/system-app.ts';
import { isObjectKey } from '../db/keys.ts';
import type { StoredWebhook, WebhookSettings } from '../db/webhooks-repo.ts';
import type { Db } from '../db/client.ts';
import { inScope } from '../live/connections.ts';
import { parseTopic, subscriptionMatches } from '../live/topics.ts';
import { typeNameOf, typeTag } from '../model/types.ts';
import { urlProblem } from './ssrf.ts';

export const WEBHOOK_TYPE = 'WebhookSubscriptionInfo';
/** Most topics, app keys or event type keys one subscription may list. */
export const MAX_LIST = 100;

const invalid = (message: string) => badRequest('ValidationFailed', message);
export const invalidUrl = (message: string): ApiError => badRequest('InvalidUrl', message);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function keyList(body: Record<string, unknown>, field: string): string[] {
  const v = body[field];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.length > MAX_LIST || !v.every((k) => typeof k === 'string' && isObjectKey(k.toLowerCase()))) {
    throw invalid(`${field} must be a list of at most ${MAX_LIST} object keys.`);
  }
  return [...new Set(v.map((k: string) => k.toLowerCase()))];
}

/**
 * The settings a body asks for, validated (URL, topics' shape and scope). `instanceKey` is the
 * instance that holds the subscription.
 */
export async function settingsFrom(
  db: Db,
  body: unknown,
  instanceKey: string,
  allowLoopback: boolean,
): Promise<WebhookSettings> {
  if (!isRecord(body)) throw invalid('The body must be a JSON object.');
  const type = typeNameOf(body.$type);
  if (body.$type !== undefined && type !== WEBHOOK_TYPE) throw badRequest('WrongType', `The body must be a ${WEBHOOK_TYPE}.`);
  const name = body.CommonName ?? '';
  if (typeof name !== 'string' || name.length > 256) throw invalid('CommonName must be a string of at most 256 characters.');
  if (typeof body.Url !== 'string' || body.Url.length === 0 || body.Url.length > 2048) throw invalidUrl('Url is required (at most 2048 characters).');
  const problem = urlProblem(body.Url, allowLoopback);
  if (problem) throw invalidUrl(problem);
  const enabled = body.Enabled ?? true;
  if (typeof enabled !== 'boolean') throw invalid('Enabled must be true or false.');
  const audit = body.IncludeAuditEvents ?? true;
  if (typeof audit !== 'boolean') throw invalid('IncludeAuditEvents must be true or false.');
  const min = body.MinimumPriority ?? null;
  if (min !== null && (typeof min !== 'number' || !Number.isInteger(min) || min < 0)) throw invalid('MinimumPriority must be a whole number, 0 or more.');

  const rawTopics = body.Topics ?? [`/${instanceKey}/$`];
  if (!Array.isArray(rawTopics) || rawTopics.length === 0 || rawTopics.length > MAX_LIST) {
    throw invalid(`Topics must list 1 to ${MAX_LIST} topics.`);
  }
  const topics: string[] = [];
  for (const t of rawTopics) {
    const topic = typeof t === 'string' ? parseTopic(t) : undefined;
    if (!topic) throw badRequest('InvalidTopic', 'A topic is "/<instance_key>/$" or "/<instance_key>/<object_key>".');
    // The live feed's scope rule, for the subscription's instance (itself in the caller's scope).
    if (!(await inScope({ db }, { instanceKey }, topic.instanceKey))) throw forbidden('The topic is outside the scope of the instance.');
    if (!topics.includes(topic.name)) topics.push(topic.name);
  }
  return {
    CommonName: name,
    Url: body.Url,
    Enabled: enabled,
    Topics: topics,
    AppKeys: keyList(body, 'AppKeys'),
    EventTypeKeys: keyList(body, 'EventTypeKeys'),
    MinimumPriority: min as number | null,
    IncludeAuditEvents: audit,
  };
}

export const webhookHref = (instanceKey: string, key: string): string => `/api/f/${instanceKey}/webhooks/${key}`;

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
