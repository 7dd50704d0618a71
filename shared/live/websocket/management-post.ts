/**
 * The Management API's `POST` and `DELETE /@connections/{connectionId}` through the SDK client, in a
 * module of its own: connection-notifier.ts loads it with the first message sent or connection closed, so a fan-out batch that reaches no
 * WebSocket client (most of them carry no subscriber) never reads the client's code. Its classes
 * are imported by name: esbuild cannot tree-shake a package reached by `import()` itself.
 */
import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { endpointClientOptions } from '../endpoint-client.ts';

/** `gone`: the client disconnected (410); `too-large`: the message exceeds 128 KB. */
export type PostOutcome = 'sent' | 'gone' | 'too-large';

/** Posts bytes to one connection of the endpoint; `gone` and `too-large` are outcomes, not errors. */
export function managementPoster(opts: { endpoint: string; region: string }): (connectionId: string, data: Uint8Array) => Promise<PostOutcome> {
  const client = clientOf(opts);
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

/** Closes one connection of the endpoint (`DELETE /@connections/{id}`); one already gone (410) is not an error. */
export function managementCloser(opts: { endpoint: string; region: string }): (connectionId: string) => Promise<void> {
  const client = clientOf(opts);
  return async (connectionId) => {
    try {
      await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
    } catch (err) {
      if ((err as { name?: string }).name !== 'GoneException') throw err;
    }
  };
}

const clients = new Map<string, ApiGatewayManagementApiClient>();

/** One SDK client per endpoint, shared by the poster and the closer. */
function clientOf(opts: { endpoint: string; region: string }): ApiGatewayManagementApiClient {
  let c = clients.get(opts.endpoint);
  if (!c) clients.set(opts.endpoint, (c = new ApiGatewayManagementApiClient(endpointClientOptions(opts))));
  return c;
}
