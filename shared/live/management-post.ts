/**
 * The Management API's `POST /@connections/{connectionId}` through the SDK client, in a module of
 * its own: notifier.ts loads it with the first message sent, so a fan-out batch that reaches no
 * WebSocket client (most of them carry no subscriber) never reads the client's code. Its classes
 * are imported by name: esbuild cannot tree-shake a package reached by `import()` itself.
 */
import { ApiGatewayManagementApiClient, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { endpointClientOptions } from './endpoint-client.ts';
import type { PostOutcome } from './notifier.ts';

/** Posts bytes to one connection of the endpoint; `gone` and `too-large` are outcomes, not errors. */
export function managementPoster(opts: { endpoint: string; region: string }): (connectionId: string, data: Uint8Array) => Promise<PostOutcome> {
  const client = new ApiGatewayManagementApiClient(endpointClientOptions(opts));
  return async (connectionId, data) => {
    try {
      await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: data }));
      return 'sent';
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'GoneException') return 'gone';
      if (name === 'PayloadTooLargeException') return 'too-large';
      throw err;
    }
  };
}
