/**
 * The IoT data plane's `Publish` through the SDK client, in a module of its own: mqtt-publisher.ts
 * loads it with the first MQTT message, so a fan-out batch that publishes nothing never reads the
 * client's code. Its classes are imported by name: esbuild cannot tree-shake a package reached by
 * `import()` itself, so that form bundled the whole client.
 */
import { IoTDataPlaneClient, PublishCommand } from '@aws-sdk/client-iot-data-plane';
import { endpointClientOptions } from './endpoint-client.ts';

/** Publishes at QoS 1 to one IoT data endpoint (or the local runtime's). */
export function iotPublish(opts: { endpoint: string; region: string }): (topic: string, payload: Uint8Array) => Promise<void> {
  const client = new IoTDataPlaneClient(endpointClientOptions(opts));
  return async (topic, payload) => {
    await client.send(new PublishCommand({ topic, qos: 1, payload }));
  };
}
