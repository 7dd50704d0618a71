/**
 * Sends messages to WebSocket clients through the API Gateway Management API
 * (`POST /@connections/{connectionId}`) and closes them (`DELETE`). Locally the endpoint is the runtime's own HTTP server,
 * which serves the same path, so this code does not change between the laptop and AWS. The SDK
 * client (management-post.ts) is loaded with the first message.
 */
import { onFirstUse } from '../../first-use.ts';
import { stringifyJson } from '../../json.ts';
import type { PostOutcome } from './management-post.ts';
import type { ServerMessage } from './protocol.ts';

export interface ConnectionNotifier {
  post(connectionId: string, message: ServerMessage): Promise<PostOutcome>;
  /**
   * Closes a connection (the Management API's `DELETE /@connections/{id}`): what ends a revoked
   * user's feed. A connection already gone is not an error.
   */
  close(connectionId: string): Promise<void>;
}

/** A notifier for one Management API endpoint. Create once per execution environment. */
export function createManagementNotifier(opts: { endpoint: string; region: string }): ConnectionNotifier {
  // Checked now, so a bad endpoint fails at start, not with the first message.
  if (!URL.canParse(opts.endpoint)) throw new Error(`Invalid configuration: the Management API endpoint is not a URL: ${opts.endpoint}`);
  const client = onFirstUse(() => import('./management-post.ts').then((m) => ({ post: m.managementPoster(opts), close: m.managementCloser(opts) })));
  return {
    async post(connectionId, message) {
      return (await client()).post(connectionId, Buffer.from(stringifyJson(message)));
    },
    async close(connectionId) {
      await (await client()).close(connectionId);
    },
  };
}
