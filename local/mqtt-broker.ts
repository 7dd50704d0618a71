/**
 * The local stand-in for AWS IoT Core: an `aedes` MQTT 3.1.1 broker on the runtime's own port.
 *
 * - an upgrade on `/mqtt` (subprotocol `mqtt`) is a WebSocket carrying MQTT (`ws`'s
 *   `createWebSocketStream` hands the bytes to aedes);
 * - the hooks apply `shared/live/mqtt/auth.ts`, the same checks as the IoT custom authorizer:
 *   username = access token (CONNACK 5 and close when it does not verify), SUBACK 0x80 for a
 *   filter out of scope, a client PUBLISH closes the connection, the connection closes at `exp`;
 * - revocation: a SUBSCRIBE re-reads the client's status (a revoked client gets SUBACK 0x80 and
 *   is closed), and every {@link RECHECK_MS} the status of each connected client is read again
 *   and the revoked ones (user disabled, deleted, new password, signed out everywhere, demoted)
 *   are closed: the stand-in for IoT Core's authorizer refresh (`refreshAfterInSeconds`, at
 *   least 300 s in AWS), short here so the local runtime ends a revoked feed within seconds;
 * - the IoT data plane's publish call (`POST /topics/{topic}?qos=1`) hands the payload to the
 *   broker, so the fan-out's `@aws-sdk/client-iot-data-plane` code only changes its endpoint
 *   between the laptop and AWS. IoT Core signs it (iot:Publish); here the runtime serves it only
 *   below its per-process secret path (`Runtime.internalUrl`, see local/server.ts) and from
 *   loopback: anyone else could forge events into any tenant's feed;
 * - {@link MqttBroker.publisher}: the same publish without the HTTP round trip, for the fan-out
 *   the runtime runs in its own process.
 */
import type { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '@aws-lambda-powertools/logger';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { WebSocketServer, createWebSocketStream } from 'ws';
import type { CoreDeps } from '#shared/core-deps.ts';
import { authorizeMqttFilter, currentPrincipal, currentPrincipals, grantedQos, verifyMqttToken, type MqttSession } from '#shared/live/mqtt/auth.ts';
import type { MqttPublisher } from '#shared/live/mqtt/mqtt-channel.ts';
import { splitTarget } from './http-event.ts';

/** Path of the IoT data plane's publish call. */
const PUBLISH_PREFIX = '/topics/';
/** IoT Core's message size limit. */
const MAX_MQTT_PAYLOAD = 128 * 1024;

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
/** aedes's `AuthErrorCode.NOT_AUTHORIZED` (a const enum, which isolated modules cannot import). */
const NOT_AUTHORIZED = 5;
const SERVER_UNAVAILABLE = 3;
/**
 * How often the connected clients' status is read again (one read per distinct user): a revoked
 * user's MQTT feed ends within this and a read.
 */
const RECHECK_MS = 2_000;
/** setTimeout's ceiling (about 24.8 days); tokens live at most a week. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A topic the data plane accepts: not empty, no wildcard, not reserved. */
const validTopic = (topic: string): boolean => topic !== '' && !topic.includes('+') && !topic.includes('#') && !topic.startsWith('$');

export interface MqttBrokerOptions {
  readonly logger: Logger;
  /** The dependencies the checks need, created on first use (after the runtime set its config). */
  readonly deps: () => Pick<CoreDeps, 'authenticator' | 'db'>;
  /** Path of the MQTT endpoint. @default '/mqtt' */
  readonly path?: string;
  /** @default {@link RECHECK_MS} */
  readonly recheckMs?: number;
}

export class MqttBroker {
  private readonly broker: Aedes;
  private readonly wss: WebSocketServer;
  private readonly sessions = new WeakMap<Client, MqttSession>();
  private readonly expiries = new Map<Client, NodeJS.Timeout>();
  private readonly rechecker: NodeJS.Timeout;
  private rechecking = false;
  readonly path: string;

  private constructor(
    private readonly opts: MqttBrokerOptions,
    broker: Aedes,
  ) {
    this.path = opts.path ?? '/mqtt';
    this.broker = broker;
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: MAX_MQTT_PAYLOAD + 1024,
      perMessageDeflate: false,
      // Field clients ask for `mqtt` (some for `mqttv3.1`); answer the one they offer.
      handleProtocols: (protocols) => (protocols.has('mqtt') ? 'mqtt' : ([...protocols][0] ?? false)),
    });
    this.rechecker = setInterval(() => void this.recheck(), opts.recheckMs ?? RECHECK_MS);
    this.rechecker.unref();
  }

  /** Closes the connected clients whose user's sessions were revoked (see the module's comment). */
  private async recheck(): Promise<void> {
    if (this.rechecking || this.expiries.size === 0) return;
    this.rechecking = true;
    try {
      const clients = [...this.expiries.keys()].flatMap((client) => {
        const session = this.sessions.get(client);
        return session ? [{ client, session }] : [];
      });
      const refusals = await currentPrincipals(this.opts.deps(), clients.map((c) => c.session.principal));
      refusals.forEach((refusal, i) => {
        if (!refusal) return;
        const { client } = clients[i]!;
        this.opts.logger.info('mqtt connection closed: the session was revoked', { clientId: client.id, reason: refusal.refused });
        client.close();
      });
    } catch (err) {
      // The store is unavailable: the next round reads again.
      this.opts.logger.warn('mqtt status re-check failed', { error: (err as Error).message });
    } finally {
      this.rechecking = false;
    }
  }

  static async start(opts: MqttBrokerOptions): Promise<MqttBroker> {
    const broker = await Aedes.createBroker({ connectTimeout: 30_000 });
    const self = new MqttBroker(opts, broker);
    self.wire();
    return self;
  }

  private wire(): void {
    const { broker, opts } = this;
    broker.authenticate = (client, username, _password, done) => {
      this.authenticate(client, username).then(
        (err) => done(err, err === null),
        (err: unknown) => {
          opts.logger.error('mqtt authenticate failed', { error: (err as Error).message });
          done(authError(SERVER_UNAVAILABLE, 'The service is unavailable.'), false);
        },
      );
    };
    broker.authorizeSubscribe = (client, sub, done) => {
      const session = this.sessions.get(client);
      if (!session) return done(null, null);
      const deps = opts.deps();
      Promise.all([currentPrincipal(deps, session.principal), authorizeMqttFilter(deps, session.principal, sub.topic)]).then(
        ([revoked, topic]) => {
          if (revoked) {
            opts.logger.info('mqtt subscription refused: the session was revoked', { clientId: client.id, reason: revoked.refused });
            done(null, null);
            // After the SUBACK 0x80 is on its way.
            setImmediate(() => client.close());
            return;
          }
          done(null, topic ? { ...sub, qos: grantedQos(sub.qos) } : null);
        },
        (err: unknown) => {
          opts.logger.error('mqtt authorizeSubscribe failed', { error: (err as Error).message });
          done(null, null);
        },
      );
    };
    // Clients only listen: a PUBLISH from a client closes its connection (IoT: no iot:Publish).
    broker.authorizePublish = (client, _packet, done) => {
      if (client) {
        opts.logger.info('mqtt client publish refused', { clientId: client.id });
        return done(new Error('Clients may not publish.'));
      }
      done(null);
    };
    broker.on('clientDisconnect', (client) => this.forget(client));
    broker.on('clientError', (client, err) => {
      opts.logger.debug('mqtt client error', { clientId: client.id, error: err.message });
      this.forget(client);
    });
  }

  private async authenticate(client: Client, username: string | undefined): Promise<AuthenticateError | null> {
    const verdict = await verifyMqttToken(this.opts.deps(), username);
    if ('refused' in verdict) {
      this.opts.logger.info('mqtt connection refused', { reason: verdict.refused });
      return authError(NOT_AUTHORIZED, 'Not authorized.');
    }
    this.sessions.set(client, verdict);
    const ms = Math.min(MAX_TIMER_MS, verdict.expiresAt * 1000 - Date.now());
    // The client logs in again and reconnects, as with IoT Core's disconnectAfterInSeconds.
    const timer = setTimeout(() => client.close(), Math.max(0, ms));
    timer.unref();
    this.expiries.set(client, timer);
    return null;
  }

  private forget(client: Client): void {
    const timer = this.expiries.get(client);
    if (timer) clearTimeout(timer);
    this.expiries.delete(client);
  }

  /** Handles an HTTP upgrade on {@link path}. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const stream = createWebSocketStream(ws);
      stream.on('error', () => stream.destroy());
      const client = this.broker.handle(stream, req);
      grantAtMostQos1(client);
    });
  }

  /**
   * Serves the IoT data plane's `POST /topics/{topic}` when the path matches; false otherwise.
   * The caller has checked that the request may use it (local/server.ts: the runtime's secret).
   */
  handlePublish(req: IncomingMessage, res: ServerResponse, target = splitTarget(req.url ?? '/')): boolean {
    const { rawPath, rawQueryString } = target;
    if (!rawPath.startsWith(PUBLISH_PREFIX)) return false;
    void this.publish(req, res, rawPath, rawQueryString).catch((err: unknown) => {
      this.opts.logger.error('mqtt publish failed', { error: (err as Error).message });
      if (!res.headersSent) awsError(res, 500, 'InternalFailureException', 'Publishing failed.');
    });
    return true;
  }

  private async publish(req: IncomingMessage, res: ServerResponse, rawPath: string, rawQuery: string): Promise<void> {
    if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) {
      req.resume();
      return awsError(res, 403, 'ForbiddenException', 'The data plane only answers on the loopback interface.');
    }
    if (req.method !== 'POST') {
      req.resume();
      return awsError(res, 405, 'MethodNotAllowedException', `${req.method} is not supported.`);
    }
    let topic: string;
    try {
      topic = decodeURIComponent(rawPath.slice(PUBLISH_PREFIX.length));
    } catch {
      req.resume();
      return awsError(res, 400, 'InvalidRequestException', 'The topic is not valid.');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size <= MAX_MQTT_PAYLOAD) chunks.push(chunk as Buffer);
    }
    if (size > MAX_MQTT_PAYLOAD) return awsError(res, 413, 'RequestEntityTooLargeException', `The payload exceeds ${MAX_MQTT_PAYLOAD} bytes.`);
    if (!validTopic(topic)) return awsError(res, 400, 'InvalidRequestException', 'The topic is not valid.');
    const qos = new URLSearchParams(rawQuery).get('qos') === '1' ? 1 : 0;
    await this.deliver(topic, Buffer.concat(chunks), qos);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '0' }).end();
  }

  /**
   * Publishes as the data plane's `POST /topics/{topic}?qos=1` does, in this process: what the
   * runtime's own fan-out uses (the SDK call over loopback HTTP costs about a millisecond of CPU
   * on each side per message, paid once per topic and event).
   */
  publisher(): MqttPublisher {
    return {
      publish: async (topic, payload) => {
        if (payload.byteLength > MAX_MQTT_PAYLOAD) throw new Error(`The payload exceeds ${MAX_MQTT_PAYLOAD} bytes.`);
        if (!validTopic(topic)) throw new Error('The topic is not valid.');
        await this.deliver(topic, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength), 1);
      },
    };
  }

  private deliver(topic: string, payload: Buffer, qos: 0 | 1): Promise<void> {
    return new Promise<void>((resolve, reject) =>
      this.broker.publish({ cmd: 'publish', topic, payload, qos, retain: false, dup: false }, (err) => (err ? reject(err) : resolve())),
    );
  }

  /** The number of connected MQTT clients. */
  get size(): number {
    return this.broker.connectedClients;
  }

  /** Closes every client and the broker. */
  async close(): Promise<void> {
    clearInterval(this.rechecker);
    for (const t of this.expiries.values()) clearTimeout(t);
    this.expiries.clear();
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
    await new Promise<void>((resolve) => this.broker.close(() => resolve()));
  }
}

/**
 * IoT Core has no QoS 2: a subscription asking for it is granted (and acknowledged) as QoS 1.
 * aedes writes the SUBACK from the QoS asked before its authorize hook runs, so the request is
 * lowered as the packet is parsed, before aedes handles it.
 */
function grantAtMostQos1(client: Client): void {
  const parser = (client as unknown as { _parser?: EventEmitter })._parser;
  parser?.prependListener('packet', (packet: { cmd?: string; subscriptions?: Array<{ qos: number }> }) => {
    if (packet.cmd !== 'subscribe') return;
    for (const sub of packet.subscriptions ?? []) sub.qos = grantedQos(sub.qos);
  });
}

function authError(returnCode: number, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode }) as AuthenticateError;
}

/** An AWS REST-JSON error: the SDK reads the type from `x-amzn-errortype`. */
function awsError(res: ServerResponse, status: number, type: string, message: string): void {
  const body = JSON.stringify({ message });
  res
    .writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type, 'content-length': String(Buffer.byteLength(body)) })
    .end(body);
}
