/**
 * WebSocket family: the `$connect`, `$default` and `$disconnect` routes of the API Gateway
 * WebSocket API (the live event feed).
 *
 * A client connects with its access token in the `access_token` query parameter (browsers cannot
 * set headers on a WebSocket) or an `Authorization: Bearer` header; a missing or invalid token
 * refuses the handshake with 401. Answers to client messages go out through the Management API.
 */
import type { APIGatewayProxyWebsocketEventV2, Context } from 'aws-lambda';
import { closeConnection, handleClientMessage, openConnection } from '#shared/live/websocket/connections.ts';
import { createLiveDeps, type LiveDeps } from '#shared/live/live-deps.ts';
import { mappingErrorStacks } from '#shared/error-stacks.ts';

/** The proxy event of a WebSocket route; `$connect` also carries the handshake's headers. */
export interface WebSocketEvent extends APIGatewayProxyWebsocketEventV2 {
  readonly headers?: Readonly<Record<string, string | undefined>>;
}

export interface WebSocketResult {
  readonly statusCode: number;
}

/** The `Authorization` value of a handshake: the `access_token` query parameter wins. */
function authorizationOf(event: WebSocketEvent): string | undefined {
  const token = event.queryStringParameters?.access_token;
  if (token) return `Bearer ${token}`;
  // WebSocket APIs keep header names as the client sent them.
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (name.toLowerCase() === 'authorization') return value;
  }
  return undefined;
}

function bodyOf(event: WebSocketEvent): string | undefined {
  if (event.body === undefined) return undefined;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

export function createHandler(deps: () => LiveDeps) {
  return async function websocket(event: WebSocketEvent, _context?: Context): Promise<WebSocketResult> {
    const { routeKey, connectionId } = event.requestContext;
    if (routeKey === '$connect') {
      return { statusCode: (await openConnection(deps(), connectionId, authorizationOf(event))) ? 200 : 401 };
    }
    if (routeKey === '$disconnect') await closeConnection(deps(), connectionId);
    else await handleClientMessage(deps(), connectionId, bodyOf(event));
    return { statusCode: 200 };
  };
}

let deps: LiveDeps | undefined;

// Errors reach the runtime with stacks that name the TypeScript (shared/source-mapped-stack.ts).
export const handler = mappingErrorStacks(createHandler(() => (deps ??= createLiveDeps())));
