/**
 * Publishes MQTT messages through the IoT data plane's `Publish` call (`POST /topics/{topic}?qos=1`).
 * Locally the runtime serves the same call and hands the payload to its broker, so this code only
 * changes its endpoint between the laptop and AWS. Only the fan-out imports this module, so
 * functions that never publish MQTT do not bundle the SDK client; it is created on first use.
 * Its classes are imported by name, not loaded with `import()`: esbuild cannot tree-shake a
 * package reached by a dynamic import, so that form bundled the whole client.
 */
import { IoTDataPlaneClient, PublishCommand } from '@aws-sdk/client-iot-data-plane';
import type { MqttPublisher } from './mqtt-channel.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * A publisher for one IoT data endpoint (`https://<prefix>-ats.iot.<region>.amazonaws.com`, or
 * the local runtime's URL). Create once per execution environment.
 */
export function createIotPublisher(opts: { endpoint: string; region: string }): MqttPublisher {
  const local = LOOPBACK.has(new URL(opts.endpoint).hostname);
  let client: IoTDataPlaneClient | undefined;
  return {
    async publish(topic, payload) {
      client ??= new IoTDataPlaneClient({
        region: opts.region,
        endpoint: opts.endpoint,
        // The local runtime does not check signatures; these never leave the machine.
        ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
      });
      await client.send(new PublishCommand({ topic, qos: 1, payload }));
    },
  };
}
