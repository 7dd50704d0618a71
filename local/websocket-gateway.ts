/**
 * Emulates the API Gateway WebSocket API on the runtime's HTTP server:
 *
 * - an upgrade on `/events` invokes the `websocket` family with a `$connect` event; a non-2xx
 *   result refuses the handshake with that status;
 * - each text message invokes `$default`; closing invokes `$disconnect`;
 * - AWS limits: 128 KB messages (1009 close), no binary frames from clients (1003 close), 10 min
 *   idle timeout and 2 h connection lifetime (1001 close);
 * - the Management API (`POST`, `GET`, `DELETE /@connections/{connectionId}`) on the same server,
 *   from the loopback interface only, so `@aws-sdk/client-apigatewaymanagementapi` works with the
 *   server's URL as `endpoint`. API Gateway signs these calls (IAM); the runtime serves them only
 *   below its per-process secret path (`Runtime.internalUrl`, see local/server.ts);
 * - {@link WebSocketGateway.notifier}: the same posts without the HTTP round trip, for the
 *   functions the runtime runs in its own process (the fan-out, the `websocket` family's answers).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '@aws-lambda-powertools/logger';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { clfTime, headersOf, queryParameters, sourceIpOf, splitTarget } from './http-event.ts';
import type { PostOutcome } from '#shared/live/websocket/management-post.ts';
import type { ConnectionNotifier } from '#shared/live/websocket/connection-notifier.ts';
import type { ServerMessage } from '#shared/live/websocket/protocol.ts';
import { stringifyJson } from '#shared/json.ts';
import { FamilyMissing, type FamilyLoader } from './lambda.ts';

const MANAGEMENT_PREFIX = '/@connections/';

export interface WebSocketGatewayOptions {
  /** Invokes the `websocket` family (the runtime's {@link FamilyLoader}). */
  readonly families: Pick<FamilyLoader, 'invoke'>;
  readonly logger: Logger;
  /** Path of the WebSocket endpoint. @default '/events' */
  readonly path?: string;
  /** `requestContext.domainName`. @default 'localhost' */
  readonly domainName?: string;
  /** @default 131072 (API Gateway's message limit) */
  readonly maxMessageBytes?: number;
  /** @default 600000 (10 min) */
  readonly idleTimeoutMs?: number;
  /** @default 7200000 (2 h) */
  readonly maxConnectionMs?: number;
}

interface Connection {
  readonly id: string;
  readonly ws: WebSocket;
  readonly connectedAt: number;
  lastActiveAt: number;
  readonly sourceIp: string;
  readonly userAgent: string;
}

/** `GWwYQeLDIAMCKfQ=`-like ids, as API Gateway makes them. */
const newConnectionId = (): string => randomBytes(11).toString('base64');

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export class WebSocketGateway {
  private readonly wss: WebSocketServer;
  private readonly connections = new Map<string, Connection>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly path: string;
  private readonly domainName: string;
  private readonly maxMessageBytes: number;
  private readonly idleTimeoutMs: number;
  private readonly maxConnectionMs: number;
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;

  constructor(private readonly opts: WebSocketGatewayOptions) {
    this.path = opts.path ?? '/events';
    this.domainName = opts.domainName ?? 'localhost';
    this.maxMessageBytes = opts.maxMessageBytes ?? 128 * 1024;
    this.idleTimeoutMs = opts.idleTimeoutMs ?? 10 * 60_000;
    this.maxConnectionMs = opts.maxConnectionMs ?? 2 * 60 * 60_000;
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.maxMessageBytes, perMessageDeflate: false });
    this.sweeper = setInterval(() => this.sweep(), Math.min(10_000, this.idleTimeoutMs / 2));
    this.sweeper.unref();
  }

  /** The number of open connections. */
  get size(): number {
    return this.connections.size;
  }

  /** Handles an HTTP upgrade request (the server's `upgrade` event). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    this.track(this.upgrade(req, socket, head));
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const { rawPath, rawQueryString } = splitTarget(req.url ?? '/');
    if (this.closing) return refuse(socket, 503);
    if (rawPath !== this.path) return refuse(socket, 404);
    const connectionId = newConnectionId();
    const connectedAt = Date.now();
    const sourceIp = sourceIpOf(req);
    const headers = headersOf(req, true);
    const userAgent = req.headers['user-agent'] ?? '';
    const queryStringParameters = queryParameters(rawQueryString);
    const event = {
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.split(',')])),
      ...(queryStringParameters
        ? {
            queryStringParameters,
            multiValueQueryStringParameters: Object.fromEntries(
              [...new URLSearchParams(rawQueryString).keys()].map((k) => [k, new URLSearchParams(rawQueryString).getAll(k)]),
            ),
          }
        : {}),
      requestContext: this.requestContext('$connect', 'CONNECT', connectionId, connectedAt, { sourceIp, userAgent }),
      isBase64Encoded: false,
    };
    let status: number;
    try {
      status = statusOf(await this.opts.families.invoke('websocket', event, event.requestContext.requestId));
    } catch (err) {
      this.logInvokeError('$connect', err);
      return refuse(socket, 500);
    }
    if (status < 200 || status > 299) return refuse(socket, status);
    if (socket.destroyed || this.closing) {
      // The client left while $connect ran: API Gateway still sends $disconnect.
      this.track(this.disconnect(connectionId, connectedAt, { sourceIp, userAgent }, 1006, ''));
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach({ id: connectionId, ws, connectedAt, lastActiveAt: Date.now(), sourceIp, userAgent }));
  }

  private attach(conn: Connection): void {
    this.connections.set(conn.id, conn);
    const { ws } = conn;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      conn.lastActiveAt = Date.now();
      if (isBinary) {
        ws.close(1003, 'Binary frames are not supported');
        return;
      }
      this.track(this.message(conn, rawText(data)));
    });
    // Oversized messages end here (ws closes with 1009 itself).
    ws.on('error', (err) => this.opts.logger.debug('websocket error', { connectionId: conn.id, error: err.message }));
    ws.once('close', (code: number, reason: Buffer) => {
      this.connections.delete(conn.id);
      this.track(this.disconnect(conn.id, conn.connectedAt, conn, code, reason.toString('utf8')));
    });
  }

  private async message(conn: Connection, body: string): Promise<void> {
    const requestContext = {
      ...this.requestContext('$default', 'MESSAGE', conn.id, conn.connectedAt, conn),
      messageId: randomBytes(11).toString('base64'),
    };
    try {
      // Without a route response, API Gateway sends nothing back: answers go through the Management API.
      await this.opts.families.invoke('websocket', { requestContext, body, isBase64Encoded: false }, requestContext.requestId);
    } catch (err) {
      this.logInvokeError('$default', err);
      // What API Gateway sends a client when the integration fails.
      if (conn.ws.readyState === conn.ws.OPEN) {
        conn.ws.send(JSON.stringify({ message: 'Internal server error', connectionId: conn.id, requestId: requestContext.requestId }));
      }
    }
  }

  private async disconnect(
    connectionId: string,
    connectedAt: number,
    identity: { sourceIp: string; userAgent: string },
    code: number,
    reason: string,
  ): Promise<void> {
    const requestContext = {
      ...this.requestContext('$disconnect', 'DISCONNECT', connectionId, connectedAt, identity),
      disconnectStatusCode: code,
      disconnectReason: reason,
    };
    try {
      await this.opts.families.invoke('websocket', { requestContext, isBase64Encoded: false }, requestContext.requestId);
    } catch (err) {
      this.logInvokeError('$disconnect', err);
    }
  }

  private requestContext(
    routeKey: string,
    eventType: 'CONNECT' | 'MESSAGE' | 'DISCONNECT',
    connectionId: string,
    connectedAt: number,
    identity: { sourceIp: string; userAgent: string },
  ) {
    const now = new Date();
    const requestId = randomUUID();
    return {
      routeKey,
      eventType,
      extendedRequestId: requestId,
      requestTime: clfTime(now),
      messageDirection: 'IN' as const,
      stage: 'local',
      connectedAt,
      requestTimeEpoch: now.getTime(),
      identity: { sourceIp: identity.sourceIp, userAgent: identity.userAgent },
      requestId,
      domainName: this.domainName,
      connectionId,
      apiId: 'local',
    };
  }

  /**
   * Serves the Management API when the path is `/@connections/...`; returns false otherwise.
   * The caller has checked that the request may use it (local/server.ts: the runtime's secret).
   */
  handleManagement(req: IncomingMessage, res: ServerResponse, rawPath = splitTarget(req.url ?? '/').rawPath): boolean {
    if (!rawPath.startsWith(MANAGEMENT_PREFIX)) return false;
    this.track(this.management(req, res, rawPath));
    return true;
  }

  /**
   * Posts to a connection as the Management API's `POST /@connections/{id}` does, in this process:
   * what the runtime's own functions use (an SDK call over loopback HTTP costs about a millisecond
   * of CPU per message on each side, which a busy fan-out pays once per subscriber and event).
   */
  notifier(): ConnectionNotifier {
    return {
      post: (connectionId: string, message: ServerMessage): Promise<PostOutcome> => {
        const text = stringifyJson(message);
        // Most messages are ASCII: the byte count is only needed when the text could be too large.
        if (text.length * 3 > this.maxMessageBytes && Buffer.byteLength(text) > this.maxMessageBytes) return Promise.resolve('too-large');
        return Promise.resolve(this.send(connectionId, text));
      },
      close: (connectionId: string): Promise<void> => {
        this.closeConnection(connectionId);
        return Promise.resolve();
      },
    };
  }

  /** Closes a connection as the Management API's DELETE does (a gone one is left alone). */
  private closeConnection(id: string): void {
    this.connections.get(id)?.ws.close(1000, 'Closed by the server');
  }

  /** Sends a message to an open connection; `gone` when there is none. */
  private send(id: string, text: string): 'sent' | 'gone' {
    const conn = this.connections.get(id);
    if (!conn || conn.ws.readyState !== conn.ws.OPEN) return 'gone';
    conn.lastActiveAt = Date.now();
    conn.ws.send(text);
    return 'sent';
  }

  private async management(req: IncomingMessage, res: ServerResponse, rawPath: string): Promise<void> {
    if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) {
      req.resume();
      return awsError(res, 403, 'ForbiddenException', 'The Management API only answers on the loopback interface.');
    }
    // Connection ids are base64 (they may hold `/` and `+`): the SDK sends them percent-encoded.
    const segment = rawPath.slice(MANAGEMENT_PREFIX.length);
    const id = segment.includes('/') ? undefined : decodeSegment(segment);
    const method = req.method ?? 'GET';
    if (!id) {
      req.resume();
      return awsError(res, 404, 'NotFoundException', 'No such resource.');
    }
    const conn = this.connections.get(id);
    if (method === 'POST') {
      const data = await readLimited(req, this.maxMessageBytes);
      if (!data) return awsError(res, 413, 'PayloadTooLargeException', `The message exceeds ${this.maxMessageBytes} bytes.`);
      if (this.send(id, data.toString('utf8')) === 'gone') return awsError(res, 410, 'GoneException', `Connection ${id} is gone.`);
      res.writeHead(200, { 'content-length': '0' }).end();
      return;
    }
    req.resume();
    if (!conn) return awsError(res, 410, 'GoneException', `Connection ${id} is gone.`);
    if (method === 'GET') {
      const body = JSON.stringify({
        connectedAt: new Date(conn.connectedAt).toISOString(),
        identity: { sourceIp: conn.sourceIp, userAgent: conn.userAgent },
        lastActiveAt: new Date(conn.lastActiveAt).toISOString(),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }).end(body);
      return;
    }
    if (method === 'DELETE') {
      this.closeConnection(id);
      res.writeHead(204).end();
      return;
    }
    awsError(res, 405, 'MethodNotAllowedException', `${method} is not supported on a connection.`);
  }

  /** Closes idle and too-old connections, as API Gateway does. */
  private sweep(): void {
    const now = Date.now();
    for (const conn of this.connections.values()) {
      if (now - conn.lastActiveAt > this.idleTimeoutMs || now - conn.connectedAt > this.maxConnectionMs) {
        conn.ws.close(1001, 'Going away');
      }
    }
  }

  /** Closes every connection (1001) and waits for the `$disconnect` invocations. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    for (const conn of this.connections.values()) conn.ws.close(1001, 'Going away');
    const deadline = Date.now() + 5000;
    while ((this.connections.size > 0 || this.pending.size > 0) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const conn of this.connections.values()) conn.ws.terminate();
    this.wss.close();
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch((err: unknown) => this.opts.logger.error('websocket gateway error', { error: String(err) }));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  private logInvokeError(route: string, err: unknown): void {
    if (err instanceof FamilyMissing) this.opts.logger.warn(`websocket ${route}: ${err.message}`);
    else this.opts.logger.error(`websocket ${route} failed`, { error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
  }
}

function statusOf(result: unknown): number {
  if (result && typeof result === 'object' && 'statusCode' in result) return Number((result as { statusCode: unknown }).statusCode);
  return 200;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

function decodeSegment(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** Refuses a WebSocket handshake with an HTTP status. */
function refuse(socket: Duplex, status: number): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ message: STATUS_CODES[status] ?? 'Error' });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** An AWS REST-JSON error: the SDK reads the type from `x-amzn-errortype`. */
function awsError(res: ServerResponse, status: number, type: string, message: string): void {
  const body = JSON.stringify({ message });
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': type,
      'content-length': String(Buffer.byteLength(body)),
    })
    .end(body);
}

/** The body, or undefined when it is larger than `limit` (the rest is drained, not kept). */
async function readLimited(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) over = true;
    if (!over) chunks.push(chunk as Buffer);
  }
  return over ? undefined : Buffer.concat(chunks);
}
