/**
 * The fan-out: delivers each new event from the table's stream through every delivery channel.
 * The batch is decoded and rendered once (the EventMessageData as the API returns it), then
 * handed to each channel in parallel, so a slow or failing channel never delays another:
 *
 * - JSON WebSocket (here): the subscribers of each instance come from the per-environment cache
 *   (`websocket/subscriber-cache.ts`: read by one Query, kept current from the subscription records of the
 *   same stream, in stream order, and read again after at most a second); each matching
 *   subscription receives the event once;
 * - MQTT (`mqtt/mqtt-channel.ts`): one publish per (event, topic), the broker fans out;
 * - webhooks (`webhooks/webhook-channel.ts`): one queued delivery job per (event, subscription).
 *
 * The same pass ends a revoked user's WebSocket feeds: a user deleted, disabled, given a new
 * password, signed out everywhere or given another role (its object's record in the stream) has
 * its connections closed through the Management API and forgotten, and in AWS its MQTT clients
 * (recorded by the IoT authorizer) disconnected with IoT's DeleteConnection (see
 * {@link closeRevokedConnections}). The bound is the stream's own delay, the same locally and in
 * AWS (the local broker ends revoked MQTT clients itself, by re-checking them).
 */
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import {
  connectionsOfUser,
  deleteConnection,
  revokedUserFromStreamRecord,
  eventFromStreamRecord,
  subscriptionChangeFromStreamRecord,
  type StreamedEvent,
  type SubscriptionChange,
} from '../db/live-repo.ts';
import { mqttClientsOfUser } from '../db/mqtt-clients.ts';
import { renderEvent } from '../events/event-render.ts';
import type { LiveDeps } from './live-deps.ts';
import { publishToMqtt } from './mqtt/mqtt-channel.ts';
import { linkedObjectKeys, subscriptionMatches, type ChannelEvent } from './topics.ts';
import { queueWebhooks } from './webhooks/webhook-channel.ts';

/** How many PostToConnection calls run at once. */
const POST_CONCURRENCY = 16;

interface Delivery {
  readonly record: number;
  readonly connectionId: string;
  readonly topic: string;
  readonly event: StreamedEvent;
}

/**
 * Fans out a batch of stream records. A record whose subscribers could not be read or reached is
 * reported in `batchItemFailures` (by sequence number) so the event source mapping retries it;
 * a connection that is gone (410) is forgotten.
 */
export async function fanOut(deps: LiveDeps, records: readonly DynamoDBRecord[]): Promise<DynamoDBBatchResponse> {
  const events = records.map((r) => eventFromStreamRecord(r));
  const changes = records.map((r, i) => (events[i] ? undefined : subscriptionChangeFromStreamRecord(r)));

  // Subscribers receive the event as the API returns it (namespaced `$type`s, Key, Href, Links).
  const rendered = new Map<StreamedEvent, Record<string, unknown>>();
  for (const e of events) {
    if (!e) continue;
    rendered.set(
      e,
      renderEvent(
        { key: e.key, collection: 'events', type: 'EventMessageData', folder: e.folder, path: [], instances: e.instances, version: 1, doc: e.doc },
        deps.config.modelNamespace,
      ),
    );
  }
  const channelEvents: ChannelEvent[] = events.flatMap((e, record) =>
    e ? [{ record, key: e.key, instances: e.instances, linkedObjectKeys: linkedObjectKeys(e.doc), rendered: rendered.get(e)! }] : [],
  );

  const [revoked, json, mqtt, webhooks] = await Promise.all([
    closeRevokedConnections(deps, records),
    toWebSocketSubscribers(deps, events, changes, rendered),
    deps.mqtt ? publishToMqtt({ mqtt: deps.mqtt, logger: deps.logger }, channelEvents) : new Set<number>(),
    deps.webhooks ? queueWebhooks({ ...deps, queue: deps.webhooks }, channelEvents) : new Set<number>(),
  ]);
  const failed = new Set([...revoked, ...json, ...mqtt, ...webhooks]);
  return {
    batchItemFailures: [...failed]
      .sort((a, b) => a - b)
      .map((i) => ({ itemIdentifier: records[i]!.dynamodb?.SequenceNumber ?? '' })),
  };
}

/**
 * The JSON WebSocket channel: the records (indexes) that could not be delivered. Subscription
 * changes are applied to the cache in stream order, so each event goes to the subscribers of
 * its instances as of its place in the stream.
 */
async function toWebSocketSubscribers(
  deps: LiveDeps,
  events: ReadonlyArray<StreamedEvent | undefined>,
  changes: ReadonlyArray<SubscriptionChange | undefined>,
  rendered: ReadonlyMap<StreamedEvent, Record<string, unknown>>,
): Promise<Set<number>> {
  const failed = new Set<number>();

  const now = Math.floor(deps.now().getTime() / 1000);
  const instances = new Set(events.flatMap((e) => e?.instances ?? []));
  // What an unknown or stale instance needs is read (one Query each, in parallel) before any change
  // of this batch is applied: the read sees them all, and applying them again is harmless.
  const loading = deps.subscribers.load(deps.db, instances);
  // Without a read to wait for, the posts start in this turn, ahead of the other channels' work.
  const subscribers = loading instanceof Promise ? await loading : loading;

  const deliveries: Delivery[] = [];
  events.forEach((event, record) => {
    const change = changes[record];
    if (change) deps.subscribers.apply(deps.db, change);
    if (!event) return;
    const linked = linkedObjectKeys(event.doc);
    const seen = new Set<string>();
    for (const instance of new Set(event.instances)) {
      const subs = subscribers.of(instance, now);
      if (subs instanceof Error) {
        deps.logger.error('fan-out: reading subscribers failed', { instance, error: subs.message });
        failed.add(record);
        continue;
      }
      for (const sub of subs) {
        const once = `${sub.connectionId}#${sub.topic}`;
        if (seen.has(once) || !subscriptionMatches(sub, linked)) continue;
        seen.add(once);
        deliveries.push({ record, connectionId: sub.connectionId, topic: sub.topic, event });
      }
    }
  });

  const gone = new Set<string>();
  await forEachLimited(deliveries, POST_CONCURRENCY, async (d) => {
    if (gone.has(d.connectionId)) return;
    try {
      const outcome = await deps.connections.post(d.connectionId, { type: 'event', topic: d.topic, event: rendered.get(d.event) });
      if (outcome === 'gone') gone.add(d.connectionId);
      if (outcome === 'too-large') deps.logger.warn('fan-out: event too large for a WebSocket message', { event: d.event.key });
    } catch (err) {
      deps.logger.error('fan-out: sending failed', { event: d.event.key, error: (err as Error).message });
      failed.add(d.record);
    }
  });

  for (const id of gone) deps.subscribers.forgetConnection(deps.db, id);
  await Promise.all(
    [...gone].map((id) =>
      deleteConnection(deps.db, id).catch((err: unknown) => {
        // Its items expire with the connection's TTL anyway.
        deps.logger.warn('fan-out: forgetting a gone connection failed', { error: (err as Error).message });
      }),
    ),
  );

  return failed;
}

/**
 * Closes the WebSocket connections of every user whose sessions a record revokes (see
 * {@link revokedUserFromStreamRecord}) and deletes their items, so no event reaches them after the
 * close. Returns the records that could not be handled (retried: closing again is harmless).
 */
async function closeRevokedConnections(deps: LiveDeps, records: readonly DynamoDBRecord[]): Promise<Set<number>> {
  const failed = new Set<number>();
  const users = new Map<string, number[]>();
  records.forEach((r, i) => {
    const user = revokedUserFromStreamRecord(r);
    if (user) users.set(user, [...(users.get(user) ?? []), i]);
  });
  await Promise.all(
    [...users].map(async ([userKey, at]) => {
      try {
        const disconnect = deps.mqtt?.disconnect?.bind(deps.mqtt);
        const [ids, clients] = await Promise.all([
          connectionsOfUser(deps.db, userKey),
          disconnect ? mqttClientsOfUser(deps.db, userKey, Math.floor(deps.now().getTime() / 1000)) : [],
        ]);
        await Promise.all([
          forEachLimited(ids, POST_CONCURRENCY, async (id) => {
            deps.subscribers.forgetConnection(deps.db, id);
            await Promise.all([deps.connections.close(id), deleteConnection(deps.db, id)]);
          }),
          forEachLimited(clients, POST_CONCURRENCY, (clientId) => disconnect!(clientId)),
        ]);
        if (ids.length + clients.length > 0) {
          deps.logger.info('fan-out: closed the live connections of a revoked user', { userKey, connections: ids.length, mqttClients: clients.length });
        }
      } catch (err) {
        deps.logger.error('fan-out: closing a revoked user\'s connections failed', { userKey, error: (err as Error).message });
        for (const i of at) failed.add(i);
      }
    }),
  );
  return failed;
}

async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
