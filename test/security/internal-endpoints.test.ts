/**
 * Issue #34, finding 2: the local runtime's stand-ins of AWS's internal calls (the IoT data
 * plane's Publish, `POST /topics/{topic}`, and the WebSocket Management API,
 * `/@connections/{id}`) answered anyone on the machine, on the API's own port: a loopback POST
 * forged a live event into any tenant's MQTT feed, and a webhook aimed at the runtime itself
 * (loopback is allowed there) let a tenant's Operator do the same remotely through its `test`.
 *
 * Against a spawned runtime (its own table on the run's DynamoDB Local): forged publishes and
 * management calls on the API port are refused and reach no subscriber while the runtime's own
 * live events still do; a webhook naming the runtime, in any spelling, is 400 InvalidUrl while
 * one naming another loopback port is accepted. Against a runtime in this process: the
 * stand-ins answer the AWS SDK clients at the runtime's `internalUrl` (with its secret) only.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiGatewayManagementApiClient, GetConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { deserialize, serialize } from 'bson';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime, type Runtime } from '#local/server.ts';
import { createIotPublisher } from '#shared/live/mqtt/publisher.ts';
import { createManagementNotifier } from '#shared/live/websocket/connection-notifier.ts';
import { pointsAtSelf } from '#shared/live/webhooks/self-target.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';
import { adminToken, newRuntimeAdmin, spawnSeededRuntime, type SpawnedRuntime } from '../support/runtime.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const admin = newRuntimeAdmin('Internal');
const unique = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;

let runtime: SpawnedRuntime;
let dataDir: string;
let token: string;
let instance: string;
const clients: MqttClient[] = [];
const rx = new WebhookReceiver();

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await documentedFetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** An MQTT client of the instance's feed, as field clients connect; collects what it receives. */
async function subscriber(): Promise<Array<Record<string, unknown>>> {
  const c = await mqtt.connectAsync(runtime.url.replace(/^http/, 'ws') + '/mqtt', {
    protocolVersion: 4,
    clientId: unique('sec'),
    username: token,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
  });
  clients.push(c);
  const got: Array<Record<string, unknown>> = [];
  c.on('message', (_topic, payload) => got.push(deserialize(payload)));
  await c.subscribeAsync(`/${instance}/$`, { qos: 1 });
  return got;
}

beforeAll(async () => {
  await rx.start();
  ({ runtime, dataDir } = await spawnSeededRuntime(dynamoEndpoint(), admin));
  token = await adminToken(runtime.url, admin);
  instance = runtime.instanceKey;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
  await runtime?.stop();
  await rx.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the internal stand-ins on the API port', () => {
  it("refuses a forged publish to a tenant's MQTT topic, which reaches no subscriber, while the runtime's own events do", async () => {
    const got = await subscriber();
    const forged = serialize({ Message: 'FORGED: door unlocked by attacker' });
    const attempts = [
      `/topics//${instance}/$?qos=1`,
      `/topics/${encodeURIComponent(`/${instance}/$`)}?qos=1`,
      `/@local/${randomBytes(32).toString('base64url')}/topics//${instance}/$?qos=1`,
      `/@local//topics//${instance}/$?qos=1`,
    ];
    for (const path of attempts) {
      const res = await fetch(`${runtime.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: forged });
      // An ordinary API path now, answered as one (the data plane's answer to a publish was 200).
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expect(await res.json(), path).toEqual({ Error: expect.any(String), Message: expect.any(String) });
    }

    // A real event of the instance, published after the forgeries, reaches the subscriber.
    const app = await call('POST', `/api/f/${instance}/apps`, { $type: 'AppInfo', CommonName: unique('app') });
    expect(app.status).toBe(201);
    const nickname = unique('nick');
    const type = await call('PUT', `${app.body.Href}/eventtypes`, { $type: 'EventTypeInfo', CommonName: 'Sec', Monikers: [{ Namespace: 'sec', Nickname: nickname }] });
    expect(type.status).toBe(201);
    const marker = randomBytes(6).toString('hex');
    const posted = await call('POST', `/api/f/${instance}/eventmessagesink`, {
      $type: 'EventMessagePosting',
      OccurredOn: new Date().toISOString(),
      AppKey: app.body.Key,
      EventTypeMoniker: { $type: 'MonikerItem', Namespace: 'sec', Nickname: nickname },
      RelatedObjects: [],
      EventDataBsonBase64: Buffer.from(serialize({ Marker: marker })).toString('base64'),
    });
    expect(posted.status).toBe(201);
    await expect.poll(() => got.some((m) => m.Key === posted.body.Key), { timeout: 30_000 }).toBe(true);

    // The broker delivers in order: a forged message that got through would have arrived first.
    expect(got.filter((m) => JSON.stringify(m).includes('FORGED'))).toEqual([]);
    // The secret never leaves the runtime's process.
    expect(runtime.output()).not.toContain('/@local/');
  });

  it('refuses the Management API calls (post, describe, close a connection) on the API port', async () => {
    const id = encodeURIComponent('AAAAAAAAAAAAAAA=');
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await fetch(`${runtime.url}/@connections/${id}`, { method, ...(method === 'POST' ? { body: '{"type":"pong"}' } : {}) });
      expect(res.status, method).toBe(404);
      expect(await res.json()).toEqual({ Error: 'NotFound', Message: expect.any(String) });
    }
  });
});

describe('a webhook aimed at the runtime itself', () => {
  it('is 400 InvalidUrl in every spelling of its host and port, though loopback receivers are allowed', async () => {
    const port = runtime.port;
    const spellings = [
      `http://localhost:${port}/topics//${instance}/$?qos=1`,
      `http://LOCALHOST.:${port}/x`,
      `http://127.0.0.1:${port}/`,
      `http://127.1:${port}/`,
      `http://0x7f.0.0.1:${port}/`,
      `http://2130706433:${port}/`,
      `http://017700000001:${port}/`,
      `http://[::1]:${port}/`,
      `http://[0:0:0:0:0:0:0:1]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://0.0.0.0:${port}/`,
      `https://localhost:${port}/`,
      `http://127.0.0.2:${port}/`,
    ];
    for (const Url of spellings) {
      const r = await call('POST', `/api/f/${instance}/webhooks`, { CommonName: 'self', Url });
      expect(r.status, Url).toBe(400);
      expect(r.body, Url).toEqual({ Error: 'InvalidUrl', Message: expect.any(String) });
    }

    // A receiver on another loopback port is fine, and may not be moved onto the runtime either.
    const hook = await call('POST', `/api/f/${instance}/webhooks`, { CommonName: 'rx', Url: rx.endpoint('/rx') });
    expect(hook.status).toBe(201);
    const moved = await call('PUT', hook.body.Href, { CommonName: 'rx', Url: `http://127.1:${port}/topics//${instance}/$` });
    expect(moved.status).toBe(400);
    expect(moved.body.Error).toBe('InvalidUrl');
    const list = await call('GET', `/api/f/${instance}/webhooks`);
    expect(list.body.map((h: { Url: string }) => h.Url)).toEqual([rx.endpoint('/rx')]);
  });

  it("compares the scheme's default port when a URL names none", async () => {
    expect(await pointsAtSelf('http://localhost/', ['http://127.0.0.1:80/'])).toBe(true);
    expect(await pointsAtSelf('https://api.example.com./x', ['https://API.example.com'])).toBe(true);
    expect(await pointsAtSelf('https://api.example.com:8443/', ['https://api.example.com'])).toBe(false);
    expect(await pointsAtSelf('http://localhost:81/', ['http://127.0.0.1:80/'])).toBe(false);
  });
});

describe('the stand-ins for code in the runtime process', () => {
  let local: Runtime;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-internal-'));
    // startRuntime configures this process's environment for the handlers (none load here).
    process.env.GATEHOUSE_TABLE_NAME = unique('internal');
    local = await startRuntime({
      port: 0,
      dataDir: join(dir, 'runtime'),
      dynamodbEndpoint: dynamoEndpoint(),
      families: { invoke: async () => ({ statusCode: 404, headers: { 'content-type': 'application/json' }, body: '{"Error":"NotFound","Message":"none"}' }) },
    });
  });

  afterAll(async () => {
    await local?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers the AWS SDK clients at internalUrl only', async () => {
    expect(local.internalUrl.startsWith(`${local.url}/@local/`)).toBe(true);
    const topic = '/0123456789abcdef01234567/$';
    await expect(createIotPublisher({ endpoint: local.internalUrl, region: 'us-east-1' }).publish(topic, serialize({ N: 1 }))).resolves.toBeUndefined();
    await expect(createIotPublisher({ endpoint: local.internalUrl, region: 'us-east-1' }).publish('/a/#', serialize({ N: 1 }))).rejects.toMatchObject({
      name: 'InvalidRequestException',
    });
    await expect(createIotPublisher({ endpoint: local.url, region: 'us-east-1' }).publish(topic, serialize({ N: 1 }))).rejects.toThrow();

    expect(await createManagementNotifier({ endpoint: local.internalUrl, region: 'us-east-1' }).post('AAAAAAAAAAAAAAA=', { type: 'pong' })).toBe('gone');
    await expect(createManagementNotifier({ endpoint: local.url, region: 'us-east-1' }).post('AAAAAAAAAAAAAAA=', { type: 'pong' })).rejects.toThrow();
  });

  it('answers PostToConnection and GetConnection to an unknown connection with GoneException at internalUrl', async () => {
    const client = new ApiGatewayManagementApiClient({ region: 'us-east-1', endpoint: local.internalUrl, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

    await expect(client.send(new PostToConnectionCommand({ ConnectionId: 'AAAAAAAAAAAAAAA=', Data: Buffer.from('{}') }))).rejects.toMatchObject({
      name: 'GoneException',
      $metadata: { httpStatusCode: 410 },
    });
    await expect(client.send(new GetConnectionCommand({ ConnectionId: 'AAAAAAAAAAAAAAA=' }))).rejects.toMatchObject({ name: 'GoneException' });
    client.destroy();
  });
});
