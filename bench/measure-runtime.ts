/**
 * fanout and http: the local runtime (`startRuntime`, in this process, on a free port, over the
 * benchmark's DynamoDB Local with its own table) spoken to over real sockets, as a client would.
 *
 * - fanout: a WebSocket subscriber of the instance, events published by parallel HTTP clients,
 *   publish-to-delivery latency and events lost.
 * - http: autocannon (in a worker thread, so the load generator does not share the server's event
 *   loop) against GET person and event publish, and against bare `node:http` servers doing the
 *   same DynamoDB work without the pipeline (the same GetItem; the same event transaction).
 */
import { randomBytes } from 'node:crypto';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { DynamoDBRecord } from 'aws-lambda';
import autocannon from 'autocannon';
import { deserialize } from 'bson';
import mqtt from 'mqtt';
import { WebSocket } from 'ws';
import { seedDeployment } from '#shared/auth/bootstrap.ts';
import { DEFAULT_CLIENT_ID } from '#shared/auth/token-request.ts';
import { config as runtimeConfig, loadConfig } from '#shared/config.ts';
import { createDb, type Db } from '#shared/db/client.ts';
import { putEvent } from '#shared/db/events-repo.ts';
import { getObject } from '#shared/db/objects-repo.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { OBJECT_SK, objectPk } from '#shared/db/item-keys.ts';
import { createCoreDeps } from '#shared/core-deps.ts';
import { eventFromStreamRecord } from '#shared/db/live-repo.ts';
import { eventWrite } from '#shared/events/publish.ts';
import { subscriberCache } from '#shared/live/websocket/subscriber-cache.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';
import { freePort } from '#local/dynamo.ts';
import { startRuntime, type Runtime } from '#local/server.ts';
import type { ReadTrigger, StreamPollObserver, StreamPollerStats } from '#local/stream-poller.ts';
import { posting, type EventSetup } from './measure-capacity.ts';
import { AWS_STREAM_POLLING, type Fanout, type FanoutBreakdown, type Http, type HttpFloor, type HttpScenario, type Measured } from './results.ts';
import { combineRuns, orNull, ratioOf, round, summarize, type LoadRun } from './stats.ts';

/** Issue #17: publish-to-receive p50 and p99 in a full run, nothing lost. */
const FANOUT_P50_GOAL_MS = 150;
const FANOUT_P99_GOAL_MS = 400;
const FANOUT_GOAL = `lost = 0, p50 <= ${FANOUT_P50_GOAL_MS} ms and p99 <= ${FANOUT_P99_GOAL_MS} ms`;
/** Issue #17: the runtime's GET person throughput at least this share of the bare server's. */
const HTTP_GET_SHARE_GOAL = 0.85;
/** The runtime's stream poll interval when idle (its default, as `npm start` runs). */
const STREAM_POLL_IDLE_MS = 200;
const PASSWORD = 'Bench-Runtime-Passw0rd!';

export interface BenchRuntime {
  readonly runtime: Runtime;
  /** `http://127.0.0.1:<port>` (the runtime listens on the loopback address). */
  readonly base: string;
  readonly ws: string;
  readonly token: string;
  /** The seeded administrator's password login (the console signs in with it). */
  readonly login: { readonly instance: string; readonly userName: string; readonly password: string };
  readonly instanceKey: string;
  readonly personHref: string;
  readonly personKey: string;
  readonly related: ReadonlyArray<{ key: string; name: string }>;
  readonly events: { setup?: EventSetup; reason?: string };
  readonly tableName: string;
  readonly endpoint: string;
  /** The stream poller's timings of each event record, by event key. */
  readonly stream: StreamTimings;
  call(method: string, path: string, body?: unknown, opts?: { form?: boolean; noAuth?: boolean }): Promise<{ status: number; body: any; text: string }>;
  stop(): Promise<void>;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** What the runtime's stream poller did with each event record (`performance.now()` times). */
interface StreamTimings {
  readonly reads: Map<string, { readonly trigger: ReadTrigger; readonly startedAt: number; readonly endedAt: number; readonly batch: number }>;
  readonly deliveries: Map<string, { readonly startedAt: number; readonly endedAt: number }>;
  stats(): StreamPollerStats;
}

/** An observer filling `timings` (event records only; the poller's other records are skipped). */
function streamObserver(timings: Pick<StreamTimings, 'reads' | 'deliveries'>): StreamPollObserver {
  const keysOf = (records: readonly DynamoDBRecord[]) => records.flatMap((r) => eventFromStreamRecord(r)?.key ?? []);
  return {
    read: ({ trigger, startedAt, endedAt, records }) => {
      for (const key of keysOf(records)) timings.reads.set(key, { trigger, startedAt, endedAt, batch: records.length });
    },
    delivered: ({ startedAt, endedAt, records }) => {
      for (const key of keysOf(records)) timings.deliveries.set(key, { startedAt, endedAt });
    },
  };
}

function httpCall(base: string, token: string | undefined, method: string, path: string, body?: unknown, form = false): Promise<{ status: number; body: any; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const req = request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
          ...(data ? { 'content-length': String(data.length) } : {}),
        },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(data);
  });
}

/** Starts the runtime on its own table of `endpoint`, seeds an instance, logs in, and makes the objects used. */
export async function startBenchRuntime(endpoint: string, baseDir: string): Promise<BenchRuntime> {
  const tableName = `bench-rt-${randomBytes(4).toString('hex')}`;
  // The runtime's handlers read their settings from the environment once (shared/config.ts).
  process.env.GATEHOUSE_TABLE_NAME = tableName;
  process.env.GATEHOUSE_LOG_LEVEL = 'ERROR';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const dataDir = join(baseDir, tableName);
  const timings = { reads: new Map(), deliveries: new Map() } satisfies Pick<StreamTimings, 'reads' | 'deliveries'>;
  const runtime = await startRuntime({
    port: await freePort(),
    dataDir,
    dynamodbEndpoint: endpoint,
    pollIntervalMs: STREAM_POLL_IDLE_MS,
    streamObserver: streamObserver(timings),
  });
  const stop = async () => {
    agent.destroy();
    await runtime.stop();
  };
  try {
    const cfg = runtimeConfig();
    const deps = createCoreDeps();
    const seeded = await seedDeployment(deps, { instanceName: 'BenchRuntime', adminUser: 'admin', adminPassword: PASSWORD, clientSecret: cfg.clientSecret, dataDir: cfg.dataDir });
    deps.db.raw.destroy();
    const base = `http://127.0.0.1:${runtime.port}`;
    const login = await httpCall(
      base,
      undefined,
      'POST',
      '/token',
      new URLSearchParams({ grant_type: 'password', client_id: DEFAULT_CLIENT_ID, client_secret: cfg.clientSecret, instance: 'BenchRuntime', username: 'admin', password: PASSWORD }).toString(),
      true,
    );
    if (login.status !== 200) throw new Error(`runtime login answered ${login.status}: ${login.text.slice(0, 200)}`);
    const token = String(login.body.access_token);
    const call = (method: string, path: string, body?: unknown, opts: { form?: boolean; noAuth?: boolean } = {}) =>
      httpCall(base, opts.noAuth ? undefined : token, method, path, body, opts.form);
    const instanceKey = seeded.instanceKey;
    const related: Array<{ key: string; name: string }> = [];
    for (let i = 0; i < 3; i++) {
      const p = await call('POST', `/api/f/${instanceKey}/people`, { $type: 'PersonInfo', CommonName: `Related ${i}`, GivenName: 'Related', Surname: String(i) });
      if (p.status !== 201) throw new Error(`runtime POST person answered ${p.status}: ${p.text.slice(0, 200)}`);
      related.push({ key: String(p.body.Key), name: `Related ${i}` });
    }
    const person = await call('GET', `/api/f/${instanceKey}/people/${related[0]!.key}`);
    if (person.status !== 200) throw new Error(`runtime GET person answered ${person.status}`);
    let events: { setup?: EventSetup; reason?: string };
    const app = await call('POST', `/api/f/${instanceKey}/apps`, { $type: 'AppInfo', CommonName: 'bench app', Monikers: [{ Namespace: 'bench', Nickname: 'app' }] });
    if (app.status !== 201) events = { reason: `POST apps answered ${app.status}: ${app.text.slice(0, 200)}` };
    else {
      const type = await call('PUT', `${app.body.Href}/eventtypes`, {
        $type: 'EventTypeInfo',
        CommonName: 'door',
        Monikers: [{ Namespace: 'bench', Nickname: 'door' }],
        Priority: 1,
        MessageTemplateShort: '{Name}',
      });
      events =
        type.status === 201
          ? { setup: { appNickname: 'app', namespace: 'bench', typeNickname: 'door', eventTypeKey: String(type.body.Key) } }
          : { reason: `PUT apps/<key>/eventtypes answered ${type.status}: ${type.text.slice(0, 200)}` };
    }
    return {
      runtime,
      base,
      ws: `ws://127.0.0.1:${runtime.port}/events`,
      token,
      login: { instance: 'BenchRuntime', userName: 'admin', password: PASSWORD },
      instanceKey,
      personHref: String(person.body.Href),
      personKey: related[0]!.key,
      related,
      events,
      tableName,
      endpoint,
      stream: { ...timings, stats: () => runtime.streamPollerStats() },
      call,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface FanoutInput {
  readonly rt: BenchRuntime;
  readonly events: number;
  readonly clients: number;
  /** How long to wait for deliveries after the last publish. */
  readonly settleMs: number;
  /** No publish starts after this time (epoch ms); what was published by then is measured. */
  readonly publishDeadline: number;
  readonly measured: () => Measured;
  /** Told where the phase stands, so a phase cut off by its time limit can say how far it got. */
  readonly progress?: FanoutProgress;
}

/** Where a fan-out measurement stands: its step, and the events published and received so far. */
export interface FanoutProgress {
  step: string;
  published: number;
  publishFailures: number;
  delivered: number;
  mqttDelivered: number;
}

export function newFanoutProgress(): FanoutProgress {
  return { step: 'not started', published: 0, publishFailures: 0, delivered: 0, mqttDelivered: 0 };
}

export function describeFanoutProgress(p: FanoutProgress): string {
  return `at "${p.step}": ${p.published} published (${p.publishFailures} failed), ${p.delivered} received over WebSocket and ${p.mqttDelivered} over MQTT (the warming publish included)`;
}

function fanoutNotMeasured(input: FanoutInput, reason: string): Fanout {
  return {
    events: input.events,
    published: 0,
    delivered: 0,
    lost: null,
    duplicates: null,
    clients: input.clients,
    latencyMs: null,
    publishMs: null,
    afterAnswerMs: null,
    messageBytes: null,
    streamPollIdleMs: STREAM_POLL_IDLE_MS,
    breakdown: null,
    aws: AWS_STREAM_POLLING,
    mqtt: null,
    floor: null,
    ratio: null,
    goal: FANOUT_GOAL,
    meetsGoal: false,
    note: `could not be measured: ${reason}`,
    measured: input.measured(),
  };
}

export async function measureFanout(input: FanoutInput): Promise<Fanout> {
  const { rt } = input;
  const e = rt.events.setup;
  if (!e) return fanoutNotMeasured(input, rt.events.reason ?? 'no event type');
  const progress = input.progress ?? newFanoutProgress();
  progress.step = 'connecting the MQTT subscriber';
  const ws = new WebSocket(`${rt.ws}?access_token=${encodeURIComponent(rt.token)}`);
  // Listened for at once: the socket may open while the MQTT subscriber below connects.
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`WebSocket handshake answered ${res.statusCode}`)));
  });
  opened.catch(() => {});
  const topic = `/${rt.instanceKey}/$`;
  const receivedAt = new Map<string, number>();
  let duplicates = 0;
  let messageBytes = 0;
  let messages = 0;
  let subscribed!: () => void;
  const isSubscribed = new Promise<void>((r) => (subscribed = r));
  let allIn: (() => void) | undefined;
  let publishing = true;
  const sentAt = new Map<string, number>();
  const answeredAt = new Map<string, number>();
  // One MQTT subscriber of the same topic, as field clients of the original service connect.
  const mqttClient = await mqtt.connectAsync(rt.ws.replace(/\/events$/, '/mqtt'), {
    username: rt.token,
    protocolVersion: 4,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
  });
  const mqttReceivedAt = new Map<string, number>();
  let mqttDuplicates = 0;
  let mqttBytes = 0;
  let mqttMessages = 0;
  const everyoneHas = () => [...sentAt.keys()].every((k) => receivedAt.has(k) && mqttReceivedAt.has(k));
  mqttClient.on('message', (_topic, payload) => {
    const now = performance.now();
    const m = deserialize(payload) as { Key?: unknown; EventTypeKey?: unknown };
    if (m.EventTypeKey !== e.eventTypeKey) return;
    const key = String(m.Key);
    if (mqttReceivedAt.has(key)) mqttDuplicates++;
    else mqttReceivedAt.set(key, now);
    progress.mqttDelivered = mqttReceivedAt.size;
    mqttBytes += payload.byteLength;
    mqttMessages++;
    if (allIn && publishing === false && everyoneHas()) allIn();
  });
  ws.on('message', (data, isBinary) => {
    const now = performance.now();
    if (isBinary) return;
    const text = data.toString();
    let m: any;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (m?.type === 'subscribed' && m.topic === topic) subscribed();
    if (m?.type !== 'event' || m.event?.EventTypeKey !== e.eventTypeKey) return;
    const key = String(m.event.Key);
    if (receivedAt.has(key)) duplicates++;
    else receivedAt.set(key, now);
    progress.delivered = receivedAt.size;
    messageBytes += Buffer.byteLength(text);
    messages++;
    if (allIn && publishing === false && everyoneHas()) allIn();
  });
  try {
    progress.step = 'opening the WebSocket';
    await opened;
    progress.step = 'subscribing over WebSocket';
    ws.send(JSON.stringify({ action: 'subscribe', topic }));
    await withTimeout(isSubscribed, 10_000, 'no "subscribed" answer within 10 s');
    progress.step = 'subscribing over MQTT';
    await mqttClient.subscribeAsync(topic, { qos: 0 });
    progress.step = 'the warming publish';

    // Warm the publish path (caches of sink, app, event type and related objects); not counted.
    const warm = await rt.call('POST', `/api/f/${rt.instanceKey}/eventmessagesink`, posting(e, rt.related));
    if (warm.status !== 201) return fanoutNotMeasured(input, `publish answered ${warm.status}: ${warm.text.slice(0, 200)}`);

    const readsBefore = rt.stream.stats().reads;
    // The runtime runs the fan-out in this process: its subscriber cache is this module's.
    const subscriberQueriesBefore = subscriberCache.reads;
    const batchesBefore = sum(rt.stream.stats().readsWithRecords);
    const publishMs: number[] = [];
    const failures: string[] = [];
    let next = 0;
    progress.step = 'publishing';
    const client = async () => {
      while (next < input.events && Date.now() < input.publishDeadline) {
        const i = next++;
        const occurred = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
        const t0 = performance.now();
        const r = await rt.call('POST', `/api/f/${rt.instanceKey}/eventmessagesink`, posting(e, rt.related, occurred));
        const t1 = performance.now();
        if (r.status !== 201) {
          failures.push(`${r.status}`);
          progress.publishFailures = failures.length;
          continue;
        }
        progress.published++;
        publishMs.push(t1 - t0);
        sentAt.set(String(r.body.Key), t0);
        answeredAt.set(String(r.body.Key), t1);
      }
    };
    const done = new Promise<void>((r) => (allIn = r));
    await Promise.all(Array.from({ length: input.clients }, client));
    publishing = false;
    progress.step = 'waiting for the last deliveries';
    if (everyoneHas()) allIn!();
    await Promise.race([done, new Promise((r) => setTimeout(r, input.settleMs))]);
    // A moment more, to see duplicates arrive.
    await new Promise((r) => setTimeout(r, 300));

    const latencies: number[] = [];
    const afterAnswer: number[] = [];
    for (const [key, t0] of sentAt) {
      const t1 = receivedAt.get(key);
      if (t1 === undefined) continue;
      latencies.push(t1 - t0);
      afterAnswer.push(t1 - answeredAt.get(key)!);
    }
    const lost = sentAt.size - latencies.length;
    const subscriberReads = { queries: subscriberCache.reads - subscriberQueriesBefore, batches: sum(rt.stream.stats().readsWithRecords) - batchesBefore };
    const breakdown = fanoutBreakdown(rt.stream, answeredAt, receivedAt, readsBefore, subscriberReads);
    const lat = summarize(latencies);
    const mqttLatencies = [...sentAt].flatMap(([key, t0]) => (mqttReceivedAt.has(key) ? [mqttReceivedAt.get(key)! - t0] : []));
    const mqttFigures = {
      delivered: mqttLatencies.length,
      lost: sentAt.size - mqttLatencies.length,
      duplicates: mqttDuplicates,
      latencyMs: mqttLatencies.length ? summarize(mqttLatencies) : null,
      messageBytes: mqttMessages ? Math.round(mqttBytes / mqttMessages) : null,
    };
    const notes: string[] = [];
    if (failures.length) notes.push(`${failures.length} publishes failed (HTTP ${[...new Set(failures)].join(', ')})`);
    if (sentAt.size + failures.length < input.events) {
      notes.push(`only ${sentAt.size + failures.length} of ${input.events} events were published within the phase's time limit`);
    }
    if (lost) notes.push(`${lost} events were not delivered within ${input.settleMs} ms of the last publish`);
    return {
      events: input.events,
      published: sentAt.size,
      delivered: latencies.length,
      lost,
      duplicates,
      clients: input.clients,
      latencyMs: lat,
      publishMs: summarize(publishMs),
      afterAnswerMs: summarize(afterAnswer),
      messageBytes: messages ? Math.round(messageBytes / messages) : null,
      streamPollIdleMs: STREAM_POLL_IDLE_MS,
      breakdown,
      aws: AWS_STREAM_POLLING,
      mqtt: mqttFigures,
      floor: null,
      ratio: null,
      goal: `${FANOUT_GOAL} (from the start of the publishing request to the WebSocket message; the issue names no floor)`,
      meetsGoal:
        failures.length === 0 && sentAt.size === input.events && lost === 0 && lat.p50 <= FANOUT_P50_GOAL_MS && lat.p99 <= FANOUT_P99_GOAL_MS,
      ...(notes.length ? { note: notes.join('; ') } : {}),
      measured: input.measured(),
    };
  } finally {
    ws.terminate();
    await mqttClient.endAsync(true).catch(() => {});
  }
}

/** Splits each delivered event's time after its publish's answer by the poller's timings. */
function fanoutBreakdown(
  stream: StreamTimings,
  answeredAt: ReadonlyMap<string, number>,
  receivedAt: ReadonlyMap<string, number>,
  readsBefore: Readonly<Record<ReadTrigger, number>>,
  subscriberReads: FanoutBreakdown['subscriberReads'],
): FanoutBreakdown | null {
  const wait: number[] = [];
  const getRecords: number[] = [];
  const toReceive: number[] = [];
  const invocation: number[] = [];
  const batch: number[] = [];
  const idleWait: number[] = [];
  const readTriggers: Record<ReadTrigger, number> = { start: 0, more: 0, wake: 0, idle: 0 };
  for (const [key, received] of receivedAt) {
    const answered = answeredAt.get(key);
    const read = stream.reads.get(key);
    if (answered === undefined || !read) continue;
    wait.push(read.startedAt - answered);
    getRecords.push(read.endedAt - read.startedAt);
    toReceive.push(received - read.endedAt);
    batch.push(read.batch);
    readTriggers[read.trigger]++;
    if (read.trigger === 'idle') idleWait.push(read.startedAt - answered);
    const d = stream.deliveries.get(key);
    if (d) invocation.push(d.endedAt - d.startedAt);
  }
  if (!wait.length) return null;
  const now = stream.stats().reads;
  const reads = Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - readsBefore[k as ReadTrigger]])) as Record<ReadTrigger, number>;
  return {
    events: wait.length,
    waitForReadMs: summarize(wait),
    getRecordsMs: summarize(getRecords),
    fanoutToReceiveMs: summarize(toReceive),
    invocationMs: invocation.length ? summarize(invocation) : null,
    batchRecords: summarize(batch),
    readTriggers,
    idleWaitMs: idleWait.length ? summarize(idleWait) : null,
    reads,
    subscriberReads,
  };
}

const sum = (counts: Readonly<Record<string, number>>): number => Object.values(counts).reduce((a, b) => a + b, 0);

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}


async function cannon(opts: autocannon.Options): Promise<LoadRun> {
  const r = await autocannon({ ...opts, workers: 1 } as autocannon.Options);
  return {
    rps: round(r.requests.total / Math.max(r.duration, 0.001), 1),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    errors: r.errors,
    non2xx: r.non2xx,
  };
}

/** A bare `node:http` server answering every request with `work()`'s JSON. */
async function bareServer(work: () => Promise<unknown>): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      work().then(
        (body) => {
          const text = JSON.stringify(body ?? null);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface HttpInput {
  readonly rt: BenchRuntime;
  readonly connections: number;
  /** Seconds of each autocannon run. */
  readonly seconds: number;
  /** Rounds of (scenario, floor) runs, alternating which goes first, so load drift hits both. */
  readonly rounds: number;
  /** Rounds run first and not measured: both servers' code and DynamoDB Local warm up under load. */
  readonly warmRounds: number;
  /** The runs are shortened (down to {@link MIN_RUN_SECONDS}) to end by this time (epoch ms). */
  readonly deadline: number;
  readonly measured: () => Measured;
}

/** The shortest autocannon run worth reporting. */
const MIN_RUN_SECONDS = 0.5;
/** What starting an autocannon worker thread costs on a busy machine, roughly. */
const RUN_OVERHEAD_MS = 1_000;

const floorOf = (c: LoadRun | undefined): HttpFloor => ({
  rps: orNull(c?.rps),
  p50Ms: orNull(c?.p50Ms),
  p99Ms: orNull(c?.p99Ms),
  errors: orNull(c?.errors),
  non2xx: orNull(c?.non2xx),
});

/**
 * One scenario against its floor. With `minShare`, the goal is the runtime's throughput at least
 * that share of the floor's (ratio <= 1 / minShare); without, the ratio is only reported.
 */
function scenario(c: LoadRun | undefined, floor: LoadRun | undefined, floorIs: string, reason?: string, minShare?: number): HttpScenario {
  // ratio = the floor's throughput / ours: how many times fewer requests per second the runtime
  // serves than the bare server (1.0 = no overhead; lower is better, like every other ratio).
  const ratio = ratioOf(floor?.rps, c?.rps);
  const clean = c !== undefined && floor !== undefined && c.errors === 0 && c.non2xx === 0 && floor.errors === 0 && floor.non2xx === 0;
  const ok = clean && (minShare === undefined || (ratio !== undefined && ratio <= round(1 / minShare)));
  return {
    rps: orNull(c?.rps),
    p50Ms: orNull(c?.p50Ms),
    p99Ms: orNull(c?.p99Ms),
    requests: orNull(c?.requests),
    errors: orNull(c?.errors),
    non2xx: orNull(c?.non2xx),
    floor: orNull(floor?.rps),
    ratio: orNull(ratio),
    p99Ratio: orNull(ratioOf(c?.p99Ms, floor?.p99Ms)),
    floorIs,
    goal:
      minShare === undefined
        ? 'report the ratio (floor requests/s / runtime requests/s; no threshold); met when every request was answered with 2xx'
        : `runtime requests/s >= ${minShare} x the floor's (ratio <= ${round(1 / minShare, 2)}), every request answered with 2xx`,
    meetsGoal: ok,
    ...(reason ? { note: `could not be measured: ${reason}` } : c && (c.errors || c.non2xx) ? { note: `${c.errors} errors, ${c.non2xx} non-2xx answers` } : {}),
  };
}

export async function measureHttp(input: HttpInput): Promise<Http> {
  const { rt } = input;
  const auth = { authorization: `Bearer ${rt.token}`, 'content-type': 'application/json' };
  const e = rt.events.setup;
  // The bare servers use their own client on the runtime's table, as a family would.
  const db: Db = createDb(loadConfig({ GATEHOUSE_DYNAMODB_ENDPOINT: rt.endpoint, GATEHOUSE_TABLE_NAME: rt.tableName }));
  const get = new GetCommand({ TableName: rt.tableName, Key: { PK: objectPk(rt.personKey), SK: OBJECT_SK }, ConsistentRead: true });
  const bareGet = await bareServer(async () => (await db.doc.send(get)).Item);
  // The write a warm publish makes (the repository's own): the event and one pointer per related
  // object, in one BatchWriteItem.
  const instance = (await getObject(db, rt.instanceKey))!;
  const bareWrite = await bareServer(async () => {
    const now = new Date();
    const w = eventWrite({
      key: newKey(),
      placement: placeIn(instance),
      appKey: 'bench',
      eventTypeKey: e?.eventTypeKey ?? newKey(),
      eventTypeMoniker: { Namespace: 'Bench', Nickname: 'Swipe' },
      occurredOn: now,
      publishedOn: now,
      priority: 1,
      requiresAcknowledgement: false,
      messageLong: null,
      messageShort: 'Related 0',
      objectLinks: rt.related.map((r) => ({ $type: 'ObjectLinkItem', Relation: 'Person', LinkedObjectKey: r.key, CommonName: r.name, Href: `/api/f/${rt.instanceKey}/people/${r.key}` })),
      eventDataBsonBase64: '',
      retentionDays: 365,
    });
    await putEvent(db, w);
    return { Key: w.event.key };
  });
  try {
    const personUrl = `${rt.base}${rt.personHref}`;
    const runs = { get: [] as LoadRun[], bareGet: [] as LoadRun[], publish: [] as LoadRun[], barePublish: [] as LoadRun[] };
    const body = e ? JSON.stringify(posting(e, rt.related)) : '';
    const publishUrl = `${rt.base}/api/f/${rt.instanceKey}/eventmessagesink`;
    // Shorten the runs if the time left is short (a busy machine); note it in the results.
    const rounds = input.warmRounds + input.rounds;
    const runsLeft = rounds * (e ? 4 : 2);
    const fit = (input.deadline - Date.now() - runsLeft * RUN_OVERHEAD_MS) / 1000 / runsLeft;
    const seconds = Math.round(Math.min(input.seconds, Math.max(MIN_RUN_SECONDS, fit)) * 10) / 10;
    const base = { connections: input.connections, duration: seconds };
    // The first `warmRounds` rounds are load that nothing measures: from a standing start both
    // servers (and DynamoDB Local, which they share) serve several times fewer requests a second
    // than some seconds later, and the runtime, with more code to warm, ramps up more slowly.
    for (let round = 0; round < rounds; round++) {
      const measuring = round >= input.warmRounds;
      const keep = (into: LoadRun[], run: LoadRun) => {
        if (measuring) into.push(run);
      };
      const pair = async (a: () => Promise<void>, b: () => Promise<void>) => {
        if (round % 2 === 0) {
          await a();
          await b();
        } else {
          await b();
          await a();
        }
      };
      await pair(
        async () => keep(runs.get, await cannon({ ...base, url: personUrl, headers: auth })),
        async () => keep(runs.bareGet, await cannon({ ...base, url: bareGet.url })),
      );
      if (e) {
        await pair(
          async () => keep(runs.publish, await cannon({ ...base, url: publishUrl, method: 'POST', headers: auth, body })),
          async () => keep(runs.barePublish, await cannon({ ...base, url: bareWrite.url, method: 'POST', body })),
        );
      }
    }
    const getPerson = combineRuns(runs.get);
    const bareGetItem = combineRuns(runs.bareGet);
    const publish = combineRuns(runs.publish);
    const barePublish = combineRuns(runs.barePublish);
    const getS = scenario(
      getPerson,
      bareGetItem,
      'a bare node:http server doing the same GetItem (same table, same item, own SDK client)',
      undefined,
      HTTP_GET_SHARE_GOAL,
    );
    const pubS = scenario(
      publish,
      barePublish,
      'a bare node:http server doing the write of a warm publish (the event and its 3 pointers in one BatchWriteItem)',
      e ? undefined : rt.events.reason,
    );
    return {
      getPerson: getS,
      publish: pubS,
      bareGetItem: floorOf(bareGetItem),
      barePublishWrite: floorOf(barePublish),
      connections: input.connections,
      durationSeconds: seconds,
      warmRounds: input.warmRounds,
      rounds: input.rounds,
      ...(seconds < input.seconds ? { note: `runs shortened to ${seconds} s (from ${input.seconds} s) to fit the run's time budget` } : {}),
      floor: getS.floor,
      ratio: getS.ratio,
      goal: `GET person >= ${HTTP_GET_SHARE_GOAL} x its bare server's requests/s; publish's ratio reported; both without errors`,
      meetsGoal: getS.meetsGoal && pubS.meetsGoal,
      measured: input.measured(),
    };
  } finally {
    // autocannon leaves its last requests to the servers unanswered: let them finish before the
    // servers (and DynamoDB Local) go, so no handler is left calling a stopped database.
    await new Promise((r) => setTimeout(r, e ? 2_000 : 200));
    await Promise.all([bareGet.close(), bareWrite.close()]);
    db.raw.destroy();
  }
}
