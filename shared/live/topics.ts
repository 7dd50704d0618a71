/**
 * Topics of the live event feed:
 *
 * - `/<instance_key>/$`: every event of the instance and of its sub-instances;
 * - `/<instance_key>/<object_key>`: the events of the instance (and its sub-instances) that
 *   relate to the object (`ObjectLinks[].LinkedObjectKey`).
 *
 * With them, what every channel shares: the scope rule ({@link inScope}), asked by the JSON
 * WebSocket (websocket/connections.ts), MQTT (mqtt/auth.ts) and webhook subscriptions
 * (webhooks/settings.ts), and the event the fan-out hands to each channel ({@link ChannelEvent}).
 * They live here, beside the channel folders, so that no channel imports another for them.
 */
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/client.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { instanceLineage } from '../db/live-repo.ts';

export type Topic =
  | { readonly kind: 'instance'; readonly name: string; readonly instanceKey: string }
  | { readonly kind: 'object'; readonly name: string; readonly instanceKey: string; readonly objectKey: string };

const ALL = '$';

/** The topic a string names, or undefined when it is not a topic. */
export function parseTopic(name: string): Topic | undefined {
  const parts = name.split('/');
  if (parts.length !== 3 || parts[0] !== '' || !isObjectKey(parts[1])) return undefined;
  const instanceKey = parts[1];
  if (parts[2] === ALL) return { kind: 'instance', name, instanceKey };
  if (isObjectKey(parts[2])) return { kind: 'object', name, instanceKey, objectKey: parts[2] };
  return undefined;
}

/** Keys of the objects an event relates to (`ObjectLinks[].LinkedObjectKey`). */
export function linkedObjectKeys(eventDoc: Readonly<Record<string, unknown>>): Set<string> {
  const keys = new Set<string>();
  const links = eventDoc.ObjectLinks;
  if (!Array.isArray(links)) return keys;
  for (const link of links) {
    const k = (link as { LinkedObjectKey?: unknown } | null)?.LinkedObjectKey;
    if (typeof k === 'string') keys.add(k);
  }
  return keys;
}

/**
 * Whether a subscription stored under one of the event's instances receives the event: an
 * instance topic always does; an object topic when the event relates to its object.
 */
export function subscriptionMatches(sub: { readonly objectKey: string | undefined }, linkedKeys: ReadonlySet<string>): boolean {
  return sub.objectKey === undefined || linkedKeys.has(sub.objectKey);
}

/**
 * The caller may watch its own instance and the instances below it. An instance that does not
 * exist is out of scope too, so a topic cannot probe which keys exist. Every live channel (the
 * JSON WebSocket, MQTT, webhook subscriptions) asks this one check.
 */
export async function inScope(deps: { readonly db: Db }, principal: Pick<Principal, 'instanceKey'>, instanceKey: string): Promise<boolean> {
  if (instanceKey === principal.instanceKey) return true;
  const lineage = await instanceLineage(deps.db, instanceKey);
  return lineage?.includes(principal.instanceKey) ?? false;
}

/** One event of the batch, decoded and rendered once by the fan-out. */
export interface ChannelEvent {
  /** Index of the stream record it came from. */
  readonly record: number;
  readonly key: string;
  readonly instances: readonly string[];
  readonly linkedObjectKeys: ReadonlySet<string>;
  /** The EventMessageData as the API returns it. */
  readonly rendered: Readonly<Record<string, unknown>>;
}
