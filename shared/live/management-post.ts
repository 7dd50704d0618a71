/**
 * The Management API's `POST /@connections/{connectionId}` through the SDK client, in a module of
 * its own: notifier.ts loads it with the first message sent, so a fan-out batch that reaches no
 * WebSocket client (most of them carry no subscriber) never reads the client's code. Its classes
 * are imported by name: esbuild cannot tree-shake a package reached by `import()` itself.
 */
import { ApiGatewayManagementApiClient, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import type { PostOutcome } from './notifier.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Posts bytes to one connection of the endpoint; `gone` and `too-large` are outcomes, not errors. */
export function managementPoster(opts: { endpoint: string; region: string }): (connectionId: string, data: Uint8Array) => Promise<PostOutcome> {
  const local = LOOPBACK.has(new URL(opts.endpoint).hostname);
  const client = new ApiGatewayManagementApiClient({
    region: opts.region,
    endpoint: opts.endpoint,
    // The local runtime does not check signatures; these never leave the machine.
    ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
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
