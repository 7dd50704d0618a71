/**
 * Spawns the local runtime (`node --import tsx local/main.ts`) as a child process on a free port
 * with its own data directory, waits for its `GATEHOUSE_READY` line, and stops it (SIGTERM, then
 * checks that the DynamoDB Local Java process is gone too).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { freePort } from '../../local/dynamo.ts';
import { documentedFetch } from './documented-fetch.ts';
import { TEST_LOGIN_LIMITS } from './db.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface ReadyInfo {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  readonly dataDir: string;
  readonly dynamodbEndpoint: string;
  readonly javaPid: number | null;
  readonly pid: number;
  readonly instanceKey: string;
}

export interface SpawnedRuntime extends ReadyInfo {
  readonly child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code once the spawned process has exited. */
  readonly exited: Promise<number | null>;
  /**
   * Sends `signal` to the whole process group of a runtime spawned with `npmStart`, as a
   * terminal's Ctrl+C (SIGINT) or a process manager's stop does.
   */
  signalGroup(signal: NodeJS.Signals): void;
  /** SIGTERM, wait for the exit and for Java to be gone; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface SpawnOptions {
  /** @default a new temporary directory */
  readonly dataDir?: string;
  /** @default a free port */
  readonly port?: number;
  /** Extra environment (e.g. GATEHOUSE_ADMIN_PASSWORD). */
  readonly env?: Record<string, string>;
  /** @default 90000 */
  readonly timeoutMs?: number;
  /**
   * Run `npm start` (npm, its shell, node) in a process group of its own, the way a terminal runs
   * a foreground command, instead of node alone. @default false
   */
  readonly npmStart?: boolean;
}

export { freePort };

export const newDataDir = (): Promise<string> => mkdtemp(join(tmpdir(), 'gatehouse-e2e-'));

/** The administrator a spawned runtime seeds on first start, with a fresh password and client secret. */
export interface RuntimeAdmin {
  readonly instanceName: string;
  readonly userName: string;
  readonly password: string;
  readonly clientSecret: string;
}

/** An access token of a runtime's administrator `a` (the password grant over HTTP). */
export async function adminToken(url: string, a: RuntimeAdmin & { readonly clientId?: string }): Promise<string> {
  const res = await documentedFetch(`${url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      client_id: a.clientId ?? 'consoleApp',
      client_secret: a.clientSecret,
      instance: a.instanceName,
      username: a.userName,
      password: a.password,
    }),
  });
  if (res.status !== 200) throw new Error(`the administrator's login answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A new administrator of an instance named `<prefix>-<random>`. */
export function newRuntimeAdmin(prefix: string): RuntimeAdmin {
  return {
    instanceName: `${prefix}-${randomBytes(3).toString('hex')}`,
    userName: 'admin',
    password: `Adm1n!${randomBytes(9).toString('base64url')}`,
    clientSecret: `${prefix.toLowerCase()}-${randomBytes(8).toString('hex')}`,
  };
}

/**
 * Spawns a runtime in a new data directory on a new table of the DynamoDB Local at `endpoint`,
 * seeding `admin` on first start, with the further settings `env`.
 */
export async function spawnSeededRuntime(
  endpoint: string,
  admin: RuntimeAdmin,
  env: Record<string, string> = {},
): Promise<{ runtime: SpawnedRuntime; dataDir: string }> {
  const dataDir = await newDataDir();
  const runtime = await spawnRuntime({
    dataDir,
    env: {
      GATEHOUSE_DYNAMODB_ENDPOINT: endpoint,
      GATEHOUSE_TABLE_NAME: `${admin.instanceName.toLowerCase()}-${randomBytes(4).toString('hex')}`,
      GATEHOUSE_INSTANCE: admin.instanceName,
      GATEHOUSE_ADMIN_USER: admin.userName,
      GATEHOUSE_ADMIN_PASSWORD: admin.password,
      GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
      ...env,
    },
  });
  return { runtime, dataDir };
}

/** True while a process with this id exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** The child's environment: this process's, without GATEHOUSE_* settings, plus `extra`. */
function childEnv(port: number, dataDir: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GATEHOUSE_')) env[k] = v;
  return {
    ...env,
    PORT: String(port),
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_LOG_LEVEL: 'WARN',
    // Logins at scrypt N=2^12, not the production 2^17: the suite logs in hundreds of times.
    GATEHOUSE_PASSWORD_HASH_COST: '12',
    // The login throttle stays on, far above what the suite sends from one address (every test
    // logs in from 127.0.0.1); test/security/login-abuse.test.ts sets the production defaults.
    ...TEST_LOGIN_LIMITS,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...extra,
  };
}

/** Starts `local/main.ts` without waiting for it to be ready. */
export function spawnMain(port: number, dataDir: string, extra: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'local/main.ts'], {
    cwd: REPO_ROOT,
    env: childEnv(port, dataDir, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs `local/main.ts` until it exits; for start-ups that must fail. */
export async function runUntilExit(
  port: number,
  dataDir: string,
  extra: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnMain(port, dataDir, extra);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Starts `npm start` as the leader of a new process group, without waiting for it to be ready. */
function spawnNpmStart(port: number, dataDir: string, extra: Record<string, string> = {}): ChildProcess {
  return spawn('npm', ['start', '--silent'], {
    cwd: REPO_ROOT,
    env: childEnv(port, dataDir, extra),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

export async function spawnRuntime(opts: SpawnOptions = {}): Promise<SpawnedRuntime> {
  const dataDir = opts.dataDir ?? (await newDataDir());
  const port = opts.port ?? (await freePort());
  const child = opts.npmStart ? spawnNpmStart(port, dataDir, opts.env) : spawnMain(port, dataDir, opts.env);
  // E2E_RUNTIME_LOG=1 shows what the runtime prints (its request and error logs) while debugging.
  if (process.env.E2E_RUNTIME_LOG) {
    child.stdout!.pipe(process.stderr, { end: false });
    child.stderr!.pipe(process.stderr, { end: false });
  }
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const ready = await new Promise<ReadyInfo>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`The runtime did not get ready within ${(opts.timeoutMs ?? 90_000) / 1000} s:\n${out}`));
    }, opts.timeoutMs ?? 90_000);
    const onData = (d: Buffer) => {
      out += d.toString('utf8');
      const m = /^GATEHOUSE_READY (.+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(JSON.parse(m[1]!) as ReadyInfo);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`The runtime exited (code ${code}) before it was ready:\n${out}`));
    });
  });

  let stopped: Promise<number | null> | undefined;
  return {
    ...ready,
    child,
    output: () => out,
    exited,
    signalGroup: (signal) => {
      if (!opts.npmStart) throw new Error('only a runtime spawned with npmStart leads a process group');
      process.kill(-child.pid!, signal);
    },
    stop: () =>
      (stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        const code = await exited;
        clearTimeout(timer);
        if (ready.javaPid && !(await waitUntilGone(ready.javaPid, 5000))) {
          process.kill(ready.javaPid, 'SIGKILL');
          throw new Error(`DynamoDB Local (pid ${ready.javaPid}) outlived the runtime`);
        }
        return code;
      })()),
  };
}

/** The handshake was refused with an HTTP status (e.g. 401 from `$connect`). */
export class HandshakeRefused extends Error {
  constructor(readonly status: number) {
    super(`WebSocket handshake refused with ${status}`);
    this.name = 'HandshakeRefused';
  }
}

/** A WebSocket client of the live event feed that queues the JSON messages it receives. */
export interface LiveClient {
  readonly ws: WebSocket;
  /** Sends an object as JSON, or a string as is. */
  send(message: unknown): void;
  /** The next received message (parsed JSON), or a rejection after `timeoutMs`. */
  next(timeoutMs?: number): Promise<any>;
  /** Resolves with every message received within `ms` (for "nothing more arrives" checks). */
  drain(ms: number): Promise<any[]>;
  /** Resolves with the close code and reason once the socket is closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): Promise<{ code: number; reason: string }>;
}

export async function openLiveClient(wsUrl: string, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<LiveClient> {
  const target = opts.token ? `${wsUrl}?access_token=${encodeURIComponent(opts.token)}` : wsUrl;
  const ws = new WebSocket(target, { headers: opts.headers });
  const queue: any[] = [];
  const waiters: Array<(m: any) => void> = [];
  ws.on('message', (data, isBinary) => {
    const text = isBinary ? '' : data.toString();
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      m = text;
    }
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (req, res) => {
      res.resume();
      req.destroy();
      reject(new HandshakeRefused(res.statusCode ?? 0));
    });
    ws.once('error', reject);
  });
  return {
    ws,
    send: (message) => ws.send(typeof message === 'string' ? message : JSON.stringify(message)),
    next: (timeoutMs = 5000) =>
      queue.length
        ? Promise.resolve(queue.shift())
        : new Promise((resolve, reject) => {
            const t = setTimeout(() => {
              waiters.splice(waiters.indexOf(done), 1);
              reject(new Error(`no message within ${timeoutMs} ms`));
            }, timeoutMs);
            const done = (m: any) => {
              clearTimeout(t);
              resolve(m);
            };
            waiters.push(done);
          }),
    drain: async (ms) => {
      await new Promise((r) => setTimeout(r, ms));
      return queue.splice(0);
    },
    closed,
    close: () => {
      ws.close(1000);
      return closed;
    },
  };
}
