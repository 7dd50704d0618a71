/**
 * Publishes MQTT messages through the IoT data plane's `Publish` call (`POST /topics/{topic}?qos=1`).
 * Locally the runtime serves the same call and hands the payload to its broker, so this code only
 * changes its endpoint between the laptop and AWS. Only the fan-out imports this module, and it
 * loads the SDK client on first use: functions that never publish MQTT do not bundle it.
 */
import type { MqttPublisher } from './mqtt-channel.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * A publisher for one IoT data endpoint (`https://<prefix>-ats.iot.<region>.amazonaws.com`, or
 * the local runtime's URL). Create once per execution environment.
 */
export function createIotPublisher(opts: { endpoint: string; region: string }): MqttPublisher {
  const local = LOOPBACK.has(new URL(opts.endpoint).hostname);
  let client: Promise<{ send: (payload: Uint8Array, topic: string) => Promise<unknown> }> | undefined;
  const load = async () => {
    const sdk = await import('@aws-sdk/client-iot-data-plane');
    const c = new sdk.IoTDataPlaneClient({
      region: opts.region,
      endpoint: opts.endpoint,
      // The local runtime does not check signatures; these never leave the machine.
      ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    });
    return { send: (payload: Uint8Array, topic: string) => c.send(new sdk.PublishCommand({ topic, qos: 1, payload })) };
  };
  return {
    async publish(topic, payload) {
      client ??= load();
      client.catch(() => (client = undefined));
      await (await client).send(payload, topic);
    },
  };
}
