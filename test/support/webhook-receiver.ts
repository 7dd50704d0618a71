/**
 * A real webhook receiver for tests and the benchmark: a `node:http` server on 127.0.0.1 where
 * each subscription gets its own path. Every request is verified with the `standardwebhooks`
 * package against the secrets registered for its path (a request that does not verify is kept
 * as `invalid`), and answered with the status a per-path policy chooses (200 by default).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Delivery {
  readonly id: string;
  readonly timestamp: number;
  readonly signatures: readonly string[];
  readonly payload: { type: string; timestamp: string; data: any };
  /** When it arrived (epoch ms). */
  readonly at: number;
  readonly headers: IncomingHttpHeaders;
}

interface Endpoint {
  secrets: string[];
  /** Status for the n-th request (0-based) of this path. */
  status: (n: number, d: Delivery) => number;
  received: Delivery[];
  invalid: Array<{ headers: IncomingHttpHeaders; body: string; error: string }>;
  requests: number;
  /** How long each answer is held back (a slow receiver). */
  delayMs: number;
}

export class WebhookReceiver {
  private readonly endpoints = new Map<string, Endpoint>();
  private server: Server | undefined;
  private port = 0;
  /** Called with each verified delivery (the benchmark times arrivals). */
  onDelivery: ((path: string, d: Delivery) => void) | undefined;

  /** Listens on 127.0.0.1 at `port` (0: a free port); the endpoints registered before are kept. */
  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const ep = this.endpoints.get(req.url ?? '');
        if (!ep) {
          res.statusCode = 404;
          return res.end();
        }
        const n = ep.requests++;
        const headers = {
          'webhook-id': String(req.headers['webhook-id'] ?? ''),
          'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
        };
        let payload: Delivery['payload'] | undefined;
        let lastError = 'no secret registered';
        for (const secret of ep.secrets) {
          try {
            payload = new Webhook(secret).verify(body, headers) as Delivery['payload'];
            break;
          } catch (err) {
            lastError = (err as Error).message;
          }
        }
        if (!payload) {
          ep.invalid.push({ headers: req.headers, body, error: lastError });
          res.statusCode = 400;
          return res.end();
        }
        const d: Delivery = {
          id: headers['webhook-id'],
          timestamp: Number(headers['webhook-timestamp']),
          signatures: headers['webhook-signature'].split(' '),
          payload,
          at: Date.now(),
          headers: req.headers,
        };
        const answer = () => {
          const status = ep.status(n, d);
          if (status >= 200 && status < 300) {
            ep.received.push(d);
            this.onDelivery?.(req.url ?? '', d);
          }
          res.statusCode = status;
          res.end();
        };
        if (ep.delayMs > 0) setTimeout(answer, ep.delayMs);
        else answer();
      });
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Registers a path; returns its URL. */
  endpoint(path: string, status: (n: number, d: Delivery) => number = () => 200): string {
    this.endpoints.set(path, { secrets: [], status, received: [], invalid: [], requests: 0, delayMs: 0 });
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The secrets a path's deliveries are verified with (any one verifying is enough). */
  secrets(path: string, ...secrets: string[]): void {
    this.ep(path).secrets = secrets;
  }

  /** Holds each answer of a path back for `ms` (a slow receiver; under 10 s it still succeeds). */
  setDelay(path: string, ms: number): void {
    this.ep(path).delayMs = ms;
  }

  setStatus(path: string, status: (n: number, d: Delivery) => number): void {
    this.ep(path).status = status;
  }

  /** Verified deliveries the receiver accepted (2xx). */
  received(path: string): readonly Delivery[] {
    return this.ep(path).received;
  }

  /** Requests that did not verify. */
  invalid(path: string): ReadonlyArray<{ error: string }> {
    return this.ep(path).invalid;
  }

  /** Every request of a path, answered or not. */
  requests(path: string): number {
    return this.ep(path).requests;
  }

  /** Distinct webhook-ids received. */
  ids(path: string): Set<string> {
    return new Set(this.received(path).map((d) => d.id));
  }

  private ep(path: string): Endpoint {
    const e = this.endpoints.get(path);
    if (!e) throw new Error(`no endpoint ${path}`);
    return e;
  }

  /** The port it listens (or listened) on. */
  get listeningPort(): number {
    return this.port;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await new Promise<void>((r) => {
      s.close(() => r());
      s.closeAllConnections();
    });
  }
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns the last answer. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A receiver that accepts connections and never answers (a "black hole"): every delivery to it
 * holds its attempt until the sender's timeout. Counts the connections it took.
 */
export class BlackHole {
  private readonly sockets = new Set<Socket>();
  private server: NetServer | undefined;
  private port = 0;
  /** Connections accepted so far. */
  connections = 0;

  async start(): Promise<this> {
    this.server = createNetServer((socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => this.sockets.delete(socket));
      // Read and discard what comes; never write.
      socket.resume();
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** A URL on the black hole (any path). */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((r) => s.close(() => r()));
  }
}
