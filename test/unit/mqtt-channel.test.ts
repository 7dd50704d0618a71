/**
 * The MQTT delivery channel's own rules: the topics an event goes to, the BSON payload (dates as
 * BSON dates, EventDataBsonBase64 kept as a string), the 128 KB limit, and retries. The publisher
 * stands in for the IoT data plane (an AWS service), recording what it is given.
 */
import { deserialize, serialize } from 'bson';
import { describe, expect, it } from 'vitest';
import { createLogger } from '#shared/logger.ts';
import { loadConfig } from '#shared/config.ts';
import { grantedQos, mqttTopicsOf } from '#shared/live/mqtt/auth.ts';
import { MAX_MQTT_MESSAGE_BYTES, MQTT_PUBLISH_ATTEMPTS, mqttPayload, publishToMqtt, type MqttPublisher } from '#shared/live/mqtt/mqtt-channel.ts';
import type { ChannelEvent } from '#shared/live/topics.ts';

const logger = createLogger(loadConfig({ GATEHOUSE_LOG_LEVEL: 'SILENT' }));
const I1 = 'a'.repeat(24);
const I2 = 'b'.repeat(24);
const O1 = 'c'.repeat(24);
const O2 = 'd'.repeat(24);

/** Records publishes; fails the first `failures` attempts of each topic in `failing`. */
class RecordingPublisher implements MqttPublisher {
  readonly published: Array<{ topic: string; payload: Uint8Array }> = [];
  readonly attempts = new Map<string, number>();
  constructor(
    private readonly failing: ReadonlySet<string> = new Set(),
    private readonly failures = Infinity,
  ) {}
  async publish(topic: string, payload: Uint8Array): Promise<void> {
    const n = (this.attempts.get(topic) ?? 0) + 1;
    this.attempts.set(topic, n);
    if (this.failing.has(topic) && n <= this.failures) throw new Error('ServiceUnavailable');
    this.published.push({ topic, payload });
  }
}

const event = (record: number, rendered: Record<string, unknown>, linked: string[] = []): ChannelEvent => ({
  record,
  key: String(rendered.Key ?? record),
  instances: [I1, I2],
  linkedObjectKeys: new Set(linked),
  rendered,
});

describe('MQTT channel', () => {
  it('publishes to /<i>/$ for every instance of the chain and /<i>/<object> for every related object', () => {
    expect(mqttTopicsOf([I1, I2], new Set([O1, O2])).sort()).toEqual(
      [`/${I1}/$`, `/${I2}/$`, `/${I1}/${O1}`, `/${I1}/${O2}`, `/${I2}/${O1}`, `/${I2}/${O2}`].sort(),
    );
    expect(mqttTopicsOf([I1], new Set())).toEqual([`/${I1}/$`]);
  });

  it('grants QoS 0 and 1 as asked and 2 as 1', () => {
    expect([0, 1, 2].map(grantedQos)).toEqual([0, 1, 1]);
  });

  it('encodes the rendered event as raw BSON with dates as BSON dates and EventDataBsonBase64 as a string', () => {
    const data = Buffer.from(serialize({ N: 1 })).toString('base64');
    const rendered = {
      $type: 'Gatehouse.Model.EventMessageData, Gatehouse.Model',
      Key: 'k1',
      OccurredOn: '2025-01-01T10:00:00.000Z',
      PublishedOn: '2025-01-01T10:00:01.5Z',
      Message: 'not a date: 2025-01-01',
      EventDataBsonBase64: data,
      ObjectLinks: [{ $type: 'ObjectLinkItem', LinkedObjectKey: O1, Relation: 'Person' }],
      Priority: 3,
      Nothing: null,
    };
    const decoded = deserialize(mqttPayload(rendered));
    expect(decoded.OccurredOn).toEqual(new Date('2025-01-01T10:00:00.000Z'));
    expect(decoded.PublishedOn).toEqual(new Date('2025-01-01T10:00:01.500Z'));
    expect(decoded.EventDataBsonBase64).toBe(data);
    expect(decoded.Message).toBe('not a date: 2025-01-01');
    expect(decoded.ObjectLinks).toEqual(rendered.ObjectLinks);
    expect(decoded.Priority).toBe(3);
    expect(decoded.Nothing).toBeNull();
    expect(Object.keys(decoded)).toEqual(Object.keys(rendered));
  });

  it('publishes each event once per topic and skips one too large for IoT Core', async () => {
    const mqtt = new RecordingPublisher();
    const big = event(1, { Key: 'big', Message: 'x'.repeat(MAX_MQTT_MESSAGE_BYTES) });
    const failed = await publishToMqtt({ mqtt, logger }, [event(0, { Key: 'e0' }, [O1]), big]);
    expect(failed).toEqual(new Set());
    expect(mqtt.published.map((p) => p.topic).sort()).toEqual(mqttTopicsOf([I1, I2], new Set([O1])).sort());
    expect(mqtt.published.every((p) => deserialize(p.payload).Key === 'e0')).toBe(true);
  });

  it('retries a failing publish, and reports the record after the last attempt', async () => {
    const flaky = new RecordingPublisher(new Set([`/${I1}/$`]), 2);
    expect(await publishToMqtt({ mqtt: flaky, logger }, [event(0, { Key: 'e0' })], { retryDelayMs: 1 })).toEqual(new Set());
    expect(flaky.attempts.get(`/${I1}/$`)).toBe(3);
    expect(flaky.published.map((p) => p.topic).sort()).toEqual([`/${I1}/$`, `/${I2}/$`].sort());

    const down = new RecordingPublisher(new Set([`/${I2}/$`]));
    const failed = await publishToMqtt({ mqtt: down, logger }, [event(0, { Key: 'e0' }), event(5, { Key: 'e5' })], { retryDelayMs: 1 });
    expect(failed).toEqual(new Set([0, 5]));
    expect(down.attempts.get(`/${I2}/$`)).toBe(2 * MQTT_PUBLISH_ATTEMPTS);
  });
});
