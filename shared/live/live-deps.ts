/**
 * Dependencies of the `websocket` and `fanout` families: the core ones plus the client that
 * sends messages to WebSocket connections.
 */
import { createCoreDeps, type CoreDeps, type CoreDepsOverrides } from '../core-deps.ts';
import type { WebhookQueue } from './webhooks/queue.ts';
import type { MqttPublisher } from './mqtt/mqtt-channel.ts';
import { createManagementNotifier, type ConnectionNotifier } from './websocket/connection-notifier.ts';
import { subscriberCache, type SubscriberCache } from './websocket/subscriber-cache.ts';

export interface LiveDeps extends CoreDeps {
  /** Sends messages to WebSocket connections (API Gateway Management API). */
  readonly connections: ConnectionNotifier;
  /** Publishes to the MQTT broker (the fan-out passes one, see `mqtt/publisher.ts`); undefined elsewhere. */
  readonly mqtt: MqttPublisher | undefined;
  /** Queues webhook deliveries (the fan-out passes one: SQS in AWS, the table locally); undefined elsewhere. */
  readonly webhooks: WebhookQueue | undefined;
  /** The fan-out's WebSocket subscribers by instance (one per execution environment). */
  readonly subscribers: SubscriberCache;
}

export interface LiveDepsOverrides extends CoreDepsOverrides {
  readonly connections?: ConnectionNotifier;
  readonly mqtt?: MqttPublisher;
  readonly webhooks?: WebhookQueue;
  readonly subscribers?: SubscriberCache;
}

export function createLiveDeps(over: LiveDepsOverrides = {}): LiveDeps {
  const core = createCoreDeps(over);
  const endpoint = core.config.websocketManagementUrl;
  if (!over.connections && !endpoint) {
    throw new Error('Invalid configuration: GATEHOUSE_WEBSOCKET_MANAGEMENT_URL is required by the live event feed');
  }
  const connections = over.connections ?? createManagementNotifier({ endpoint: endpoint!, region: core.config.region });
  return { ...core, connections, mqtt: over.mqtt, webhooks: over.webhooks, subscribers: over.subscribers ?? subscriberCache };
}
