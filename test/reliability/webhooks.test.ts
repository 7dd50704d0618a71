/**
 * Webhook reliability on the local runtime: a receiver down for a whole load run loses nothing
 * (every event is dead-lettered, counted, and a replay then delivers them all), and a restart of
 * the runtime while retries are pending loses nothing (pending attempts are table items). The
 * retry schedule is shortened by GATEHOUSE_WEBHOOK_RETRY_SCALE; the code path is the real one.
 */
import { randomBytes } from 'node:crypto';
import { serialize } from 'bson';
import { afterAll, describe, expect, it } from 'vitest';
import { adminToken, newDataDir, newRuntimeAdmin, spawnRuntime, type RuntimeAdmin, type SpawnedRuntime } from '../support/runtime.ts';
import { WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';

const NS = 'Gatehouse.Model';
const unique = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;
const running: SpawnedRuntime[] = [];
const receivers: WebhookReceiver[] = [];

afterAll(async () => {
  await Promise.all(running.map((r) => r.stop()));
  await Promise.all(receivers.map((r) => r.stop()));
});

/** A runtime on its own table; `start()` again on the same data directory and table is a restart. */
async function runtimeOf(admin: RuntimeAdmin, scale: string) {
  const dataDir = await newDataDir();
  const env = {
    GATEHOUSE_DYNAMODB_ENDPOINT: dynamoEndpoint(),
    GATEHOUSE_TABLE_NAME: `${admin.instanceName.toLowerCase()}-${randomBytes(4).toString('hex')}`,
    GATEHOUSE_INSTANCE: admin.instanceName,
    GATEHOUSE_ADMIN_USER: admin.userName,
    GATEHOUSE_ADMIN_PASSWORD: admin.password,
    GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
    GATEHOUSE_WEBHOOK_RETRY_SCALE: scale,
  };
  return {
    start: async () => {
      const r = await spawnRuntime({ dataDir, env });
      running.push(r);
      return r;
    },
  };
}

function client(runtime: SpawnedRuntime, token: string) {
  const call = async (method: string, path: string, body?: unknown, status?: number): Promise<any> => {
    const res = await documentedFetch(`${runtime.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (status !== undefined) expect(res.status, `${method} ${path}: ${text}`).toBe(status);
    return text ? JSON.parse(text) : undefined;
  };
  return call;
}

/** An app with one event type; returns a function publishing `n` events from 10 parallel clients. */
async function eventSource(call: ReturnType<typeof client>, instance: string) {
  const nickname = unique('RelApp');
  const app = await call('POST', `/api/f/${instance}/apps`, { $type: `${NS}.AppInfo, ${NS}`, CommonName: unique('app'), Monikers: [{ Namespace: 'Rel', Nickname: nickname }] }, 201);
  await call('PUT', `${app.Href}/eventtypes`, { $type: `${NS}.EventTypeInfo, ${NS}`, CommonName: 'Rel', Monikers: [{ Namespace: 'Rel', Nickname: 'Rel' }], Priority: 1 }, 201);
  return async (n: number): Promise<string[]> => {
    const keys: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, c) => {
        for (let i = c; i < n; i += 10) {
          const e = await call(
            'POST',
            `/api/f/${instance}/eventmessagesink`,
            {
              $type: `${NS}.EventMessagePosting, ${NS}`,
              OccurredOn: new Date().toISOString(),
              AppKey: nickname,
              EventTypeMoniker: { Namespace: 'Rel', Nickname: 'Rel' },
              RelatedObjects: [],
              EventDataBsonBase64: Buffer.from(serialize({ N: i })).toString('base64'),
            },
            201,
          );
          keys.push(e.Key);
        }
      }),
    );
    return keys;
  };
}

/** Every attempt record of a subscription (newest first), page by page. */
async function allAttempts(call: ReturnType<typeof client>, href: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 0; ; page++) {
    const batch = await call('GET', `${href}/deliveries?page=${page}&pageSize=1000`, undefined, 200);
    out.push(...batch);
    if (batch.length < 1000) return out;
  }
}

describe('webhook reliability', () => {
  it('loses nothing while a receiver is down for a whole load run: every event is dead-lettered, then replayed', async () => {
    const admin = newRuntimeAdmin('HookRel');
    // The whole schedule (about three days) in about 8 s: the attempts are the real ones, sooner.
    const runtime = await (await runtimeOf(admin, '0.00003')).start();
    const call = client(runtime, await adminToken(runtime.url, admin));
    const publish = await eventSource(call, runtime.instanceKey);

    // The down receiver's port is closed for the run: every attempt is refused.
    const down = new WebhookReceiver();
    receivers.push(down);
    await down.start();
    const downUrl = down.endpoint('/down');
    const port = down.listeningPort;
    await down.stop();
    const up = await new WebhookReceiver().start();
    receivers.push(up);
    const downHook = await call('POST', `/api/f/${runtime.instanceKey}/webhooks`, { Url: downUrl, IncludeAuditEvents: false }, 201);
    const upHook = await call('POST', `/api/f/${runtime.instanceKey}/webhooks`, { Url: up.endpoint('/up'), IncludeAuditEvents: false }, 201);
    up.secrets('/up', upHook.Secret);

    const TOTAL = 200;
    const published = new Set(await publish(TOTAL));
    expect(published.size).toBe(TOTAL);

    // The receiver that is up gets every event; the one that is down has every event dead-lettered.
    expect(await waitFor(() => up.ids('/up').size === TOTAL, 120_000)).toBe(true);
    const deadLettered = async () =>
      new Set((await allAttempts(call, downHook.Href)).filter((a) => a.DeadLettered && published.has(a.EventKey)).map((a) => a.EventKey));
    expect(await waitFor(async () => (await deadLettered()).size === TOTAL, 180_000, 2000)).toBe(true);
    const attempts = await allAttempts(call, downHook.Href);
    expect(attempts.every((a) => a.StatusCode === undefined && typeof a.Error === 'string')).toBe(true);
    const lost = [...published].filter((k) => !up.ids('/up').has(`msg_${k}_${upHook.Key}`));
    expect(lost).toEqual([]);

    // Back up: enable the subscription again (a streak of failures may have disabled it) and replay the run.
    const back = new WebhookReceiver();
    receivers.push(back);
    await back.start(port);
    back.endpoint('/down');
    back.secrets('/down', downHook.Secret);
    await call('PUT', downHook.Href, { Url: downUrl, IncludeAuditEvents: false, Enabled: true }, 200);
    const since = new Date(Date.now() - 3600_000).toISOString();
    const replay = await call('POST', `${downHook.Href}/replay`, { Since: since, Until: new Date().toISOString() }, 202);
    expect(replay.Count).toBe(TOTAL);
    expect(await waitFor(() => back.ids('/down').size === TOTAL, 120_000)).toBe(true);
    expect(back.ids('/down')).toEqual(new Set([...published].map((k) => `msg_${k}_${downHook.Key}`)));
  }, 600_000); // generous: minutes of work on a busy two-core machine

  it('loses nothing when the runtime restarts while retries are pending', async () => {
    const admin = newRuntimeAdmin('HookRestart');
    // Retries after 5 ms, 0.3 s, 1.8 s, 7.2 s, 18 s...
    const rt = await runtimeOf(admin, '0.001');
    let runtime = await rt.start();
    let call = client(runtime, await adminToken(runtime.url, admin));
    const publish = await eventSource(call, runtime.instanceKey);
    const rx = await new WebhookReceiver().start();
    receivers.push(rx);
    const hook = await call('POST', `/api/f/${runtime.instanceKey}/webhooks`, { Url: rx.endpoint('/flaky', () => 503), IncludeAuditEvents: false }, 201);
    rx.secrets('/flaky', hook.Secret);

    const TOTAL = 50;
    const published = await publish(TOTAL);
    // Every event has failed at least twice: its next attempts are queued in the table.
    const failedTwice = async () => {
      const byEvent = new Map<string, number>();
      for (const a of await allAttempts(call, hook.Href)) byEvent.set(a.EventKey, (byEvent.get(a.EventKey) ?? 0) + 1);
      return published.every((k) => (byEvent.get(k) ?? 0) >= 2);
    };
    expect(await waitFor(failedTwice, 60_000, 500)).toBe(true);
    expect(rx.received('/flaky')).toHaveLength(0);

    await runtime.stop();
    rx.setStatus('/flaky', () => 200);
    runtime = await rt.start();
    call = client(runtime, await adminToken(runtime.url, admin));

    expect(await waitFor(() => rx.ids('/flaky').size === TOTAL, 90_000)).toBe(true);
    expect(rx.ids('/flaky')).toEqual(new Set(published.map((k) => `msg_${k}_${hook.Key}`)));
    expect(rx.invalid('/flaky')).toEqual([]);
  }, 600_000);
});
