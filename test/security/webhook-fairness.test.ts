/**
 * Issue #34, finding 6 and part of 9, on a local runtime of its own: one instance's dead webhook
 * receivers must not delay another instance's deliveries (the fairness rule of docs/architecture.md,
 * "Webhook fairness"), replay is rate limited per subscription, and a failed delivery tells the
 * tenant a generic reason while the server log keeps the detail.
 */
import { randomBytes } from 'node:crypto';
import { serialize } from 'bson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedFetch } from '../support/documented-fetch.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';
import { adminToken, freePort, newRuntimeAdmin, spawnSeededRuntime, type SpawnedRuntime } from '../support/runtime.ts';
import { BlackHole, WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';

const NS = 'Gatehouse.Model';
const unique = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;
/** How long after it is published a healthy instance's event may take to reach its receiver. */
const FAIR_BOUND_MS = 5000;

let runtime: SpawnedRuntime;
let token: string;
let appNickname: string;
const rx = new WebhookReceiver();
const hole = new BlackHole();

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await documentedFetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function ok(method: string, path: string, body: unknown, status: number): Promise<any> {
  const r = await call(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

const newInstance = async (): Promise<string> =>
  (await ok('POST', `/api/f/${runtime.instanceKey}/instances`, { $type: 'InstanceInfo', CommonName: unique('tenant') }, 201)).Key;

const publish = (instance: string, n: number): Promise<any> =>
  ok(
    'POST',
    `/api/f/${instance}/eventmessagesink`,
    {
      $type: `${NS}.EventMessagePosting, ${NS}`,
      OccurredOn: new Date().toISOString(),
      AppKey: appNickname,
      EventTypeMoniker: { Namespace: 'Fair', Nickname: 'Fair' },
      RelatedObjects: [],
      EventDataBsonBase64: Buffer.from(serialize({ N: n })).toString('base64'),
    },
    201,
  );


beforeAll(async () => {
  await rx.start();
  await hole.start();
  const admin = newRuntimeAdmin('Fair');
  // INFO: the failure details of the deliveries are logged at that level.
  ({ runtime } = await spawnSeededRuntime(dynamoEndpoint(), admin, { GATEHOUSE_LOG_LEVEL: 'INFO' }));
  token = await adminToken(runtime.url, admin);
  appNickname = unique('FairApp');
  const app = await ok('POST', `/api/f/${runtime.instanceKey}/apps`, { $type: `${NS}.AppInfo, ${NS}`, CommonName: unique('app'), Monikers: [{ Namespace: 'Fair', Nickname: appNickname }] }, 201);
  await ok('PUT', `${app.Href}/eventtypes`, { $type: `${NS}.EventTypeInfo, ${NS}`, CommonName: 'Fair', Monikers: [{ Namespace: 'Fair', Nickname: 'Fair' }], Priority: 1 }, 201);
});

afterAll(async () => {
  await runtime?.stop();
  await hole.stop();
  await rx.stop();
});

describe('webhook fairness between instances', () => {
  it(`delivers a healthy instance's events within ${FAIR_BOUND_MS / 1000} s while another instance floods two black-hole receivers`, async () => {
    const a = await newInstance();
    const b = await newInstance();
    // Instance A's history: 120 events, published before it subscribes (nothing queued yet).
    const since = new Date(Date.now() - 60_000).toISOString();
    await Promise.all(Array.from({ length: 10 }, async (_, c) => {
      for (let i = c; i < 120; i += 10) await publish(a, i);
    }));
    const until = new Date(Date.now() + 1000).toISOString();
    const holes = [
      await ok('POST', `/api/f/${a}/webhooks`, { Url: hole.url('/a1'), IncludeAuditEvents: false }, 201),
      await ok('POST', `/api/f/${a}/webhooks`, { Url: hole.url('/a2'), IncludeAuditEvents: false }, 201),
    ];
    const healthy = await ok('POST', `/api/f/${b}/webhooks`, { Url: rx.endpoint('/b'), IncludeAuditEvents: false }, 201);
    rx.secrets('/b', healthy.Secret);

    // A replays its history to both black holes: 240 jobs, each holding its attempt until the timeout.
    for (const h of holes) expect((await ok('POST', `${h.Href}/replay`, { Since: since, Until: until }, 202)).Count).toBe(120);
    expect(await waitFor(() => hole.connections >= 8, 10_000)).toBe(true);

    // B publishes meanwhile: each event reaches B's receiver within the bound.
    const lateness: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const e = await publish(b, i);
      const id = `msg_${e.Key}_${healthy.Key}`;
      expect(await waitFor(() => rx.ids('/b').has(id), 40_000, 20)).toBe(true);
      lateness.push(rx.received('/b').find((d) => d.id === id)!.at - started);
      await new Promise((r) => setTimeout(r, 2000));
    }
    expect(lateness.every((ms) => ms <= FAIR_BOUND_MS), `B's deliveries took ${lateness.join(', ')} ms`).toBe(true);
  });

  it('rejects a second replay of a subscription within its interval with 429 and Retry-After', async () => {
    const a = await newInstance();
    const hook = await ok('POST', `/api/f/${a}/webhooks`, { Url: rx.endpoint('/replayed'), IncludeAuditEvents: false }, 201);
    rx.secrets('/replayed', hook.Secret);
    const window = { Since: new Date(Date.now() - 3600_000).toISOString(), Until: new Date().toISOString() };
    await ok('POST', `${hook.Href}/replay`, window, 202);

    const again = await call('POST', `${hook.Href}/replay`, window);
    expect(again.status).toBe(429);
    expect(again.body).toEqual({ Error: 'TooManyRequests', Message: expect.any(String) });
    const retryAfter = Number(again.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);

    // Another subscription of the same instance is not held back by it.
    const other = await ok('POST', `/api/f/${a}/webhooks`, { Url: rx.endpoint('/replayed-2'), IncludeAuditEvents: false }, 201);
    await ok('POST', `${other.Href}/replay`, window, 202);
  });

  it('rejects showing a failed delivery\'s network details to the tenant: a generic reason, the detail in the server log', async () => {
    const a = await newInstance();
    const closedPort = await freePort();
    const targets = [
      { Url: 'https://gatehouse-no-such-host.invalid/hook', detail: /ENOTFOUND|EAI_AGAIN/ },
      { Url: `http://127.0.0.1:${closedPort}/hook`, detail: /ECONNREFUSED/ },
    ];
    for (const t of targets) {
      const hook = await ok('POST', `/api/f/${a}/webhooks`, { Url: t.Url, IncludeAuditEvents: false }, 201);
      const answer = await ok('POST', `${hook.Href}/test`, undefined, 200);
      expect(answer.StatusCode).toBeUndefined();
      expect(answer.Error, t.Url).toBe('Could not connect to the receiver.');
      const [attempt] = await ok('GET', `${hook.Href}/deliveries`, undefined, 200);
      expect(attempt.Error, t.Url).toBe('Could not connect to the receiver.');
      for (const leak of [/ENOTFOUND|EAI_AGAIN|ECONNREFUSED|EHOSTUNREACH|getaddrinfo/, /127\.0\.0\.1/, /\.invalid/, new RegExp(String(closedPort))]) {
        expect(JSON.stringify([answer, attempt])).not.toMatch(leak);
      }
      // The operator still sees what happened.
      expect(await waitFor(() => t.detail.test(runtime.output()), 5000)).toBe(true);
    }
  });
});
