/**
 * The IoT data plane's `Publish` through the SDK client, in a module of its own: publisher.ts
 * loads it with the first MQTT message, so a fan-out batch that publishes nothing never reads the
 * client's code. Its classes are imported by name: esbuild cannot tree-shake a package reached by
 * `import()` itself, so that form bundled the whole client.
 */
import { DeleteConnectionCommand, IoTDataPlaneClient, PublishCommand } from '@aws-sdk/client-iot-data-plane';
import { endpointClientOptions } from '../endpoint-client.ts';

/** Publishes at QoS 1 to one IoT data endpoint (or the local runtime's). */
export function iotPublish(opts: { endpoint: string; region: string }): (topic: string, payload: Uint8Array) => Promise<void> {
  const client = clientOf(opts);
  return async (topic, payload) => {
    await client.send(new PublishCommand({ topic, qos: 1, payload }));
  };
}

/** Disconnects one client of the endpoint; one not connected (404) is not an error. */
export function iotDisconnect(opts: { endpoint: string; region: string }): (clientId: string) => Promise<void> {
  const client = clientOf(opts);
  return async (clientId) => {
    try {
      // A revoked client's persistent session (subscriptions, queued messages) goes too.
      await client.send(new DeleteConnectionCommand({ clientId, cleanSession: true }));
    } catch (err) {
      if ((err as { name?: string }).name !== 'ResourceNotFoundException') throw err;
    }
  };
}

const clients = new Map<string, IoTDataPlaneClient>();

/** One SDK client per endpoint, shared by publishing and disconnecting. */
function clientOf(opts: { endpoint: string; region: string }): IoTDataPlaneClient {
  let c = clients.get(opts.endpoint);
  if (!c) clients.set(opts.endpoint, (c = new IoTDataPlaneClient(endpointClientOptions(opts))));
  return c;
}
