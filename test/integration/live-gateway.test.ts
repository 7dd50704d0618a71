/**
 * The local WebSocket API emulation in-process: the events it hands the `websocket` family, and
 * its Management API spoken to with `@aws-sdk/client-apigatewaymanagementapi` at
 * `endpoint = http://localhost:<port>` (the SDK's request paths must match).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiGatewayManagementApiClient,
  DeleteConnectionCommand,
  GetConnectionCommand,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '#shared/logger.ts';
import { createManagementNotifier } from '#shared/live/websocket/connection-notifier.ts';
import { WebSocketGateway } from '#local/websocket-gateway.ts';
import { HandshakeRefused, openLiveClient, type LiveClient } from '../support/runtime.ts';

interface Invocation {
  readonly family: string;
  readonly event: any;
}

let server: Server;
let gateway: WebSocketGateway;
let base: string;
let invocations: Invocation[];
/** What the fake `websocket` family does with a `$default` body. */
let onMessage: (body: string) => void;
const clients: LiveClient[] = [];

const byRoute = (routeKey: string) => invocations.filter((i) => i.event.requestContext.routeKey === routeKey);

async function connect(query = 'access_token=t0k3n', headers: Record<string, string> = {}): Promise<{ client: LiveClient; id: string }> {
  const before = byRoute('$connect').length;
  const client = await openLiveClient(`${base.replace('http', 'ws')}/events?${query}`, { headers });
  clients.push(client);
  return { client, id: byRoute('$connect')[before]!.event.requestContext.connectionId as string };
}

const management = () =>
  new ApiGatewayManagementApiClient({ region: 'us-east-1', endpoint: base, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });

/** A gateway on its own HTTP server, with a fake `websocket` family that records its events. */
async function startGateway(opts: { idleTimeoutMs?: number } = {}) {
  const gw = new WebSocketGateway({
    families: {
      invoke: async (family, event) => {
        invocations.push({ family, event });
        const e = event as { requestContext: { routeKey: string }; queryStringParameters?: Record<string, string>; body?: string };
        if (e.requestContext.routeKey === '$connect') return { statusCode: e.queryStringParameters?.access_token ? 200 : 401 };
        if (e.requestContext.routeKey === '$default') onMessage(e.body ?? '');
        return { statusCode: 200 };
      },
    },
    logger: createLogger({ logLevel: 'SILENT' }),
    ...opts,
  });
  const srv = createServer((req, res) => {
    if (!gw.handleManagement(req, res)) res.writeHead(404).end();
  });
  srv.on('upgrade', (req, socket, head) => gw.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { gateway: gw, server: srv, base: `http://localhost:${(srv.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  ({ gateway, server, base } = await startGateway());
});

beforeEach(() => {
  invocations = [];
  onMessage = () => {};
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gateway.close();
  await new Promise((r) => server.close(r));
});

describe('WebSocket events', () => {
  it('invokes $connect with the query string, the headers as sent and a connection id', async () => {
    const { id } = await connect('access_token=abc&x=1&x=2', { 'X-Trace': 'on' });

    const [connect0] = byRoute('$connect');
    expect(connect0!.family).toBe('websocket');
    expect(connect0!.event).toMatchObject({
      queryStringParameters: { access_token: 'abc', x: '1,2' },
      multiValueQueryStringParameters: { x: ['1', '2'] },
      headers: expect.objectContaining({ 'X-Trace': 'on', Host: expect.any(String) }),
      isBase64Encoded: false,
      requestContext: {
        routeKey: '$connect',
        eventType: 'CONNECT',
        connectionId: id,
        apiId: 'local',
        domainName: 'localhost',
        identity: { sourceIp: '127.0.0.1', userAgent: '' },
      },
    });
    expect(id).toMatch(/^[A-Za-z0-9+/]{15}=$/);
  });

  it('refuses the handshake with the status $connect returns', async () => {
    await expect(openLiveClient(`${base.replace('http', 'ws')}/events`)).rejects.toEqual(new HandshakeRefused(401));
    expect(byRoute('$disconnect')).toEqual([]);
  });

  it('invokes $default with each text message and $disconnect on close', async () => {
    const { client, id } = await connect();

    client.send({ action: 'ping' });
    await expect.poll(() => byRoute('$default').length).toBe(1);
    await client.close();
    await expect.poll(() => byRoute('$disconnect').length).toBe(1);

    expect(byRoute('$default')[0]!.event).toMatchObject({
      body: '{"action":"ping"}',
      requestContext: { routeKey: '$default', eventType: 'MESSAGE', connectionId: id, messageId: expect.any(String) },
    });
    expect(byRoute('$disconnect')[0]!.event.requestContext).toMatchObject({ eventType: 'DISCONNECT', connectionId: id, disconnectStatusCode: 1000 });
  });

  it('sends the client API Gateway\'s error message when $default fails', async () => {
    const { client, id } = await connect();
    onMessage = () => {
      throw new Error('boom');
    };

    client.send('hello');

    expect(await client.next()).toEqual({ message: 'Internal server error', connectionId: id, requestId: expect.any(String) });
  });

  it('closes an idle connection with 1001', async () => {
    const idle = await startGateway({ idleTimeoutMs: 300 });
    const client = await openLiveClient(`${idle.base.replace('http', 'ws')}/events?access_token=t`);

    expect(await client.closed).toEqual({ code: 1001, reason: 'Going away' });
    await idle.gateway.close();
    await new Promise((r) => idle.server.close(r));
  });
});

// The fan-out's two ways to a connection: the SDK over HTTP (AWS) and the runtime's own process.
describe.each([
  ['through the Management API (SDK)', () => createManagementNotifier({ endpoint: base, region: 'us-east-1' })],
  ['in process (the local runtime\'s fan-out)', () => gateway.notifier()],
] as const)('the live feed notifier %s', (_how, notifier) => {
  it('posts to a connection', async () => {
    const { client, id } = await connect();

    expect(await notifier().post(id, { type: 'subscribed', topic: '/a/$' })).toBe('sent');

    expect(await client.next()).toEqual({ type: 'subscribed', topic: '/a/$' });
  });

  it('answers an unknown connection with gone', async () => {
    expect(await notifier().post('AAAAAAAAAAAAAAA=', { type: 'pong' })).toBe('gone');
  });

  it('answers a closed connection with gone', async () => {
    const { client, id } = await connect();
    await client.close();
    await expect.poll(() => byRoute('$disconnect').map((i) => i.event.requestContext.connectionId)).toContain(id);

    expect(await notifier().post(id, { type: 'pong' })).toBe('gone');
  });

  it('refuses a message over 128 KB as too large, and sends one just under', async () => {
    const { client, id } = await connect();
    const over = { type: 'event', topic: '/a/$', event: 'x'.repeat(129 * 1024) } as const;
    // Multi-byte text: 43 000 three-byte characters are 129 000 bytes, under the limit.
    const under = { type: 'event', topic: '/a/$', event: '\u20ac'.repeat(43_000) } as const;

    expect(await notifier().post(id, over)).toBe('too-large');
    expect(await notifier().post(id, under)).toBe('sent');

    expect(await client.next()).toEqual(under);
  });
});

describe('Management API through the AWS SDK', () => {
  it('posts to a connection as a text message (PostToConnection)', async () => {
    const { client, id } = await connect();
    const sdk = management();

    await sdk.send(new PostToConnectionCommand({ ConnectionId: id, Data: Buffer.from('{"type":"pong"}') }));

    expect(await client.next()).toEqual({ type: 'pong' });
    sdk.destroy();
  });

  it('describes a connection (GetConnection)', async () => {
    const { id } = await connect('access_token=t', { 'User-Agent': 'gatehouse-test' });
    const sdk = management();

    const info = await sdk.send(new GetConnectionCommand({ ConnectionId: id }));

    expect(info.ConnectedAt).toBeInstanceOf(Date);
    expect(info.LastActiveAt).toBeInstanceOf(Date);
    expect(info.Identity).toEqual({ SourceIp: '127.0.0.1', UserAgent: 'gatehouse-test' });
    sdk.destroy();
  });

  it('closes a connection (DeleteConnection) and then answers it is gone', async () => {
    const { client, id } = await connect();
    const sdk = management();

    await sdk.send(new DeleteConnectionCommand({ ConnectionId: id }));

    expect((await client.closed).code).toBe(1000);
    await expect.poll(() => byRoute('$disconnect').map((i) => i.event.requestContext.connectionId)).toContain(id);
    await expect(sdk.send(new PostToConnectionCommand({ ConnectionId: id, Data: Buffer.from('x') }))).rejects.toMatchObject({ name: 'GoneException' });
    sdk.destroy();
  });
});
