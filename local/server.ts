/**
 * The embedded local runtime: one `node:http` server that plays API Gateway (HTTP API payload 2.0
 * with its stage throttling, and the WebSocket API with its Management API), an embedded DynamoDB
 * Local, a stream poller that plays the Lambda event source mapping (with a dead-letter file
 * for its on-failure destination), and a timer that plays the webhook SQS queue from the table. The handlers are the same modules that run in AWS.
 *
 * The handlers read their configuration from the environment once (`shared/config.ts`), so the
 * runtime sets the derived variables before the first handler loads, and one process runs one
 * runtime.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Duplex } from 'node:stream';
import { loadConfig, reloadConfig } from '#shared/config.ts';
import { createDb, queueDbOf } from '#shared/db/client.ts';
import { ensureQueueTable, ensureTable } from './storage/create-tables.ts';
import { moveQueuedJobs } from './storage/webhook-queue-table.ts';
import { createStreamReader } from './storage/stream-reader.ts';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { createLiveDeps, type LiveDeps } from '#shared/live/live-deps.ts';
import { createPublicDeps } from '#shared/public-deps.ts';
import type { ServiceDeps } from '#functions/service/handler.ts';
import { localConsoleFiles } from './console-build.ts';
import type { Family } from '#shared/model/collections.ts';
import { serviceUnavailable, tooManyRequests, type ApiError } from '#shared/errors.ts';
import { Router, rememberMatch } from '#shared/http/router.ts';
import { createLogger } from '#shared/logger.ts';
import { flushAllUsage, flushDueUsage } from '#shared/usage/recorder.ts';
import { securePrivateDir, PRIVATE_FILE_MODE } from './data-dir.ts';
import { DEAD_LETTER_FILE, fileDeadLetters } from './dead-letters.ts';
import { startDynamo, type RunningDynamo } from './dynamo.ts';
import { splitTarget, toHttpEvent, writeJsonError, writeResult } from './http-event.ts';
import { FamilyLoader, FamilyMissing, type HandlerBuilder } from './lambda.ts';
import { MqttBroker } from './mqtt-broker.ts';
import { fileStreamCheckpoints } from './stream-checkpoint.ts';
import { startStreamPoller, type StreamPollObserver, type StreamPoller, type StreamPollerStats } from './stream-poller.ts';
import { startKeyMaintenance, type KeyMaintenance } from './key-maintenance.ts';
import { rotationPolicyOf } from '#shared/auth/keys.ts';
import { stageThrottle, type ThrottleSettings } from './throttle.ts';
import { startWebhookQueue, type WebhookQueueRunner } from './webhook-queue.ts';
import { WebSocketGateway, type WebSocketGatewayOptions } from './websocket-gateway.ts';

/** How often the runtime writes the usage counts that are due (each family still writes at most once per interval). */
const USAGE_TIMER_MS = 5_000;

/**
 * The path below which the runtime serves its stand-ins of AWS's internal calls (the WebSocket
 * Management API, the IoT data plane's Publish), followed by the runtime's per-process secret.
 */
const INTERNAL_PREFIX = '/@local/';

/** How long a stop waits for the requests in flight to be answered before it closes their connections. */
export const STOP_REQUESTS_MS = 10_000;
/** How long a stop lets the stream poller read and deliver what the last writes put on the stream. */
export const STOP_DRAIN_MS = 10_000;

/** Bodies above this are not read at all (the pipeline answers 413 above GATEHOUSE_MAX_BODY_BYTES). */
const HARD_BODY_CAP = 2 * 1024 * 1024;

export interface RuntimeOptions {
  readonly port: number;
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host?: string;
  readonly dataDir: string;
  /** Use this DynamoDB endpoint instead of starting DynamoDB Local. */
  readonly dynamodbEndpoint?: string;
  /**
   * Start DynamoDB Local in a process group of its own, so that a signal to this process's whole
   * group (a terminal's Ctrl+C) reaches Java only through {@link Runtime.stop}. Only for a process
   * that stops the runtime on SIGINT, SIGTERM and SIGHUP (`local/main.ts`): elsewhere such a
   * signal would end the process and leave Java running. @default false
   */
  readonly dynamoOwnProcessGroup?: boolean;
  /** What sysinfo reports as `EventPublisherUrl`. @default the runtime's own `ws://localhost:<port>/events` */
  readonly eventPublisherUrl?: string;
  /** What sysinfo reports as `MqttPublisherUrl`. @default the runtime's own `ws://localhost:<port>/mqtt` */
  readonly mqttPublisherUrl?: string;
  /**
   * Stream polling interval when idle. A request that may write (any method but GET and HEAD)
   * wakes the poller when it is answered, so this only bounds how late other writers' records
   * (a script on the same table, the webhook queue) are read. @default 200
   */
  readonly pollIntervalMs?: number;
  /** Sees the stream poller's reads and deliveries (the benchmark's latency breakdown). */
  readonly streamObserver?: StreamPollObserver;
  readonly websocket?: Pick<WebSocketGatewayOptions, 'idleTimeoutMs' | 'maxConnectionMs'>;
  /** Invokes the family handlers. @default a {@link FamilyLoader} of `functions/<family>/handler.ts` */
  readonly families?: Pick<FamilyLoader, 'invoke'>;
  /**
   * The stage throttling of the HTTP API (`local/main.ts` passes `GATEHOUSE_THROTTLE_RATE` and
   * `GATEHOUSE_THROTTLE_BURST`); a limit of 0 turns it off.
   * @default - no throttling (an embedding, such as the benchmarks, measures the handlers)
   */
  readonly throttle?: ThrottleSettings;
  /**
   * Keep answering 503 `ServiceUnavailable` (`Retry-After: 1`) after start-up until
   * {@link Runtime.open} is called: `local/main.ts` opens once the first instance and its
   * administrator are seeded, so a client that sees sysinfo answer 200 can log in.
   * @default false (open as soon as the table and the stream poller are up)
   */
  readonly gated?: boolean;
}

export interface Runtime {
  /** `http://localhost:<port>` */
  readonly url: string;
  /** `ws://localhost:<port>/events` */
  readonly wsUrl: string;
  /** `ws://localhost:<port>/mqtt` */
  readonly mqttUrl: string;
  /**
   * `http://localhost:<port>/@local/<secret>`: where this process's own code reaches the
   * Management API and IoT data plane stand-ins with the AWS SDK clients (as `endpoint`). The
   * secret is made at start and never leaves the process: no other program on the machine can
   * post to a live connection or publish to an MQTT topic. Never log it.
   */
  readonly internalUrl: string;
  readonly port: number;
  readonly dataDir: string;
  readonly dynamodbEndpoint: string;
  /** The DynamoDB Local Java process, when the runtime started one. */
  readonly javaPid: number | undefined;
  /** Starts serving requests (a `gated` runtime answers 503 until then). */
  open(): void;
  /** What the stream poller has done: its reads by trigger and the wakes by requests. */
  streamPollerStats(): StreamPollerStats;
  /**
   * Stops without losing what was acknowledged, in this order: takes no more requests (503 with
   * `Retry-After`), waits for those in flight (at most {@link STOP_REQUESTS_MS}), stops the webhook
   * queue (jobs not done stay queued), drains the stream poller (at most {@link STOP_DRAIN_MS}:
   * the events written reach the live connections and the webhook queue), closes WebSockets, MQTT
   * and the HTTP server, writes the usage counts, and only then stops DynamoDB Local.
   */
  stop(): Promise<void>;
}

/** Holds the DynamoDB endpoint of a running runtime, for `npm run admin`. */
const ENDPOINT_FILE = 'dynamodb-endpoint';

export class PortInUseError extends Error {
  constructor(readonly port: number) {
    super(`Port ${port} is already in use; set PORT to a free port`);
    this.name = 'PortInUseError';
  }
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const dataDir = resolve(opts.dataDir);
  const host = opts.host ?? '127.0.0.1';
  const logger = createLogger(loadConfig(), 'gatehouse-local');
  const families: Pick<FamilyLoader, 'invoke'> = opts.families ?? new FamilyLoader(inProcessFamilies(() => gateway, () => mqtt));
  const gateway: WebSocketGateway = new WebSocketGateway({ families, logger, ...opts.websocket });
  // The broker's checks read the configuration the runtime sets below: create them on first use.
  let brokerDeps: CoreDeps | undefined;
  const mqtt: MqttBroker = await MqttBroker.start({ logger, deps: () => (brokerDeps ??= createCoreDeps()) });
  const router = new Router();
  const throttle = stageThrottle(opts.throttle);
  // The stand-ins of AWS's internal calls are only for code holding this process's secret.
  const internal = internalCalls(randomBytes(32).toString('base64url'));

  // Nothing is served until the runtime is up (and, when gated, opened): requests answer 503 with
  // Retry-After, the way a load balancer answers while its targets are not healthy yet.
  let serving = false;
  /** Set by stop(): every new request (but this process's internal calls) answers 503. */
  let intakeStopped = false;
  /** The requests being handled, which a stop waits for. */
  const inFlight = new Set<Promise<void>>();
  let maxBody = HARD_BODY_CAP;
  const notServing = (): ApiError => serviceUnavailable(1);

  const server = createServer({ requestTimeout: 60_000 });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const handling = handleRequest(req, res);
    inFlight.add(handling);
    void handling.finally(() => inFlight.delete(handling));
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!serving || intakeStopped) {
      if (socket.writable) socket.end('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n\r\n');
      else socket.destroy();
      return;
    }
    if (splitTarget(req.url ?? '/').rawPath === mqtt.path) mqtt.handleUpgrade(req, socket, head);
    else gateway.handleUpgrade(req, socket, head);
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  });

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    try {
      const target = splitTarget(req.url ?? '/');
      const inner = internal.match(target);
      if (inner) {
        if (gateway.handleManagement(req, res, inner.rawPath)) return;
        if (mqtt.handlePublish(req, res, inner)) return;
        req.resume();
        return writeJsonError(res, 404, 'NotFound', 'No such resource.');
      }
      if (intakeStopped) {
        req.resume();
        const e = notServing();
        return writeJsonError(res, e.status, e.code, 'Gatehouse is stopping; retry once it is back.', { ...e.headers, connection: 'close' });
      }
      // API Gateway throttles before anything else runs; the body is drained, not read.
      const retryAfter = throttle?.take() ?? 0;
      if (retryAfter > 0) {
        req.resume();
        const e = tooManyRequests(retryAfter);
        return writeJsonError(res, e.status, e.code, e.message, { ...e.headers });
      }
      if (!serving) {
        req.resume();
        const e = notServing();
        return writeJsonError(res, e.status, e.code, 'Gatehouse is starting; retry in a second.', { ...e.headers });
      }
      // Most requests carry no body: nothing to wait for then.
      let body: Buffer | undefined | 'too-large';
      if (hasNoBody(req)) req.resume();
      else body = await readBody(req, maxBody);
      if (body === 'too-large') {
        // The rest of the body is not read: close the connection after answering.
        return writeJsonError(res, 413, 'PayloadTooLarge', `The request body is larger than ${maxBody} bytes.`, { connection: 'close' });
      }
      const match = router.match(req.method ?? 'GET', target.rawPath);
      if (!match) return writeJsonError(res, 404, 'NotFound', 'No such resource.');
      const event = toHttpEvent({ req, body, match, domainName: req.headers.host?.split(':')[0] || 'localhost', requestId, target });
      rememberMatch(event, req.method ?? 'GET', target.rawPath, match);
      const result = await families.invoke(match.route.family, event, requestId);
      writeResult(res, result, { 'apigw-requestid': requestId });
      // The write (if any) is done: its stream record is read now, not after the idle wait.
      if (req.method !== 'GET' && req.method !== 'HEAD') poller?.wake();
    } catch (err) {
      if (err instanceof FamilyMissing) {
        logger.warn(err.message);
        if (!res.headersSent) writeJsonError(res, 501, 'NotImplemented', 'This operation is not available yet.');
        return;
      }
      // The client left: nobody to answer.
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || !res.socket || res.socket.destroyed) return;
      // Never a stack trace to the client: the generic 500 body, the details in the log.
      logger.error('request failed', {
        requestId,
        method: req.method,
        error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
      });
      if (!res.headersSent) writeJsonError(res, 500, 'InternalError', 'An unexpected error occurred.');
      else res.destroy();
    }
  }

  await listen(server, opts.port, host);
  const port = (server.address() as AddressInfo).port;
  const url = `http://localhost:${port}`;
  const wsUrl = `ws://localhost:${port}/events`;
  const mqttUrl = `ws://localhost:${port}${mqtt.path}`;
  const internalUrl = `${url}${internal.prefix}`;

  let dynamo: RunningDynamo | undefined;
  let poller: StreamPoller | undefined;
  let webhooks: { runner: WebhookQueueRunner; db: ReturnType<typeof createDb> } | undefined;
  let keyMaintenance: KeyMaintenance | undefined;
  let stopping: Promise<void> | undefined;
  // Usage counts of the families run here are written when due even while no request comes
  // (in Lambda a count waits for its environment's next invocation), and all of them on shutdown.
  const usageTimer = setInterval(() => void flushDueUsage().catch(() => undefined), USAGE_TIMER_MS);
  usageTimer.unref();
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      clearInterval(usageTimer);
      // No new request from here; the ones running write what they acknowledge.
      intakeStopped = true;
      server.closeIdleConnections();
      await settled(inFlight, STOP_REQUESTS_MS);
      // Jobs in flight finish or stay queued; the jobs the drain queues wait in the table.
      await webhooks?.runner.stop();
      if (poller && !(await poller.drain(STOP_DRAIN_MS))) {
        logger.warn('stopping: the stream was not fully read in time; the records left reach no channel');
      }
      await gateway.close();
      await mqtt.close();
      await poller?.stop();
      await keyMaintenance?.stop();
      webhooks?.db.raw.destroy();
      await closeServer(server);
      if (dynamo) {
        await flushAllUsage().catch((err: unknown) => logger.warn('usage: writing the last counts failed', { error: (err as Error).message }));
      }
      await dynamo?.stop();
      // `npm run admin` looks here for a running runtime's database.
      await rm(join(dataDir, ENDPOINT_FILE), { force: true });
    })());

  try {
    // Private to this user, a directory from an earlier version included (local/data-dir.ts).
    await securePrivateDir(dataDir);
    dynamo = await startDynamo({ dataDir, endpoint: opts.dynamodbEndpoint, ownProcessGroup: opts.dynamoOwnProcessGroup ?? false });
    void dynamo.exited.then(() => {
      if (!stopping) logger.error('DynamoDB Local exited unexpectedly: every call will fail until Gatehouse is restarted');
    });
    await writeFile(join(dataDir, ENDPOINT_FILE), `${dynamo.endpoint}\n`, { mode: PRIVATE_FILE_MODE });
    // Read by shared/config.ts when the first handler loads.
    process.env.GATEHOUSE_DATA_DIR = dataDir;
    process.env.GATEHOUSE_DYNAMODB_ENDPOINT = dynamo.endpoint;
    process.env.GATEHOUSE_EVENT_PUBLISHER_URL = opts.eventPublisherUrl ?? wsUrl;
    // The runtime's own fan-out posts and publishes in process; a handler built from the exported
    // `handler` (an embedding's `families`) reaches the same stand-ins over HTTP with the secret.
    process.env.GATEHOUSE_WEBSOCKET_MANAGEMENT_URL = internalUrl;
    process.env.GATEHOUSE_MQTT_PUBLISHER_URL = opts.mqttPublisherUrl ?? mqttUrl;
    process.env.GATEHOUSE_MQTT_PUBLISH_URL = internalUrl;
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    // Webhooks to receivers on this machine (http to loopback) unless the operator says otherwise.
    process.env.GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK ??= 'true';
    // Identity providers on this machine (an http issuer on loopback), likewise.
    process.env.GATEHOUSE_IDP_ALLOW_LOOPBACK ??= 'true';
    const cfg = reloadConfig();
    maxBody = Math.max(HARD_BODY_CAP, cfg.maxBodyBytes + 1);
    const db = createDb(cfg);
    await ensureTable(db);
    db.raw.destroy();
    poller = await startStreamPoller({
      reader: createStreamReader(cfg),
      invoke: (event) => families.invoke('fanout', event),
      logger,
      idleMs: opts.pollIntervalMs,
      ...(opts.streamObserver ? { observer: opts.streamObserver } : {}),
      // The stand-in for the event source mapping's SQS on-failure destination.
      onFailedBatch: fileDeadLetters(join(dataDir, DEAD_LETTER_FILE), logger),
      // A crash's undelivered records are delivered after the restart.
      checkpoint: fileStreamCheckpoints(dataDir, logger),
    });
    // Webhook deliveries: the jobs the fan-out and the webhooks family put in the table.
    // Its own table (no stream), as SQS is not on the table's stream in AWS.
    const mainDb = createDb(cfg);
    const queueDb = queueDbOf(mainDb);
    await ensureQueueTable(queueDb);
    const moved = await moveQueuedJobs(mainDb, queueDb);
    if (moved > 0) logger.info('webhook queue: moved the jobs queued by an earlier version to the queue table', { jobs: moved });
    webhooks = { db: queueDb, runner: startWebhookQueue({ db: queueDb, invoke: (event) => families.invoke('webhooks', event), logger }) };
    // Signing-key rollover and retirement, as the hourly schedule does in AWS.
    keyMaintenance = startKeyMaintenance({ dataDir, policy: rotationPolicyOf(cfg), logger });
  } catch (err) {
    await stop();
    throw err;
  }
  const open = (): void => {
    if (!stopping) serving = true;
  };
  if (!opts.gated) open();

  const started = poller;
  return {
    url,
    wsUrl,
    mqttUrl,
    internalUrl,
    port,
    dataDir,
    dynamodbEndpoint: dynamo.endpoint,
    javaPid: dynamo.pid,
    open,
    streamPollerStats: () => started.stats(),
    stop,
  };
}

/**
 * The families built with this process's own parts. The families that send to live clients send
 * through this process's gateway and broker: the fan-out's WebSocket posts and MQTT publishes,
 * and the `websocket` family's answers.
 * In AWS they go through the Management API and the IoT data plane; the runtime serves both calls
 * too, below {@link Runtime.internalUrl}, but over HTTP each message costs CPU on each side, which
 * the fan-out pays once per subscriber, topic and event. The service family serves the console
 * this process builds.
 */
function inProcessFamilies(gateway: () => WebSocketGateway, broker: () => MqttBroker): Partial<Record<Family, HandlerBuilder>> {
  return {
    fanout: async () => {
      const { createHandler, fanoutDeps } = await import('#functions/fanout/handler.ts');
      let deps: LiveDeps | undefined;
      return createHandler(() => (deps ??= fanoutDeps({ connections: gateway().notifier(), mqtt: broker().publisher() })));
    },
    websocket: async () => {
      const { createHandler } = await import('#functions/websocket/handler.ts');
      let deps: LiveDeps | undefined;
      return createHandler(() => (deps ??= createLiveDeps({ connections: gateway().notifier() })));
    },
    // The console's files: built by this process (local/console-build.ts), not read beside the code.
    service: async () => {
      const { createHandler } = await import('#functions/service/handler.ts');
      let deps: ServiceDeps | undefined;
      return createHandler(() => (deps ??= { ...createPublicDeps(), consoleFiles: localConsoleFiles }));
    },
  };
}

/**
 * Recognises a request for the internal stand-ins: `/@local/<secret>/...` with this process's
 * secret (compared in constant time), answering the rest of the target. Any other path, the
 * stand-ins' own `/@connections/...` and `/topics/...` included, is an ordinary API path.
 */
function internalCalls(secret: string): { prefix: string; match(target: HttpTarget): HttpTarget | undefined } {
  const prefix = `${INTERNAL_PREFIX}${secret}`;
  const expected = Buffer.from(secret);
  return {
    prefix,
    match(target) {
      if (!target.rawPath.startsWith(INTERNAL_PREFIX)) return undefined;
      const rest = target.rawPath.slice(INTERNAL_PREFIX.length);
      const slash = rest.indexOf('/');
      const given = Buffer.from(slash < 0 ? rest : rest.slice(0, slash));
      if (slash < 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      return { ...target, rawPath: rest.slice(slash) };
    },
  };
}

type HttpTarget = ReturnType<typeof splitTarget>;

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolveListen, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.removeListener('listening', onListening);
      reject(err.code === 'EADDRINUSE' ? new PortInUseError(port) : err);
    };
    const onListening = () => {
      server.removeListener('error', onError);
      resolveListen();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/** Resolves once every promise of `running` (those added meanwhile too) has settled, or after `ms`. */
async function settled(running: ReadonlySet<Promise<unknown>>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (running.size > 0 && Date.now() < deadline) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...running]), new Promise((r) => (timer = setTimeout(r, deadline - Date.now())))]);
    clearTimeout(timer);
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    if (!server.listening) return resolveClose();
    server.close(() => resolveClose());
    server.closeIdleConnections();
    // Requests still running get a moment to finish, then their sockets go.
    setTimeout(() => server.closeAllConnections(), 2000).unref();
  });
}

/** Neither a length nor chunked encoding: HTTP/1.1 says there is no body (most GETs). */
function hasNoBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined;
}

/** The body (undefined when empty), or 'too-large' past `cap` bytes without reading the rest. */
async function readBody(req: IncomingMessage, cap: number): Promise<Buffer | undefined | 'too-large'> {
  if (hasNoBody(req)) {
    req.resume();
    return undefined;
  }
  const length = req.headers['content-length'];
  if (Number(length ?? 0) > cap) return 'too-large';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > cap) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  return size ? Buffer.concat(chunks) : undefined;
}
