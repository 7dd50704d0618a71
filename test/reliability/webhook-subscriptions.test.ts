/**
 * A webhook subscription sees every event published after its answer (issue #38): after
 * `POST …/webhooks` answers 201 every matching event published afterwards is queued for it, after
 * a `PUT` the new filters and URL apply to every event published afterwards, and after `DELETE`'s
 * 204 nothing more is queued for it. Each event is published right after the answer, many times,
 * under a background load of other events:
 *
 * - the AWS path: the `fanout` handler over DynamoDB Local, fed batches of stream records from
 *   several simulated shards, each shard's batches handled by one of several execution
 *   environments (each a fresh copy of the handler's modules, so each has its own caches, as
 *   Lambda instances do) that change over time; jobs go to the table queue and are counted;
 * - the local runtime (`spawnRuntime`): a real receiver gets every event.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBRecord, DynamoDBStreamEvent, DynamoDBBatchResponse } from 'aws-lambda';
import { serialize } from 'bson';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { queueDbOf } from '#shared/db/client.ts';
import { ensureQueueTable } from '#local/storage/create-tables.ts';
import { putLiveEvent, type EventWrite } from '#shared/db/events-repo.ts';
import { createLogger } from '#shared/logger.ts';
import { SubscriberCache } from '#shared/live/websocket/subscriber-cache.ts';
import type { WebhookDeps } from '#shared/live/webhooks/webhook-scope.ts';
import { tableQueue, type DeliveryJob, type WebhookQueue } from '#shared/live/webhooks/queue.ts';
import type { SenderDeps } from '#shared/live/webhooks/sender.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';
import { liveEvent } from '../support/live-events.ts';
import { RecordingConnections, streamRecord } from '../support/live-handlers.ts';
import { adminToken, newRuntimeAdmin, spawnRuntime, type SpawnedRuntime } from '../support/runtime.ts';
import { seedTenant, testDeps, type Tenant } from '../support/tokens.ts';
import { WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';

const NS = 'Gatehouse.Model';
const objectKey = (): string => randomBytes(12).toString('hex');
const logger = createLogger({ logLevel: 'SILENT' });

describe('the AWS path: the fan-out function, several shards and execution environments', () => {
  const SHARDS = 4;
  const ENVIRONMENTS = 3;
  let t: TestDb;
  let api: ReturnType<typeof createApi>;
  let root: Tenant;
  let child: Tenant;
  let queue: WebhookQueue;
  /** Every job the fan-out queued, in every environment. */
  const queued: DeliveryJob[] = [];
  type Fanout = (e: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
  const environments: Fanout[] = [];
  /** Records written but not yet handed to the fan-out, by shard. */
  let pending: DynamoDBRecord[][] = Array.from({ length: SHARDS }, () => []);
  let turn = 0;

  /** A fresh copy of the fan-out function's modules (its own caches): one more Lambda instance. */
  async function environment(): Promise<Fanout> {
    vi.resetModules();
    const { createHandler } = (await import('#functions/fanout/handler.ts')) as typeof import('#functions/fanout/handler.ts');
    const { createLiveDeps } = (await import('#shared/live/live-deps.ts')) as typeof import('#shared/live/live-deps.ts');
    const deps = createLiveDeps({ config: t.config, db: t.db, connections: new RecordingConnections(), subscribers: new SubscriberCache(), webhooks: queue });
    return createHandler(() => deps);
  }

  /** Writes a live event in the chain [root, child] relating to `linked`; its record waits on its shard. */
  async function publish(linked: readonly string[] = []): Promise<string> {
    const w: EventWrite = liveEvent([root.instance.key, child.instance.key], linked);
    await putLiveEvent(t.db, w, Math.floor(Date.now() / 1000));
    const record = streamRecord({
      PK: `LIVE#${w.event.key}`,
      SK: 'A',
      Key: w.event.key,
      Coll: 'events',
      Type: 'EventMessageData',
      Folder: w.event.folder,
      Instances: [...w.event.instances],
      Doc: JSON.stringify(w.event.doc),
    });
    // The stream's shards split records by partition key.
    pending[parseInt(w.event.key.slice(-4), 16) % SHARDS]!.push(record);
    return w.event.key;
  }

  /** Background load: events nobody subscribed to, through the same fan-out. */
  const noise = async (n: number) => {
    for (let i = 0; i < n; i++) await publish([objectKey()]);
  };

  /**
   * Hands each shard's waiting records to the fan-out as one batch, the shards side by side, each
   * shard read by one of the environments (which one changes from turn to turn).
   */
  async function drain(): Promise<void> {
    const batches = pending;
    pending = Array.from({ length: SHARDS }, () => []);
    const at = turn++;
    await Promise.all(
      batches.map(async (records, shard) => {
        if (records.length === 0) return;
        const res = await environments[(shard + at) % ENVIRONMENTS]!({ Records: records });
        expect(res.batchItemFailures).toEqual([]);
      }),
    );
  }

  const hooks = (tenant: Tenant) => `/api/f/${tenant.instance.key}/webhooks`;
  const jobsFor = (webhookKey: string, eventKey: string) => queued.filter((j) => j.webhookKey === webhookKey && j.eventKey === eventKey);

  beforeAll(async () => {
    t = await createTestDb({ GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: 'true' });
    await ensureQueueTable(queueDbOf(t.db));
    const table = tableQueue(t.db);
    queue = {
      async send(jobs) {
        await table.send(jobs);
        queued.push(...jobs);
      },
    };
    const core = testDeps(t);
    const deps: WebhookDeps = { ...core, queue };
    api = createApi(deps);
    root = await seedTenant(t, core);
    child = await seedTenant(t, core, { parent: root.instance });
    // The API's modules (the writes' too, loaded with the first) are loaded now, in this file's
    // module graph: the environments' and the sender's are their own.
    const first = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'http://127.0.0.1:9/first', Topics: [`/${root.instance.key}/${objectKey()}`] } });
    expect(first.status, first.text).toBe(201);
    for (let i = 0; i < ENVIRONMENTS; i++) environments.push(await environment());
  });

  afterAll(() => t?.db.raw.destroy());

  it('queues for each of 100 new subscriptions the event published right after its 201, and every later one', async () => {
    const subs: Array<{ key: string; object: string }> = [];
    const expected: Array<{ webhook: string; event: string }> = [];
    for (let i = 0; i < 100; i++) {
      // Every environment has just read the instances' subscriptions for the background load.
      await noise(SHARDS);
      await drain();

      const tenant = i % 2 === 0 ? root : child;
      const object = objectKey();
      const r = await api.post(hooks(tenant), {
        token: tenant.tokens.Operator,
        body: { Url: `http://127.0.0.1:9/s${i}`, Topics: [`/${tenant.instance.key}/${object}`] },
      });
      expect(r.status, r.text).toBe(201);
      subs.push({ key: r.body.Key, object });

      // Right after the 201: an event for this subscription and the two before it, amid the load.
      const linked = subs.slice(-3);
      const event = await publish(linked.map((s) => s.object));
      for (const s of linked) expected.push({ webhook: s.key, event });
      await noise(2);
      await drain();
    }
    const missing = expected.filter((x) => jobsFor(x.webhook, x.event).length === 0);
    expect(missing, `${missing.length} of ${expected.length} deliveries never queued`).toEqual([]);
  });

  it('applies a PUT to the event published right after its answer: the new filters, and the new URL at the sender', async () => {
    const rx = await new WebhookReceiver().start();
    try {
      // The sender in an execution environment of its own, which has read each subscription before the PUT.
      vi.resetModules();
      const { handleJob } = (await import('#shared/live/webhooks/sender.ts')) as typeof import('#shared/live/webhooks/sender.ts');
      const senderDeps: SenderDeps = { db: t.db, logger, config: t.config, now: () => new Date(), queue };
      const problems: string[] = [];
      for (let i = 0; i < 20; i++) {
        const object = objectKey();
        const topic = `/${root.instance.key}/${object}`;
        const oldUrl = rx.endpoint(`/old${i}`);
        const newUrl = rx.endpoint(`/new${i}`);
        const c = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: oldUrl, Topics: [topic], MinimumPriority: 5 } });
        expect(c.status, c.text).toBe(201);
        rx.secrets(`/old${i}`, c.body.Secret);
        rx.secrets(`/new${i}`, c.body.Secret);
        // The environments see it (with its filter) through the load; the sender sends to it once.
        await noise(SHARDS);
        await drain();
        const first = await publish([object]);
        await drain();
        expect(jobsFor(c.body.Key, first)).toEqual([]);
        // Twice: the first delivery records LastDeliveryOn (a write, which forgets the copy it read).
        for (const n of [1, 2]) {
          const warm: DeliveryJob = { webhookKey: c.body.Key, instanceKey: root.instance.key, eventKey: null, messageId: `msg_warm${n}`, type: 'webhook.test', timestamp: new Date().toISOString(), data: {}, attempt: 1, notBefore: Date.now() };
          expect(await handleJob(senderDeps, warm)).toEqual({ kind: 'delivered' });
        }

        const p = await api.put(`${hooks(root)}/${c.body.Key}`, { token: root.tokens.Operator, body: { Url: newUrl, Topics: [topic], MinimumPriority: null } });
        expect(p.status, p.text).toBe(200);
        const event = await publish([object]);
        await noise(2);
        await drain();
        const jobs = jobsFor(c.body.Key, event);
        if (jobs.length === 0) {
          problems.push(`${i}: not queued after the PUT`);
          continue;
        }
        expect(await handleJob(senderDeps, jobs[0]!)).toEqual({ kind: 'delivered' });
        if (rx.received(`/new${i}`).length !== 1) problems.push(`${i}: not delivered to the new URL`);
        if (rx.received(`/old${i}`).length !== 2) problems.push(`${i}: delivered to the old URL`);
      }
      expect(problems).toEqual([]);
    } finally {
      await rx.stop();
    }
  });

  it('queues nothing for a subscription after its DELETE answered 204', async () => {
    const problems: string[] = [];
    for (let i = 0; i < 20; i++) {
      const object = objectKey();
      const c = await api.post(hooks(child), { token: child.tokens.Operator, body: { Url: `http://127.0.0.1:9/d${i}`, Topics: [`/${child.instance.key}/${object}`] } });
      expect(c.status, c.text).toBe(201);
      const before = await publish([object]);
      await noise(SHARDS);
      await drain();
      expect(jobsFor(c.body.Key, before)).toHaveLength(1);

      const d = await api.del(`${hooks(child)}/${c.body.Key}`, { token: child.tokens.Operator });
      expect(d.status, d.text).toBe(204);
      const after = await publish([object]);
      await noise(2);
      await drain();
      if (jobsFor(c.body.Key, after).length > 0) problems.push(`${i}: queued after the 204`);
    }
    expect(problems).toEqual([]);
  });
});

describe('the local runtime', () => {
  let runtime: SpawnedRuntime;
  let token: string;
  let instance: string;
  const rx = new WebhookReceiver();
  let appNickname: string;
  let probeType: string;

  async function call(method: string, path: string, body: unknown, status: number): Promise<any> {
    const res = await documentedFetch(`${runtime.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    expect(res.status, `${method} ${path}: ${text}`).toBe(status);
    return text ? JSON.parse(text) : undefined;
  }

  /** Publishes an event (`Probe` or `Noise`, both priority 1) relating to `linked`; returns its key. */
  const publish = async (type: 'Probe' | 'Noise', linked: readonly string[] = []): Promise<string> =>
    (
      await call(
        'POST',
        `/api/f/${instance}/eventmessagesink`,
        {
          $type: `${NS}.EventMessagePosting, ${NS}`,
          OccurredOn: new Date().toISOString(),
          AppKey: appNickname,
          EventTypeMoniker: { Namespace: 'Subs', Nickname: type },
          RelatedObjects: linked.map((k) => ({ Relation: 'Reader', LinkedObjectKey: k })),
          EventDataBsonBase64: Buffer.from(serialize({ N: 1 })).toString('base64'),
        },
        201,
      )
    ).Key;

  /** Background load: noise events from 3 clients until the returned function (which counts them) is called. */
  function load(): () => Promise<number> {
    let on = true;
    let count = 0;
    const clients = Array.from({ length: 3 }, async () => {
      while (on) {
        await publish('Noise');
        count++;
      }
    });
    return async () => {
      on = false;
      await Promise.all(clients);
      return count;
    };
  }

  beforeAll(async () => {
    await rx.start();
    const admin = newRuntimeAdmin('Subs');
    runtime = await spawnRuntime({
      env: {
        GATEHOUSE_DYNAMODB_ENDPOINT: dynamoEndpoint(),
        GATEHOUSE_TABLE_NAME: `subs-${randomBytes(4).toString('hex')}`,
        GATEHOUSE_INSTANCE: admin.instanceName,
        GATEHOUSE_ADMIN_USER: admin.userName,
        GATEHOUSE_ADMIN_PASSWORD: admin.password,
        GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
        // The stage throttling stays on, far above what this file sends (reliability/throttle.test.ts tests the 429s).
        GATEHOUSE_THROTTLE_RATE: '2000',
        GATEHOUSE_THROTTLE_BURST: '4000',
      },
    });
    token = await adminToken(runtime.url, admin);
    instance = runtime.instanceKey;
    appNickname = `SubsApp-${randomBytes(4).toString('hex')}`;
    const app = await call('POST', `/api/f/${instance}/apps`, { $type: `${NS}.AppInfo, ${NS}`, CommonName: appNickname, Monikers: [{ Namespace: 'Subs', Nickname: appNickname }] }, 201);
    for (const name of ['Probe', 'Noise']) {
      const type = await call('PUT', `${app.Href}/eventtypes`, { $type: `${NS}.EventTypeInfo, ${NS}`, CommonName: name, Monikers: [{ Namespace: 'Subs', Nickname: name }], Priority: 1 }, 201);
      if (name === 'Probe') probeType = type.Key;
    }
  });

  afterAll(async () => {
    await runtime?.stop();
    await rx.stop();
  });

  it('delivers to each of 100 new subscriptions the event published right after its 201, under load; after DELETE, nothing', async () => {
    const stop = load();
    const subs: Array<{ key: string; href: string; path: string; object: string; event: string }> = [];
    try {
      // 4 lanes of 25: create a subscription to an object of its own, publish about it at once.
      await Promise.all(
        Array.from({ length: 4 }, async (_, lane) => {
          for (let i = lane; i < 100; i += 4) {
            const path = `/s${i}`;
            const object = objectKey();
            const hook = await call('POST', `/api/f/${instance}/webhooks`, { Url: rx.endpoint(path), Topics: [`/${instance}/${object}`], IncludeAuditEvents: false }, 201);
            rx.secrets(path, hook.Secret);
            const event = await publish('Probe', [object]);
            subs.push({ key: hook.Key, href: hook.Href, path, object, event });
          }
        }),
      );
      const arrived = (s: (typeof subs)[number]) => rx.ids(s.path).has(`msg_${s.event}_${s.key}`);
      await waitFor(() => subs.every(arrived), 30_000);
      const lost = subs.filter((s) => !arrived(s)).map((s) => s.path);
      expect(lost, `${lost.length} of 100 subscriptions never received the event published after their 201`).toEqual([]);

      // A subscription to every probe tells when the fan-out has handled the events published next.
      const watcher = await call('POST', `/api/f/${instance}/webhooks`, { Url: rx.endpoint('/watch'), EventTypeKeys: [probeType], IncludeAuditEvents: false }, 201);
      rx.secrets('/watch', watcher.Secret);
      const after = new Map<string, string>();
      await Promise.all(
        Array.from({ length: 4 }, async (_, lane) => {
          for (let i = lane; i < subs.length; i += 4) {
            const s = subs[i]!;
            await call('DELETE', s.href, undefined, 204);
            after.set(s.path, await publish('Probe', [s.object]));
          }
        }),
      );
      const watched = () => [...after.values()].every((k) => rx.ids('/watch').has(`msg_${k}_${watcher.Key}`));
      expect(await waitFor(watched, 30_000)).toBe(true);
      // What the fan-out queued with those events has had time to go out.
      await new Promise((r) => setTimeout(r, 1000));
      const late = subs.filter((s) => rx.ids(s.path).has(`msg_${after.get(s.path)}_${s.key}`)).map((s) => s.path);
      expect(late, 'subscriptions that received an event published after their DELETE').toEqual([]);
      expect(await stop(), 'background events published meanwhile').toBeGreaterThan(10);
    } finally {
      await stop();
    }
  });

  it('applies a PUT (new filter, new URL) to the event published right after its answer, under load', async () => {
    const stop = load();
    try {
      const probes: Array<{ key: string; event: string; i: number }> = [];
      await Promise.all(
        Array.from({ length: 4 }, async (_, lane) => {
          for (let i = lane; i < 20; i += 4) {
            const object = objectKey();
            const topic = `/${instance}/${object}`;
            // Priority 1 events do not reach it until the PUT lowers its minimum.
            const hook = await call('POST', `/api/f/${instance}/webhooks`, { Url: rx.endpoint(`/old${i}`), Topics: [topic], MinimumPriority: 5, IncludeAuditEvents: false }, 201);
            const newUrl = rx.endpoint(`/new${i}`);
            rx.secrets(`/old${i}`, hook.Secret);
            rx.secrets(`/new${i}`, hook.Secret);
            await publish('Probe', [object]);
            await call('PUT', hook.Href, { Url: newUrl, Topics: [topic], MinimumPriority: null, IncludeAuditEvents: false }, 200);
            probes.push({ key: hook.Key, event: await publish('Probe', [object]), i });
          }
        }),
      );
      const arrived = (p: (typeof probes)[number]) => rx.ids(`/new${p.i}`).has(`msg_${p.event}_${p.key}`);
      await waitFor(() => probes.every(arrived), 30_000);
      expect(probes.filter((p) => !arrived(p)).map((p) => p.i), 'not delivered to the new URL after the PUT').toEqual([]);
      expect(probes.filter((p) => rx.requests(`/old${p.i}`) > 0).map((p) => p.i), 'delivered under the old settings').toEqual([]);
      expect(await stop(), 'background events published meanwhile').toBeGreaterThan(10);
    } finally {
      await stop();
    }
  });
});
