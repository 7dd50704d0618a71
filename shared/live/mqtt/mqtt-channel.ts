/**
 * The MQTT delivery channel of the fan-out: each new event is published once per topic whose
 * subscribers receive it (`/<i>/$` for every instance of the event's chain, `/<i>/<object>` for
 * every related object), as raw BSON of the EventMessageData the API returns. The broker (IoT
 * Core in AWS, `aedes` locally) fans each message out to its subscribers and applies the scope
 * the authorizer granted, so this channel needs no subscriber lookups.
 *
 * Publishing goes through an {@link MqttPublisher} (`publisher.ts`: the IoT data plane's
 * `Publish` call, which the local runtime serves too). The BSON is written by ../../bson-writer.ts.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { encodeBson } from '../../bson-writer.ts';
import type { ChannelEvent } from '../topics.ts';
import { mqttTopicsOf } from './auth.ts';

/** IoT Core's message size limit. */
export const MAX_MQTT_MESSAGE_BYTES = 128 * 1024;
/** Attempts per publish before the record is reported failed (the stream retries it). */
export const MQTT_PUBLISH_ATTEMPTS = 4;
/**
 * How many publishes run at once. A publish is an HTTPS round trip that mostly waits, and an event
 * goes to several topics, so this is well above the WebSocket's 16: the stream batch (and so the
 * next batch of the JSON WebSocket channel) waits for the slowest channel. With 16 at once the
 * WebSocket fan-out's latency grew several times over; `npm run bench -- --only fanout` measures it.
 */
const PUBLISH_CONCURRENCY = 64;

/** Publishes one MQTT message (QoS 1 to the broker). */
export interface MqttPublisher {
  publish(topic: string, payload: Uint8Array): Promise<void>;
  /**
   * Disconnects a client (IoT's `DeleteConnection`): what ends a revoked user's MQTT feed in AWS
   * before the authorizer's next refresh. A client not connected is not an error. Absent where the
   * broker ends revoked clients itself (the local runtime's broker re-checks its clients).
   */
  disconnect?(clientId: string): Promise<void>;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
/** Base64 of the event's own BSON data: kept as the string the API returns. */
const KEPT_AS_STRING = new Set(['EventDataBsonBase64']);

/** The event as BSON values: ISO date-time strings become BSON dates (as the original service sends them). */
function bsonReady(value: unknown, key?: string): unknown {
  if (typeof value === 'string') {
    if (key !== undefined && KEPT_AS_STRING.has(key)) return value;
    if (ISO_DATE.test(value)) {
      const d = new Date(value);
      return Number.isNaN(d.getTime()) ? value : d;
    }
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => bsonReady(v));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bsonReady(v, k)]));
  }
  return value;
}

/** The MQTT payload of an event: raw BSON of the rendered EventMessageData. */
export function mqttPayload(rendered: Readonly<Record<string, unknown>>): Uint8Array {
  return encodeBson(bsonReady(rendered) as Record<string, unknown>);
}

/**
 * Publishes a batch's events. Returns the records whose publishes still failed after
 * {@link MQTT_PUBLISH_ATTEMPTS} (the stream retries them, so delivery is at least once). An
 * event above 128 KB is skipped with a warning: IoT Core would refuse it, and retrying cannot
 * make it fit (the JSON WebSocket skips its too-large messages the same way).
 */
export async function publishToMqtt(
  deps: { readonly mqtt: MqttPublisher; readonly logger: Logger },
  events: readonly ChannelEvent[],
  opts: { readonly retryDelayMs?: number } = {},
): Promise<Set<number>> {
  const failed = new Set<number>();
  const jobs: Array<{ record: number; key: string; topic: string; payload: Uint8Array }> = [];
  for (const e of events) {
    const payload = mqttPayload(e.rendered);
    if (payload.byteLength > MAX_MQTT_MESSAGE_BYTES) {
      deps.logger.warn('fan-out: event too large for an MQTT message', { event: e.key, bytes: payload.byteLength });
      continue;
    }
    for (const topic of mqttTopicsOf(e.instances, e.linkedObjectKeys)) jobs.push({ record: e.record, key: e.key, topic, payload });
  }
  const delay = opts.retryDelayMs ?? 50;
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      if (failed.has(job.record)) continue;
      for (let attempt = 1; ; attempt++) {
        try {
          await deps.mqtt.publish(job.topic, job.payload);
          break;
        } catch (err) {
          if (attempt >= MQTT_PUBLISH_ATTEMPTS) {
            deps.logger.error('fan-out: MQTT publish failed', { event: job.key, topic: job.topic, error: (err as Error).message });
            failed.add(job.record);
            break;
          }
          await new Promise((r) => setTimeout(r, delay * 2 ** (attempt - 1)));
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PUBLISH_CONCURRENCY, jobs.length) }, worker));
  return failed;
}
