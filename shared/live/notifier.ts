/**
 * Sends messages to WebSocket clients through the API Gateway Management API
 * (`POST /@connections/{connectionId}`). Locally the endpoint is the runtime's own HTTP server,
 * which serves the same path, so this code does not change between the laptop and AWS. The SDK
 * client (management-post.ts) is loaded with the first message.
 */
import { onFirstUse } from '../first-use.ts';
import { stringifyJson } from '../json.ts';
import type { ServerMessage } from './protocol.ts';

/** `gone`: the client disconnected (410); `too-large`: the message exceeds 128 KB. */
export type PostOutcome = 'sent' | 'gone' | 'too-large';

export interface ConnectionNotifier {
  post(connectionId: string, message: ServerMessage): Promise<PostOutcome>;
}

/** A notifier for one Management API endpoint. Create once per execution environment. */
export function createManagementNotifier(opts: { endpoint: string; region: string }): ConnectionNotifier {
  // Checked now, so a bad endpoint fails at start, not with the first message.
  if (!URL.canParse(opts.endpoint)) throw new Error(`Invalid configuration: the Management API endpoint is not a URL: ${opts.endpoint}`);
  const poster = onFirstUse(() => import('./management-post.ts').then((m) => m.managementPoster(opts)));
  return {
    async post(connectionId, message) {
      return (await poster())(connectionId, Buffer.from(stringifyJson(message)));
    },
  };
}
