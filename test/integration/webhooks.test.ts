/**
 * The webhooks collection against DynamoDB Local, through the real family handler in-process:
 * CRUD, the secret shown once, validation, roles and tenant scope, rotation, and the sender's
 * attempts recorded as deliveries (a real `node:http` receiver on loopback, every delivery
 * verified with the `standardwebhooks` package).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDbOf } from '#shared/db/client.ts';
import { ensureQueueTable } from '#local/storage/create-tables.ts';
import { dueJobs, moveQueuedJobs, queuedJobBody } from '#local/storage/webhook-queue-table.ts';
import { getRecentWebhook, getWebhook, putQueuedJobs, RECENT_WEBHOOK_MS, recordWebhookOutcome } from '#shared/db/webhooks-repo.ts';
import type { WebhookDeps } from '#shared/live/webhooks/webhook-scope.ts';
import { tableQueue } from '#shared/live/webhooks/queue.ts';
import { DISABLED_FAILING, handleJob, postOnce } from '#shared/live/webhooks/sender.ts';
import { messageIdOf } from '#shared/live/webhooks/signing.ts';
import { handleQueueBatch } from '#shared/live/webhooks/consumer.ts';
import { createApi } from '../support/api.ts';
import { commandsOf, createTestDb, withTimeline, type TestDb } from '../support/db.ts';
import { seedTenant, testDeps, type Tenant } from '../support/tokens.ts';

interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A receiver on 127.0.0.1 answering each request with the next status of `statuses` (then 200). */
async function receiver(statuses: number[] = []) {
  const got: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, got, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });

let t: TestDb;
let deps: WebhookDeps;
let api: ReturnType<typeof createApi>;
let root: Tenant;
let child: Tenant;
let sibling: Tenant;

beforeAll(async () => {
  t = await createTestDb({ GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: 'true', GATEHOUSE_WEBHOOK_RETRY_SCALE: '0.001' });
  const core = testDeps(t);
  // The local queue's table, as the runtime creates it at start.
  await ensureQueueTable(queueDbOf(t.db));
  deps = { ...core, queue: tableQueue(t.db) };
  api = createApi(deps);
  root = await seedTenant(t, core);
  child = await seedTenant(t, core, { parent: root.instance });
  sibling = await seedTenant(t, core);
});

afterAll(() => t?.db.raw.destroy());

const hooks = (instance: Tenant) => `/api/f/${instance.instance.key}/webhooks`;

describe('webhooks collection', () => {
  it('creates a subscription with defaults and shows its secret once', async () => {
    const r = await api.post(hooks(root), { token: root.tokens.Operator, body: { CommonName: 'mine', Url: 'http://127.0.0.1:9/x' } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.$type).toBe('Gatehouse.Model.WebhookSubscriptionInfo, Gatehouse.Model');
    expect(r.body.Topics).toEqual([`/${root.instance.key}/$`]);
    expect(r.body.IncludeAuditEvents).toBe(true);
    expect(r.body.Enabled).toBe(true);
    expect(r.body.Secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(r.body.Secret.slice(6), 'base64')).toHaveLength(32);
    expect(r.body.Href).toBe(`${hooks(root)}/${r.body.Key}`);

    const read = await api.get(r.body.Href, { token: root.tokens.ReadOnly });
    expect(read.status).toBe(200);
    expect(read.body.Secret).toBeUndefined();
    expect(read.text).not.toContain(r.body.Secret.slice(6));
    const list = await api.get(hooks(root), { token: root.tokens.ReadOnly });
    expect(list.body.map((h: any) => h.Key)).toContain(r.body.Key);
    expect(list.text).not.toContain(r.body.Secret.slice(6));

    // Every link resolves: deliveries lists, the calls answer 405 to GET.
    for (const l of read.body.Links) {
      const got = await api.get(`${r.body.Href}/${l.Anchor.Href}`, { token: root.tokens.ReadOnly });
      if (l.Relation === 'Deliveries') expect(got.status).toBe(200);
      else expect([got.status, got.headers.allow]).toEqual([405, 'POST']);
    }
  });

  it('is linked from the instance (not from a folder), and a folder has no webhooks', async () => {
    const inst = await api.get(`/api/f/${root.instance.key}`, { token: root.tokens.ReadOnly });
    const link = inst.body.Links.find((l: any) => l.Relation === 'Webhooks');
    expect(link.Anchor.Href).toBe('webhooks');
    expect((await api.get(`${inst.body.Href}/${link.Anchor.Href}`, { token: root.tokens.ReadOnly })).status).toBe(200);
    const folder = await api.post(`/api/f/${root.instance.key}/folders`, { token: root.tokens.Operator, body: { $type: 'FolderInfo', CommonName: 'f' } });
    expect(folder.body.Links.some((l: any) => l.Relation === 'Webhooks')).toBe(false);
    const none = await api.get(`/api/f/${folder.body.Key}/webhooks`, { token: root.tokens.Operator });
    expect(none.status).toBe(404);
  });

  it('replaces and deletes a subscription', async () => {
    const c = await api.post(hooks(root), { token: root.tokens.Administrator, body: { Url: 'http://localhost:9/x' } });
    const put = await api.put(c.body.Href, {
      token: root.tokens.Operator,
      body: { CommonName: 'renamed', Url: 'http://localhost:9/y', Enabled: false, MinimumPriority: 3, IncludeAuditEvents: false, ConcurrencyVersion: 1 },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ CommonName: 'renamed', Url: 'http://localhost:9/y', Enabled: false, MinimumPriority: 3, IncludeAuditEvents: false, ConcurrencyVersion: 2 });
    const stale = await api.put(c.body.Href, { token: root.tokens.Operator, body: { Url: 'http://localhost:9/z', ConcurrencyVersion: 1 } });
    expect(stale.status).toBe(409);
    expect((await api.del(c.body.Href, { token: root.tokens.Operator })).status).toBe(204);
    expect((await api.get(c.body.Href, { token: root.tokens.Operator })).status).toBe(404);
  });

  it('rejects URLs that are not https or name non-public addresses with 400 InvalidUrl', async () => {
    for (const Url of ['http://example.com/hook', 'ftp://example.com/', 'https://10.0.0.5/hook', 'https://169.254.169.254/latest', 'https://[fd00::1]/x', 'https://0.0.0.0/', 'not a url']) {
      const r = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url } });
      expect(r.status, Url).toBe(400);
      expect(r.body.Error, Url).toBe('InvalidUrl');
    }
    const ok = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'https://hooks.example.com/in' } });
    expect(ok.status).toBe(201);
  });

  it('rejects a topic outside the instance with 403 and a malformed one with 400', async () => {
    const out = await api.post(hooks(child), { token: root.tokens.Operator, body: { Url: 'https://h.example.com/', Topics: [`/${root.instance.key}/$`] } });
    expect(out.status).toBe(403);
    const other = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'https://h.example.com/', Topics: [`/${sibling.instance.key}/$`] } });
    expect(other.status).toBe(403);
    const bad = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'https://h.example.com/', Topics: ['everything'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.Error).toBe('InvalidTopic');
    const below = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'https://h.example.com/', Topics: [`/${child.instance.key}/$`] } });
    expect(below.status, below.text).toBe(201);
  });

  it('reads a subscription and the list beside their instance, and in one request on a Lambda environment\'s first GET', async () => {
    const made = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'https://h.example.com/together' } });
    expect(made.status, made.text).toBe(201);
    await withTimeline(t, async (timeline, idle) => {
      for (const path of [String(made.body.Href), hooks(root)]) {
        await idle();
        timeline.length = 0;
        const res = await api.get(path, { token: root.tokens.ReadOnly });
        expect(res.status, res.text).toBe(200);
        // The instance's read and the subscription's (or the list's) are both out before either is back.
        expect(timeline.slice(0, 2).every((e) => e.startsWith('start ')), timeline.join(', ')).toBe(true);
      }
    });
    // Where invocations run one at a time, a new environment's first GET of a subscription reads the
    // keys, the caller's status, the instance and the subscription as one BatchGetItem.
    const lambda = createApi({ ...testDeps(t, { config: { ...t.config, invocationsOneAtATime: true } }), queue: tableQueue(t.db) });
    const { result, commands } = await commandsOf(t, () => lambda.get(String(made.body.Href), { token: root.tokens.ReadOnly }));
    expect(result.status, result.text).toBe(200);
    expect(result.body.Url).toBe('https://h.example.com/together');
    expect(commands).toEqual(['BatchGetItem']);
  });

  it('lets ReadOnly users read but not manage, and keeps tenants apart', async () => {
    const ro = await api.post(hooks(root), { token: root.tokens.ReadOnly, body: { Url: 'https://h.example.com/' } });
    expect(ro.status).toBe(403);
    const mine = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'https://h.example.com/' } });
    expect((await api.del(mine.body.Href, { token: root.tokens.ReadOnly })).status).toBe(403);
    expect((await api.post(`${mine.body.Href}/rotatesecret`, { token: root.tokens.ReadOnly })).status).toBe(403);
    // A sibling tenant cannot see the root's webhooks, nor a child its parent's.
    expect((await api.get(hooks(root), { token: sibling.tokens.Administrator })).status).toBe(403);
    expect((await api.get(mine.body.Href, { token: child.tokens.Administrator })).status).toBe(403);
    // The parent manages its child's webhooks.
    const forChild = await api.post(hooks(child), { token: root.tokens.Operator, body: { Url: 'https://h.example.com/' } });
    expect(forChild.status).toBe(201);
    expect((await api.get(forChild.body.Href, { token: child.tokens.ReadOnly })).status).toBe(200);
  });
});

describe('webhook deliveries', () => {
  it('signs a test delivery that standardwebhooks verifies, and lists it', async () => {
    const rx = await receiver();
    try {
      const c = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: rx.url } });
      const r = await api.post(`${c.body.Href}/test`, { token: root.tokens.Operator });
      expect(r.status, r.text).toBe(200);
      expect(r.body.StatusCode).toBe(200);
      expect(rx.got).toHaveLength(1);
      const payload = verify(c.body.Secret, rx.got[0]!) as any;
      expect(payload.type).toBe('webhook.test');
      const d = await api.get(`${c.body.Href}/deliveries`, { token: root.tokens.ReadOnly });
      expect(d.body).toHaveLength(1);
      expect(d.body[0]).toMatchObject({ Attempt: 1, StatusCode: 200, EventKey: null });
    } finally {
      await rx.close();
    }
  });

  it('retries a failing receiver, signs with both secrets after rotation, and disables on 410', async () => {
    const rx = await receiver([500, 503]);
    try {
      const c = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: rx.url } });
      const rotated = await api.post(`${c.body.Href}/rotatesecret`, { token: root.tokens.Operator });
      expect(rotated.status).toBe(200);
      expect(rotated.body.Secret).not.toBe(c.body.Secret);
      const job = {
        webhookKey: c.body.Key,
        instanceKey: root.instance.key,
        eventKey: '0123456789abcdef01234567',
        messageId: messageIdOf('0123456789abcdef01234567', c.body.Key),
        type: 'event',
        timestamp: new Date().toISOString(),
        data: { Key: '0123456789abcdef01234567' },
        attempt: 1,
        notBefore: Date.now(),
      };
      expect((await handleJob(deps, job)).kind).toBe('retrying');
      expect((await handleJob(deps, { ...job, attempt: 2 })).kind).toBe('retrying');
      expect((await handleJob(deps, { ...job, attempt: 3 })).kind).toBe('delivered');
      expect(rx.got).toHaveLength(3);
      for (const r of rx.got) {
        expect(r.headers['webhook-id']).toBe(job.messageId);
        expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
        verify(c.body.Secret, r);
        verify(rotated.body.Secret, r);
      }
      const d = await api.get(`${c.body.Href}/deliveries`, { token: root.tokens.Operator });
      expect(d.body.map((a: any) => a.Attempt)).toEqual([3, 2, 1]);
      expect(d.body[2]).toMatchObject({ StatusCode: 500 });
      expect(d.body[2].NextAttemptOn).toEqual(expect.any(String));

      const gone = await receiver([410]);
      try {
        await api.put(c.body.Href, { token: root.tokens.Operator, body: { Url: gone.url } });
        expect((await handleJob(deps, job)).kind).toBe('dead-lettered');
        const hook = await getWebhook(t.db, root.instance.key, c.body.Key);
        expect(hook?.settings.Enabled).toBe(false);
        expect(hook?.disabledReason).toMatch(/410/);
      } finally {
        await gone.close();
      }
    } finally {
      await rx.close();
    }
  });

  it('reads a subscription for the sender once a second, and again at once after a write of this process', async () => {
    const c = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'http://localhost:9/a' } });
    const read = (now?: number) => commandsOf(t, () => getRecentWebhook(t.db, root.instance.key, c.body.Key, now));
    const start = Date.now();

    const first = await read(start);
    const again = await read(start + RECENT_WEBHOOK_MS - 1);
    expect([first.commands, again.commands]).toEqual([['GetItem'], []]);
    expect(again.result).toEqual(first.result);
    // A second later it is read again.
    expect((await read(start + RECENT_WEBHOOK_MS)).commands).toEqual(['GetItem']);

    // A change through the API (same process) applies to the next delivery.
    const put = await api.put(c.body.Href, { token: root.tokens.Operator, body: { Url: 'http://localhost:9/b' } });
    expect(put.status, put.text).toBe(200);
    const changed = await read();
    expect([changed.commands, changed.result?.settings.Url]).toEqual([['GetItem'], 'http://localhost:9/b']);

    // A read answered after a write ended is not kept: it may hold what the write replaced. Its
    // answer is held back here until the write is done.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding = true;
    t.db.doc.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (holding && /^Get(Item)?Command$/.test(context.commandName ?? '')) {
          holding = false;
          await held;
        }
        return out;
      },
      { step: 'initialize', name: 'holdOneGetItem' },
    );
    try {
      // (Past the second of the read above, so it is read again.)
      const during = getRecentWebhook(t.db, root.instance.key, c.body.Key, Date.now() + RECENT_WEBHOOK_MS);
      await expect.poll(() => holding).toBe(false);
      await recordWebhookOutcome(t.db, { instanceKey: root.instance.key, key: c.body.Key }, { kind: 'delivered', at: new Date().toISOString() });
      release();
      expect((await during)?.lastDeliveryOn).toBeNull();
    } finally {
      t.db.doc.middlewareStack.remove('holdOneGetItem');
    }
    const after = await read();
    expect(after.commands).toEqual(['GetItem']);
    expect(after.result?.lastDeliveryOn).toEqual(expect.any(String));

    // A deleted subscription is seen as gone at once as well.
    expect((await api.del(c.body.Href, { token: root.tokens.Operator })).status).toBe(204);
    expect((await read()).result).toBeUndefined();
  });

  it('queues local jobs in a table of their own, and moves those an earlier version left in the main table', async () => {
    const queueDb = queueDbOf(t.db);
    const job = {
      webhookKey: 'w'.repeat(24),
      instanceKey: root.instance.key,
      eventKey: null,
      messageId: 'msg_queue_table',
      type: 'webhook.test',
      timestamp: new Date().toISOString(),
      data: {},
      attempt: 1,
      notBefore: Date.now(),
    };
    const later = Date.now() + 60_000;

    await tableQueue(t.db).send([job]);

    const queued = (await dueJobs(queueDb, later, 100)).jobs.filter((j) => j.webhookKey === job.webhookKey);
    expect(queued).toHaveLength(1);
    expect(JSON.parse((await queuedJobBody(queueDb, queued[0]!.id))!)).toMatchObject({ messageId: 'msg_queue_table' });
    // Nothing of it in the main table, whose stream the fan-out reads.
    expect((await dueJobs(t.db, later, 100)).jobs).toEqual([]);

    // A job in the main table's queue partition (as earlier versions kept them) moves over once.
    const [old] = await putQueuedJobs(t.db, [{ jobId: 'old', webhookKey: 'o'.repeat(24), instanceKey: 'i'.repeat(24), dueAt: Date.now(), body: '{"old":true}' }], 0);
    expect(await moveQueuedJobs(t.db, queueDb)).toBe(1);
    expect(await moveQueuedJobs(t.db, queueDb)).toBe(0);
    expect((await dueJobs(t.db, later, 100)).jobs).toEqual([]);
    expect(await queuedJobBody(queueDb, old!.id)).toBe('{"old":true}');
  });

  it('records a delivery to a name that resolves to a refused address as a failed attempt with a clear error', async () => {
    const c = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: 'http://localhost:9/hook' } });
    // The same subscription where loopback is not allowed (as in AWS): refused when the name is resolved.
    const strict = { ...deps, config: { ...deps.config, webhookAllowLoopback: false } };
    const job = {
      webhookKey: c.body.Key,
      instanceKey: root.instance.key,
      eventKey: '0123456789abcdef0123456c',
      messageId: messageIdOf('0123456789abcdef0123456c', c.body.Key),
      type: 'event',
      timestamp: new Date().toISOString(),
      data: { Key: '0123456789abcdef0123456c' },
      attempt: 1,
      notBefore: Date.now(),
    };
    expect((await handleJob(strict, job)).kind).toBe('retrying');
    const d = await api.get(`${c.body.Href}/deliveries`, { token: root.tokens.Operator });
    // The tenant sees a generic reason; which address the name resolved to is for the server log.
    expect(d.body[0]).toMatchObject({ Attempt: 1, EventKey: job.eventKey, Error: 'Could not connect to the receiver.' });
    expect(d.body[0].StatusCode).toBeUndefined();
  });

  it('refuses a name that resolves to a non-public address, at delivery time, with a generic error and the detail for the log', async () => {
    // `localhost` is no literal address: only resolving it shows it is loopback.
    const byName = await postOnce('https://localhost/x', {}, '{}', { allowLoopback: false });
    expect(byName.statusCode).toBeNull();
    expect(byName.error).toBe('Could not connect to the receiver.');
    expect(byName.detail).toMatch(/^Refused: localhost resolves to .* a loopback address\.$/);
    const literal = await postOnce('https://192.168.1.10/x', {}, '{}', { allowLoopback: true });
    expect(literal).toMatchObject({ error: 'Could not connect to the receiver.', detail: 'Refused: 192.168.1.10 is a private address.' });
  });

  it('keeps the connection to a receiver for the next delivery, but not across address policies', async () => {
    const connections: string[] = [];
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end());
    });
    server.on('connection', (socket) => connections.push(String(socket.remotePort)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    // A name, not a literal address: only resolving it when connecting shows it is loopback.
    const url = `http://localhost:${(server.address() as AddressInfo).port}/hook`;
    try {
      for (let i = 0; i < 3; i++) expect((await postOnce(url, {}, '{}', { allowLoopback: true })).statusCode).toBe(200);
      expect(connections).toHaveLength(1);
      // The same receiver under the strict policy: the kept connection is not reused, and the new
      // one is refused when the name resolves.
      const strict = await postOnce(url, {}, '{}', { allowLoopback: false });
      expect(strict.statusCode).toBeNull();
      expect(strict.detail).toMatch(/^Refused: localhost resolves to .* a loopback address\.$/);
      expect(connections).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('sends again, once, on a new connection when a kept one turns out closed', async () => {
    // A receiver that answers the first request of each connection, keeps it open, and resets it
    // when a second request comes on it (as one does that closed it while it was idle).
    const connections: Socket[] = [];
    const server = createNetServer((socket) => {
      connections.push(socket);
      let requests = 0;
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        if (!buffered.includes('\r\n\r\n') || !buffered.endsWith('{}')) return;
        buffered = '';
        if (++requests > 1) return void socket.resetAndDestroy();
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n');
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    try {
      expect((await postOnce(url, {}, '{}', { allowLoopback: true })).statusCode).toBe(200);
      const again = await postOnce(url, {}, '{}', { allowLoopback: true });
      expect(again).toMatchObject({ statusCode: 200, error: null });
      expect(connections).toHaveLength(2);
    } finally {
      for (const c of connections) c.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('handles a queue batch: delivers a due job, hands an early one back, drops what is not a job', async () => {
    const rx = await receiver();
    try {
      const c = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: rx.url } });
      const job = {
        webhookKey: c.body.Key,
        instanceKey: root.instance.key,
        eventKey: '0123456789abcdef0123456a',
        messageId: messageIdOf('0123456789abcdef0123456a', c.body.Key),
        type: 'event',
        timestamp: new Date().toISOString(),
        data: { Key: '0123456789abcdef0123456a' },
        attempt: 1,
        notBefore: Date.now(),
      };
      const record = (messageId: string, body: string) => ({
        messageId,
        receiptHandle: messageId,
        body,
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:local:000000000000:jobs',
        awsRegion: 'local',
      });
      const res = await handleQueueBatch(deps, {
        Records: [record('due', JSON.stringify(job)), record('early', JSON.stringify({ ...job, notBefore: Date.now() + 3_600_000 })), record('junk', '{"not":"a job"}')],
      });
      expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'early' }]);
      expect(rx.got).toHaveLength(1);
      expect(rx.got[0]!.headers['webhook-id']).toBe(job.messageId);
    } finally {
      await rx.close();
    }
  });

  it('disables a subscription after five days of failures without a success (the window scaled down)', async () => {
    const rx = await receiver([500, 500, 500]);
    try {
      const c = await api.post(hooks(root), { token: root.tokens.Operator, body: { Url: rx.url } });
      // Five days times 1e-7: 43 ms.
      const fast = { ...deps, config: { ...deps.config, webhookRetryScale: 1e-7 } };
      const job = {
        webhookKey: c.body.Key,
        instanceKey: root.instance.key,
        eventKey: '0123456789abcdef0123456b',
        messageId: messageIdOf('0123456789abcdef0123456b', c.body.Key),
        type: 'event',
        timestamp: new Date().toISOString(),
        data: { Key: '0123456789abcdef0123456b' },
        attempt: 1,
        notBefore: Date.now(),
      };
      expect((await handleJob(fast, job)).kind).toBe('retrying');
      expect((await getWebhook(t.db, root.instance.key, c.body.Key))?.failingSince).toEqual(expect.any(String));
      await new Promise((r) => setTimeout(r, 100));
      expect((await handleJob(fast, { ...job, attempt: 2 })).kind).toBe('dead-lettered');
      const hook = await getWebhook(t.db, root.instance.key, c.body.Key);
      expect(hook?.settings.Enabled).toBe(false);
      expect(hook?.disabledReason).toBe(DISABLED_FAILING);
      // Enabling it again ends the streak.
      const on = await api.put(c.body.Href, { token: root.tokens.Operator, body: { Url: rx.url, Enabled: true } });
      expect(on.body).toMatchObject({ Enabled: true, DisabledReason: null });
      expect((await getWebhook(t.db, root.instance.key, c.body.Key))?.failingSince).toBeNull();
    } finally {
      await rx.close();
    }
  });
});
