/**
 * What the tests of the live feed's handlers (`websocket`, `fanout`) hand them: a recording
 * stand-in for the Management API, API Gateway WebSocket events, and stream records as the event
 * source mapping delivers them.
 */
import { randomBytes } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBRecord } from 'aws-lambda';
import type { WebSocketEvent } from '#functions/websocket/handler.ts';
import type { PostOutcome } from '#shared/live/websocket/management-post.ts';
import type { ConnectionNotifier } from '#shared/live/websocket/connection-notifier.ts';
import type { ServerMessage } from '#shared/live/websocket/protocol.ts';

/** Stands in for the Management API: keeps what each connection was sent. */
export class RecordingConnections implements ConnectionNotifier {
  readonly sent = new Map<string, ServerMessage[]>();
  /** Connections answered 410 (gone). */
  readonly gone = new Set<string>();
  /** Connections whose posts throw (the API unavailable). */
  readonly failing = new Set<string>();
  /** Connections closed through the Management API (a revoked user's). */
  readonly closed = new Set<string>();
  async close(connectionId: string): Promise<void> {
    this.closed.add(connectionId);
  }
  async post(connectionId: string, message: ServerMessage): Promise<PostOutcome> {
    if (this.failing.has(connectionId)) throw new Error('management API unavailable');
    if (this.gone.has(connectionId)) return 'gone';
    this.sent.set(connectionId, [...this.of(connectionId), message]);
    return 'sent';
  }
  of(connectionId: string): ServerMessage[] {
    return this.sent.get(connectionId) ?? [];
  }
  last(connectionId: string): ServerMessage | undefined {
    return this.of(connectionId).at(-1);
  }
  /** The keys of the events a connection received, with the topic they came on. */
  events(connectionId: string): string[] {
    return this.of(connectionId).flatMap((m) => (m.type === 'event' ? [`${m.topic} ${String((m.event as { Key?: unknown }).Key)}`] : []));
  }
}

export const newConnectionId = (): string => randomBytes(11).toString('base64');

function requestContext(routeKey: string, connectionId: string): WebSocketEvent['requestContext'] {
  return {
    routeKey,
    eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE',
    messageId: 'm',
    extendedRequestId: 'x',
    requestTime: '',
    messageDirection: 'IN',
    stage: 'test',
    connectedAt: Date.now(),
    requestTimeEpoch: Date.now(),
    requestId: randomBytes(8).toString('hex'),
    domainName: 'localhost',
    connectionId,
    apiId: 'test',
  };
}

export const connectEvent = (connectionId: string, opts: { token?: string; headers?: Record<string, string> } = {}): WebSocketEvent => ({
  requestContext: requestContext('$connect', connectionId),
  headers: { Host: 'localhost', ...opts.headers },
  ...(opts.token ? { queryStringParameters: { access_token: opts.token } } : {}),
  isBase64Encoded: false,
});

export const messageEvent = (connectionId: string, body: unknown): WebSocketEvent => ({
  requestContext: requestContext('$default', connectionId),
  body: typeof body === 'string' ? body : JSON.stringify(body),
  isBase64Encoded: false,
});

export const disconnectEvent = (connectionId: string): WebSocketEvent => ({
  requestContext: requestContext('$disconnect', connectionId),
  isBase64Encoded: false,
});

let seq = 1000;

/** A stream record of `item` as the event source mapping delivers it. */
export function streamRecord(item: Record<string, unknown>, eventName: 'INSERT' | 'MODIFY' | 'REMOVE' = 'INSERT'): DynamoDBRecord {
  const image = marshall(item, { removeUndefinedValues: true }) as Record<string, AttributeValue>;
  return {
    eventID: String(seq),
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      Keys: { PK: image.PK!, SK: image.SK! },
      ...(eventName === 'REMOVE' ? { OldImage: image } : { NewImage: image }),
      SequenceNumber: String(seq++),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
    eventSourceARN: 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/x',
  };
}
