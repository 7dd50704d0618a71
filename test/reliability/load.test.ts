/**
 * Load on the real local runtime (a child process on the run's DynamoDB Local, its own table):
 * a mixed workload from parallel clients for 60 s (GATEHOUSE_LOAD_SECONDS overrides it): each
 * client logs in over HTTP (and again every few rounds), then creates a person, reads it, updates
 * it with its ConcurrencyVersion, searches it by name, publishes an event about it and, every few
 * rounds, deletes it, while WebSocket subscribers watch the instance. Zero 5xx, every
 * acknowledged write readable afterwards with its last value (and every delete gone), and every
 * published event received by each subscriber exactly once. Prints the throughput and the latency
 * percentiles, overall and per operation.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertDocumented } from '../support/openapi-validator.ts';
import { newRuntimeAdmin, openLiveClient, spawnSeededRuntime, type LiveClient, type SpawnedRuntime } from '../support/runtime.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';

/** Parallel clients: with the runtime, DynamoDB Local and this process on two cores, more only queue. */
const CLIENTS = 6;
const SUBSCRIBERS = 2;
const DURATION_MS = seconds(process.env.GATEHOUSE_LOAD_SECONDS, 60) * 1000;
/** Each client logs in again every this many rounds (a login is a ~350 ms scrypt on one core). */
const LOGIN_EVERY = 25;
/** Every this many rounds the client deletes the person it made. */
const DELETE_EVERY = 4;
const DELIVERY_WAIT_MS = 20_000;

function seconds(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`GATEHOUSE_LOAD_SECONDS must be a positive number of seconds, not "${raw}"`);
  return n;
}
const admin = newRuntimeAdmin('Load');

let runtime: SpawnedRuntime;
let dataDir: string;
const subscribers: LiveClient[] = [];

interface Sample {
  readonly op: string;
  readonly status: number;
  readonly ms: number;
}
const samples: Sample[] = [];

async function call(op: string, method: string, path: string, opts: { token?: string; body?: unknown; form?: Record<string, string> } = {}) {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  } else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const started = performance.now();
  const res = await fetch(`${runtime.url}${path}`, { method, headers, body });
  const text = await res.text();
  samples.push({ op, status: res.status, ms: performance.now() - started });
  // Checked after the clock stopped, so the check does not count in the latencies.
  assertDocumented({ method, path: path.split('?')[0]!, status: res.status, contentType: res.headers.get('content-type') ?? undefined, text });
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text };
}

const login = async () => {
  const r = await call('login', 'POST', '/token', {
    form: { grant_type: 'password', client_id: 'consoleApp', client_secret: admin.clientSecret, instance: admin.instanceName, username: admin.userName, password: admin.password },
  });
  expect(r.status, r.text).toBe(200);
  return r.body.access_token as string;
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

beforeAll(async () => {
  ({ runtime, dataDir } = await spawnSeededRuntime(dynamoEndpoint(), admin, {
    // This measures the service, not API Gateway's stage throttling (reliability/throttle.test.ts).
    GATEHOUSE_THROTTLE_RATE: '0',
  }));
}, 90_000);

afterAll(async () => {
  await Promise.all(subscribers.map((s) => s.close()));
  await runtime?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('load', () => {
  it(`serves ${CLIENTS} parallel clients of a mixed workload for ${DURATION_MS / 1000} s with no 5xx, no lost write and no lost or duplicated event`, { timeout: DURATION_MS + 180_000 }, async () => {
    const inst = runtime.instanceKey;
    const base = `/api/f/${inst}`;
    // The first logins one after the other, so the workload starts together.
    const tokens: string[] = [];
    for (let c = 0; c < CLIENTS; c++) tokens.push(await login());

    // An app (by moniker) and an event type to publish, and the subscribers.
    const nickname = `LoadApp-${randomBytes(4).toString('hex')}`;
    const app = await call('setup', 'POST', `${base}/apps`, { token: tokens[0], body: { $type: 'AppInfo', CommonName: nickname, Monikers: [{ Namespace: 'Load', Nickname: nickname }] } });
    expect(app.status, app.text).toBe(201);
    const type = await call('setup', 'PUT', `${app.body.Href}/eventtypes`, { token: tokens[0], body: { $type: 'EventTypeInfo', CommonName: 'Load', Monikers: [{ Namespace: 'Load', Nickname: 'Tick' }], Priority: 3 } });
    expect(type.status, type.text).toBe(201);
    const topic = `/${inst}/$`;
    /** Per subscriber: how many times each event of the type arrived. */
    const received: Array<Map<string, number>> = [];
    for (let s = 0; s < SUBSCRIBERS; s++) {
      const ws = await openLiveClient(runtime.wsUrl, { token: tokens[s % CLIENTS] });
      subscribers.push(ws);
      const counts = new Map<string, number>();
      received.push(counts);
      // Every frame is counted as it arrives (audit events of the workload reach the topic too).
      ws.ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { type?: string; event?: { Key: string; EventTypeKey?: string } };
        const event = m.type === 'event' ? m.event : undefined;
        if (event && event.EventTypeKey === type.body.Key) counts.set(event.Key, (counts.get(event.Key) ?? 0) + 1);
      });
      ws.send({ action: 'subscribe', topic });
      expect(await ws.next(10_000)).toEqual({ type: 'subscribed', topic });
    }
    const published = new Set<string>();

    // The workload.
    const unexpected: string[] = [];
    const check = (what: string, r: { status: number; text: string }, want: number) => {
      if (r.status !== want) unexpected.push(`${what} → ${r.status} ${r.text.slice(0, 200)}`);
      return r.status === want;
    };
    const written = new Map<string, { href: string; surname: string }>();
    const deleted = new Map<string, string>();
    const started = performance.now();
    const deadline = Date.now() + DURATION_MS;
    const loadStart = samples.length;
    await Promise.all(
      tokens.map(async (first, c) => {
        let token = first;
        for (let i = 1; Date.now() < deadline; i++) {
          // Staggered, so the clients' logins do not all fall in the same round.
          if ((i + c * 4) % LOGIN_EVERY === 0) token = await login();
          const name = `load-${c}-${i}-${randomBytes(3).toString('hex')}`;
          const created = await call('create', 'POST', `${base}/people`, { token, body: { $type: 'PersonInfo', CommonName: name, GivenName: 'Load', Surname: 'v1' } });
          if (!check('create', created, 201)) continue;
          written.set(created.body.Key, { href: created.body.Href, surname: 'v1' });
          const got = await call('get', 'GET', created.body.Href, { token });
          if (!check('get', got, 200)) continue;
          const surname = `v2-${i}`;
          const put = await call('put', 'PUT', created.body.Href, { token, body: { ...got.body, Surname: surname } });
          if (check('put', put, 200)) written.set(created.body.Key, { href: created.body.Href, surname });
          const found = await call('search', 'POST', `${base}/search`, { token, body: `{ '_t': 'Person', 'CommonName': '${name}' }` });
          if (check('search', found, 200) && (found.body as unknown[]).length !== 1) unexpected.push(`search ${name} → ${found.body.length} results`);
          const ev = await call('publish', 'POST', `${base}/eventmessagesink`, {
            token,
            body: {
              $type: 'EventMessagePosting',
              OccurredOn: new Date().toISOString(),
              AppKey: nickname,
              EventTypeMoniker: { Namespace: 'Load', Nickname: 'Tick' },
              RelatedObjects: [{ $type: 'ObjectLinkItem', LinkedObjectKey: created.body.Key, Relation: 'Person' }],
              EventDataBsonBase64: null,
            },
          });
          if (check('publish', ev, 201)) published.add(ev.body.Key);
          if (i % DELETE_EVERY === 0) {
            const del = await call('delete', 'DELETE', created.body.Href, { token });
            if (check('delete', del, 204)) {
              written.delete(created.body.Key);
              deleted.set(created.body.Key, created.body.Href);
            }
          }
        }
      }),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const load = samples.slice(loadStart);

    // Every published event arrives once at each subscriber within the wait; nothing arrives twice
    // a little later.
    const missing = () => received.reduce((n, counts) => n + [...published].filter((k) => !counts.has(k)).length, 0);
    const waitStarted = performance.now();
    const until = Date.now() + DELIVERY_WAIT_MS;
    while (Date.now() < until && missing() > 0) await new Promise((r) => setTimeout(r, 100));
    const drainedS = (performance.now() - waitStarted) / 1000;
    await new Promise((r) => setTimeout(r, 1500));
    const lostEvents = missing();
    const duplicated = received.reduce((n, counts) => n + [...counts.values()].filter((x) => x > 1).length, 0);
    const stray = received.reduce((n, counts) => n + [...counts.keys()].filter((k) => !published.has(k)).length, 0);

    // Every acknowledged write is readable with its last acknowledged value; every delete is gone.
    let lostWrites = 0;
    let resurrected = 0;
    const checks = [...[...written.values()].map((w) => ({ href: w.href, surname: w.surname as string | undefined })), ...[...deleted.values()].map((href) => ({ href, surname: undefined }))];
    for (let i = 0; i < checks.length; i += 12) {
      await Promise.all(
        checks.slice(i, i + 12).map(async (w) => {
          const r = await call('verify', 'GET', w.href, { token: tokens[0] });
          if (w.surname === undefined) {
            if (r.status !== 404) resurrected++;
          } else if (r.status !== 200 || r.body.Surname !== w.surname) lostWrites++;
        }),
      );
    }

    const fiveXx = samples.filter((s) => s.status >= 500).length;
    const ms = (list: Sample[]) => list.map((s) => s.ms).sort((a, b) => a - b);
    const pcts = (sorted: number[]) => `p50 ${percentile(sorted, 50).toFixed(0)} ms, p95 ${percentile(sorted, 95).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms`;
    const ops = ['login', 'create', 'get', 'put', 'search', 'publish', 'delete'];
    const byOp = ops
      .map((op) => load.filter((s) => s.op === op))
      .filter((l) => l.length > 0)
      .map((l) => `  ${l[0]!.op.padEnd(8)} ${String(l.length).padStart(6)} × ${pcts(ms(l))}`);
    console.info(
      [
        `[reliability/load] ${CLIENTS} clients × ${elapsedS.toFixed(1)} s, ${SUBSCRIBERS} subscribers: ${load.length} requests, ${(load.length / elapsedS).toFixed(1)} req/s, ${pcts(ms(load))}`,
        ...byOp,
        `  5xx: ${fiveXx}; writes kept: ${written.size}, lost: ${lostWrites}; deletes: ${deleted.size}, resurrected: ${resurrected}; ` +
          `events: ${published.size} × ${SUBSCRIBERS} subscribers, lost: ${lostEvents}, duplicated: ${duplicated}, stray: ${stray}, all delivered ${drainedS.toFixed(1)} s after the load`,
      ].join('\n'),
    );
    expect(unexpected).toEqual([]);
    expect(fiveXx).toBe(0);
    expect(written.size).toBeGreaterThan(0);
    expect(deleted.size).toBeGreaterThan(0);
    expect(published.size).toBeGreaterThan(0);
    expect(load.some((s) => s.op === 'login')).toBe(true);
    expect(lostWrites).toBe(0);
    expect(resurrected).toBe(0);
    expect(lostEvents).toBe(0);
    expect(duplicated).toBe(0);
    expect(stray).toBe(0);
  });
});
