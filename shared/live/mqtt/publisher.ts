/**
 * Publishes MQTT messages through the IoT data plane's `Publish` call (`POST /topics/{topic}?qos=1`).
 * Locally the runtime serves the same call and hands the payload to its broker, so this code only
 * changes its endpoint between the laptop and AWS. Only the fan-out imports this module, and the
 * SDK client (iot-publish.ts) is loaded with the first publish.
 */
import { onFirstUse } from '../../first-use.ts';
import type { MqttPublisher } from './mqtt-channel.ts';

/**
 * A publisher for one IoT data endpoint (`https://<prefix>-ats.iot.<region>.amazonaws.com`, or
 * the local runtime's URL). Create once per execution environment.
 */
export function createIotPublisher(opts: { endpoint: string; region: string }): MqttPublisher {
  // Checked now, so a bad endpoint fails at start, not with the first publish.
  if (!URL.canParse(opts.endpoint)) throw new Error(`Invalid configuration: the IoT data endpoint is not a URL: ${opts.endpoint}`);
  const client = onFirstUse(() => import('./iot-publish.ts').then((m) => ({ publish: m.iotPublish(opts), disconnect: m.iotDisconnect(opts) })));
  return {
    async publish(topic, payload) {
      await (await client()).publish(topic, payload);
    },
    async disconnect(clientId) {
      await (await client()).disconnect(clientId);
    },
  };
}
