/**
 * Sends messages to WebSocket clients through the API Gateway Management API
 * (`POST /@connections/{connectionId}`). Locally the endpoint is the runtime's own HTTP server,
 * which serves the same path, so this code does not change between the laptop and AWS.
 */
import { stringifyJson } from '../json.ts';
import {
  ApiGatewayManagementApiClient,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import type { ServerMessage } from './protocol.ts';

/** `gone`: the client disconnected (410); `too-large`: the message exceeds 128 KB. */
export type PostOutcome = 'sent' | 'gone' | 'too-large';

export interface ConnectionNotifier {
  post(connectionId: string, message: ServerMessage): Promise<PostOutcome>;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** A notifier for one Management API endpoint. Create once per execution environment. */
export function createManagementNotifier(opts: { endpoint: string; region: string }): ConnectionNotifier {
  const local = LOOPBACK.has(new URL(opts.endpoint).hostname);
  const client = new ApiGatewayManagementApiClient({
    region: opts.region,
    endpoint: opts.endpoint,
    // The local runtime does not check signatures; these never leave the machine.
    ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
  return {
    async post(connectionId, message) {
      try {
        await client.send(
          new PostToConnectionCommand({ ConnectionId: connectionId, Data: Buffer.from(stringifyJson(message)) }),
        );
        return 'sent';
      } catch (err) {
        const name = (err as { name?: string }).name;
        if (name === 'GoneException') return 'gone';
        if (name === 'PayloadTooLargeException') return 'too-large';
        throw err;
      }
    },
  };
}
