/**
 * coldStart: per function, the bytes of minified code a cold start loads (from esbuild with the
 * options of infra/bundling.ts: `index.mjs` and the chunks it imports statically; the chunks
 * loaded on first use are counted apart) and the time a FRESH Node process takes to import it and serve a first cheap
 * request, against a baseline bundle that only imports the DynamoDB document client and serves
 * one GetItem. Beside it, the protected floor (bench/cold-start-floor.ts): the smallest function
 * that verifies an access token, logs through Powertools and serves GET person, with each
 * function's bytes and ratio over it. Each process runs with the environment the function gets in AWS
 * (its settings, no NODE_OPTIONS: the functions map their logged stacks themselves, see
 * shared/source-mapped-stack.ts; DynamoDB Local as the endpoint).
 *
 * The bundles are built as deployed (infra/bundling.ts: the AWS SDK bundled by default). When an
 * operator leaves the SDK to the runtime, each process, the baseline's too, imports it from the
 * repository's node_modules (see `linkNodeModules` in bench/bundle.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileRing } from '#shared/auth/key-files.ts';
import { publicJwksOf } from '#shared/auth/key-ring.ts';
import { writePublishedJwks } from '#shared/db/published-keys.ts';
import { createDb } from '#shared/db/client.ts';
import { OBJECT_SK, objectPk } from '#shared/db/item-keys.ts';
import { httpEvent } from '../test/support/api.ts';
import { beyondBaseline, type BundleResult } from './bundle.ts';
import type { ColdStart, ColdStartFamily, ColdStartPhases, ColdStartProtectedFloor, LazyImportFigures, Measured } from './results.ts';
import { orNull, percentile, ratioOf, within, worstRatio } from './stats.ts';

/** A function's bundle may carry this many bytes beyond the baseline's (issue #17: 120 KB). */
export const BUNDLE_BYTES_OVER_BASELINE = 120_000;
const COLD_START_RATIO_GOAL = { max: 1.3 };
/** Contributors listed per function in the bundle analysis. */
const TOP_CONTRIBUTORS = 10;
export const BASELINE = 'baseline';
const BASELINE_ENTRY = fileURLToPath(new URL('./cold-start-baseline.ts', import.meta.url));
const PROTECTED_FLOOR = 'protectedFloor';
const PROTECTED_FLOOR_ENTRY = fileURLToPath(new URL('./cold-start-floor.ts', import.meta.url));
const STATUS_FLOOR = 'statusFloor';
const STATUS_FLOOR_ENTRY = fileURLToPath(new URL('./cold-start-floor-status.ts', import.meta.url));
export const LIST_FLOOR = 'listFloor';
const LIST_FLOOR_ENTRY = fileURLToPath(new URL('./cold-start-floor-list.ts', import.meta.url));
/** The reference bundles measured beside the functions (not functions themselves), with their entries. */
export const REFERENCES = [BASELINE, PROTECTED_FLOOR, STATUS_FLOOR, LIST_FLOOR] as const;
export const REFERENCE_ENTRIES: Readonly<Record<(typeof REFERENCES)[number], string>> = {
  [BASELINE]: BASELINE_ENTRY,
  [PROTECTED_FLOOR]: PROTECTED_FLOOR_ENTRY,
  [STATUS_FLOOR]: STATUS_FLOOR_ENTRY,
  [LIST_FLOOR]: LIST_FLOOR_ENTRY,
};
const isReference = (name: string): boolean => (REFERENCES as readonly string[]).includes(name);
const DRIVER = fileURLToPath(new URL('./cold-start-driver.mjs', import.meta.url));
const SPAWN_TIMEOUT_MS = 30_000;

export interface ColdStartContext {
  readonly endpoint: string;
  readonly tableName: string;
  readonly dataDir: string;
  readonly token: string;
  readonly instanceKey: string;
  readonly personKey: string;
  readonly personHref: string;
  readonly searchName: string;
}

interface FirstRequest {
  readonly what: string;
  readonly event: unknown;
  /**
   * The request reads a page: a Query goes out beside the keys and status BatchGetItem (a
   * collection's first page, a search by name, the MQTT authorizer's instance scope), as the list
   * floor's does. Its floor of kind is the list floor; any other request's is the status floor.
   */
  readonly page?: boolean;
}

/** The cheap first request each function serves (the baseline: one GetItem of the same person). */
export function firstRequests(c: ColdStartContext, families: readonly string[], responseUrl: string): Record<string, FirstRequest> {
  const auth = { token: c.token };
  const list = (collection: string): FirstRequest => ({
    page: true,
    what: `GET ${collection}?pageSize=1`,
    event: httpEvent('GET', `/api/f/${c.instanceKey}/${collection}`, { ...auth, query: { pageSize: 1 } }),
  });
  const known: Record<string, FirstRequest> = {
    [BASELINE]: { what: 'GetItem of the person', event: { key: { PK: objectPk(c.personKey), SK: OBJECT_SK } } },
    [PROTECTED_FLOOR]: { what: 'GET person (the same request and token as people)', event: httpEvent('GET', c.personHref, auth) },
    [STATUS_FLOOR]: { what: 'GET person (the same request and token as people)', event: httpEvent('GET', c.personHref, auth) },
    [LIST_FLOOR]: { ...list('accesslevels'), what: 'GET accesslevels?pageSize=1 (the same request and token as access)' },
    service: { what: 'GET /api/sysinfo', event: httpEvent('GET', '/api/sysinfo') },
    token: { what: 'GET /.well-known/jwks.json', event: httpEvent('GET', '/.well-known/jwks.json') },
    folders: { what: 'GET /api', event: httpEvent('GET', '/api', auth) },
    people: { what: 'GET person', event: httpEvent('GET', c.personHref, auth) },
    devices: list('doors'),
    schedules: list('schedules'),
    access: list('accesslevels'),
    apps: list('apps'),
    alarms: list('alarmdefinitions'),
    events: list('events'),
    webhooks: list('webhooks'),
    search: {
      page: true,
      what: 'POST search {"CommonName": ...}',
      event: httpEvent('POST', `/api/f/${c.instanceKey}/search`, { ...auth, body: { CommonName: c.searchName } }),
    },
    websocket: {
      what: '$connect with an access token',
      event: {
        requestContext: {
          routeKey: '$connect',
          eventType: 'CONNECT',
          connectionId: 'benchColdStart=',
          requestId: 'bench',
          domainName: 'localhost',
          stage: '$default',
          apiId: 'local',
          connectedAt: Date.now(),
          requestTimeEpoch: Date.now(),
          messageDirection: 'IN',
          extendedRequestId: 'bench',
          identity: { sourceIp: '127.0.0.1' },
        },
        queryStringParameters: { access_token: c.token },
        headers: {},
        isBase64Encoded: false,
      },
    },
    fanout: { what: 'a stream batch without records', event: { Records: [] } },
    mqttauth: {
      page: true,
      what: 'IoT Core custom authorizer: an MQTT connection with an access token',
      event: { signatureVerified: false, protocols: ['tls', 'http', 'mqtt'], protocolData: { mqtt: { username: c.token, clientId: 'bench' } } },
    },
    keygen: {
      what: 'CloudFormation Delete (answers the response URL, touches no secret)',
      event: {
        RequestType: 'Delete',
        ServiceToken: 'bench',
        ResponseURL: responseUrl,
        StackId: 'bench',
        RequestId: 'bench',
        ResourceType: 'Custom::SigningKeys',
        LogicalResourceId: 'Keys',
        PhysicalResourceId: 'bench',
        ResourceProperties: { ServiceToken: 'bench', SigningKeySecretId: 'bench-signing', PublicKeysTable: c.tableName },
      },
    },
  };
  const out: Record<string, FirstRequest> = {};
  for (const r of REFERENCES) out[r] = known[r]!;
  for (const f of families) out[f] = known[f] ?? { what: 'GET /api/sysinfo (no first request defined for this function)', event: httpEvent('GET', '/api/sysinfo') };
  return out;
}

export interface DriverRun {
  readonly startedMs: number;
  readonly importMs: number;
  readonly firstRequestMs: number;
  /** CPU time (user + system) of the import and the first request. */
  readonly cpuMs?: number;
  readonly status: string | number | null;
  readonly error?: string;
  /** The first request split at its outgoing HTTP requests (bench/cold-start-driver.mjs); null where there is nothing to split. */
  readonly beforeSendMs?: number | null;
  readonly waitMs?: number | null;
  readonly afterMs?: number | null;
  readonly sends?: number;
}

/** Driver processes running now, so the run can stop them however it ends. */
const running = new Set<ChildProcess>();
let stopped = false;

/** Kills every driver process still running, and starts no more (the run's cleanup). */
export function killDrivers(): void {
  stopped = true;
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/** Runs the driver once in a fresh `node`; rejects after {@link SPAWN_TIMEOUT_MS}. */
export function runDriver(bundleFile: string, eventFile: string, env: NodeJS.ProcessEnv): Promise<DriverRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [DRIVER, bundleFile, eventFile], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), SPAWN_TIMEOUT_MS);
    child.once('error', (e) => {
      clearTimeout(timer);
      running.delete(child);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      const m = /^BENCH_COLD_START (.+)$/m.exec(out);
      if (!m) return reject(new Error(`cold-start driver exited (${signal ?? code}) without a result: ${(err || out).trim().slice(-400)}`));
      resolve(JSON.parse(m[1]!) as DriverRun);
    });
  });
}

/** The environment of a function's process: ours without GATEHOUSE_* settings, plus its own. */
function functionEnv(c: ColdStartContext): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GATEHOUSE_') && k !== 'NODE_OPTIONS') env[k] = v;
  return {
    ...env,
    // What GatehouseFunction sets in AWS (no NODE_OPTIONS), and what the Lambda service sets: with
    // AWS_LAMBDA_FUNCTION_NAME a function emits its metrics and counts capacity one invocation at
    // a time (shared/db/capacity.ts), as it does in AWS.
    AWS_REGION: 'us-east-1',
    AWS_LAMBDA_FUNCTION_NAME: 'bench-cold-start',
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    GATEHOUSE_DYNAMODB_ENDPOINT: c.endpoint,
    GATEHOUSE_TABLE_NAME: c.tableName,
    GATEHOUSE_DATA_DIR: c.dataDir,
    GATEHOUSE_LOG_LEVEL: 'INFO',
    // As the stack sets it: verifiers read the JWKS from its table item (`publishJwks` puts it there).
    GATEHOUSE_PUBLIC_KEYS: 'table',
    // The websocket and fanout functions need it at start; nothing is sent to it on these requests.
    GATEHOUSE_WEBSOCKET_MANAGEMENT_URL: 'http://127.0.0.1:9',
  };
}

/**
 * Publishes the public half of the data directory's ring (which signed the bench's tokens) in the
 * table, as the key manager publishes the stack's: the functions read it on their first request.
 */
async function publishJwks(c: Pick<ColdStartContext, 'endpoint' | 'tableName' | 'dataDir'>): Promise<void> {
  const db = createDb({ tableName: c.tableName, dynamodbEndpoint: c.endpoint, region: 'us-east-1' });
  try {
    await writePublishedJwks(db.raw, c.tableName, JSON.stringify(publicJwksOf(await readFileRing(c.dataDir))));
  } finally {
    db.raw.destroy();
  }
}

/** A local stand-in for CloudFormation's pre-signed response URL (the keygen function answers it). */
async function responseSink(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/cfn-response`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** What the reader of the top-level entry should know: a failed baseline, the Node version. */
function coldStartNote(error: string | undefined): { note?: string } {
  const notes: string[] = [];
  if (error) notes.push(`baseline could not be measured: ${error}`);
  notes.push(`measured on Node ${process.version} (Lambda runs nodejs22.x), without --enable-source-maps, as deployed (logged stacks are mapped by shared/source-mapped-stack.ts)`);
  return { note: notes.join('; ') };
}

const median = (xs: readonly number[]) => (xs.length ? percentile(xs, 50) : Number.NaN);
const r1 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : Number.NaN);

/**
 * The medians of the first request's phases over the runs that could split it (the runs where a
 * request went out and was answered); null when none could. `sends` is the most requests a run sent.
 */
export function phasesOf(runs: readonly DriverRun[]): ColdStartPhases | null {
  const split = runs.filter((r) => [r.beforeSendMs, r.waitMs, r.afterMs].every((x) => typeof x === 'number' && Number.isFinite(x)));
  if (split.length === 0) return null;
  const of = (k: 'beforeSendMs' | 'waitMs' | 'afterMs') => r1(median(split.map((r) => r[k] as number)));
  return { beforeSendMs: of('beforeSendMs'), waitMs: of('waitMs'), afterMs: of('afterMs'), sends: Math.max(...split.map((r) => r.sends ?? 0)), runs: split.length };
}

export interface ColdStartInput {
  readonly bundles: ReadonlyMap<string, BundleResult>;
  readonly context: ColdStartContext;
  readonly rounds: number;
  readonly workDir: string;
  readonly measured: () => Measured;
  /** Stops early (rounds already done still count) when the run's time budget is spent. */
  readonly deadline: number;
  /** What each `import()` saves the functions' start code (bench/lazy-imports.ts), reported beside the timings. */
  readonly lazyImports: readonly LazyImportFigures[];
}

export async function measureColdStart(input: ColdStartInput): Promise<ColdStart> {
  const { bundles, context } = input;
  const families = [...bundles.keys()].filter((n) => !isReference(n));
  const sink = await responseSink();
  const runs = new Map<string, DriverRun[]>();
  const errors = new Map<string, string>();
  let requests: Record<string, FirstRequest>;
  try {
    requests = firstRequests(context, families, sink.url);
    const eventFiles = new Map<string, string>();
    for (const [name, r] of Object.entries(requests)) {
      const file = join(input.workDir, `${name}.event.json`);
      await writeFile(file, JSON.stringify(r.event));
      eventFiles.set(name, file);
    }
    await publishJwks(context);
    const env = functionEnv(context);
    // Rounds: the baseline, the protected floor, then every function; the medians of the rounds are reported.
    for (let round = 0; round < input.rounds; round++) {
      if (round > 0 && Date.now() > input.deadline) break;
      for (const name of [...REFERENCES, ...families]) {
        const b = bundles.get(name);
        if (!b || stopped) continue;
        try {
          const run = await runDriver(b.file, eventFiles.get(name)!, env);
          if (run.error) errors.set(name, run.error);
          else runs.set(name, [...(runs.get(name) ?? []), run]);
        } catch (err) {
          errors.set(name, (err as Error).message);
        }
      }
    }
  } finally {
    await sink.close();
  }

  const figures = (name: string) => {
    const rs = runs.get(name) ?? [];
    return {
      importMs: r1(median(rs.map((r) => r.importMs))),
      firstRequestMs: r1(median(rs.map((r) => r.firstRequestMs))),
      totalMs: r1(median(rs.map((r) => r.importMs + r.firstRequestMs))),
      cpuMs: r1(median(rs.map((r) => r.cpuMs ?? Number.NaN).filter(Number.isFinite))),
      runs: rs.length,
      status: rs.at(-1)?.status ?? null,
      phases: phasesOf(rs),
    };
  };
  const base = figures(BASELINE);
  const baseBundle = bundles.get(BASELINE)!;
  const floorBundle = bundles.get(PROTECTED_FLOOR);
  const floor = figures(PROTECTED_FLOOR);
  /** A reference function's figures beside the baseline's; null when it was not bundled. */
  const reference = (name: string, what: string): ColdStartProtectedFloor | null => {
    const b = bundles.get(name);
    if (!b) return null;
    const f = figures(name);
    return {
      bundleBytes: b.bundleBytes,
      startFiles: b.startFiles,
      topContributors: b.contributors.slice(0, TOP_CONTRIBUTORS),
      beyondBaseline: {
        bytes: b.bundleBytes - baseBundle.bundleBytes,
        top: beyondBaseline(b.contributors, baseBundle.contributors).slice(0, TOP_CONTRIBUTORS),
      },
      importMs: orNull(f.importMs),
      firstRequestMs: orNull(f.firstRequestMs),
      totalMs: orNull(f.totalMs),
      cpuMs: orNull(f.cpuMs),
      ratio: orNull(ratioOf(f.totalMs, base.totalMs)),
      cpuRatio: orNull(ratioOf(f.cpuMs, base.cpuMs)),
      firstRequestPhases: f.phases,
      runs: f.runs,
      firstRequest: requests[name]?.what ?? '',
      firstStatus: f.status,
      what,
      ...(errors.has(name) ? { note: `could not be measured: ${errors.get(name)}` } : {}),
    };
  };
  const bytesGoal = { max: baseBundle.bundleBytes + BUNDLE_BYTES_OVER_BASELINE };
  const goal = `bundleBytes <= ${bytesGoal.max} (the baseline's + ${BUNDLE_BYTES_OVER_BASELINE}) and ratio <= ${COLD_START_RATIO_GOAL.max}`;
  const out: Record<string, ColdStartFamily> = {};
  for (const name of families) {
    const b = bundles.get(name)!;
    const f = figures(name);
    const ratio = ratioOf(f.totalMs, base.totalMs);
    // A function whose first request carries the access token, over the floor of the same kind of
    // request: one that reads a page (a Query beside the BatchGetItem: the list floor) or any other
    // (the status floor).
    const protectedRequest = JSON.stringify(requests[name]!.event).includes(context.token);
    const floorOfKind = !protectedRequest ? undefined : requests[name]!.page ? LIST_FLOOR : STATUS_FLOOR;
    const bytesOk = within(b.bundleBytes, bytesGoal);
    const beyond = beyondBaseline(b.contributors, baseBundle.contributors);
    const notes: string[] = [];
    if (errors.has(name)) notes.push(`could not be measured: ${errors.get(name)}`);
    if (!bytesOk) notes.push(`bundle ${b.bundleBytes} bytes > ${bytesGoal.max}; largest parts beyond the baseline: ${beyond.slice(0, 3).map((p) => `${p.name} ${p.bytes}`).join(', ')}`);
    out[name] = {
      bundleBytes: b.bundleBytes,
      assetBytes: b.assetBytes,
      startFiles: b.startFiles,
      sourceMapBytes: b.sourceMapBytes,
      importMs: orNull(f.importMs),
      firstRequestMs: orNull(f.firstRequestMs),
      totalMs: orNull(f.totalMs),
      cpuMs: orNull(f.cpuMs),
      cpuRatio: orNull(ratioOf(f.cpuMs, base.cpuMs)),
      firstRequestPhases: f.phases,
      runs: f.runs,
      firstRequest: requests[name]?.what ?? '',
      firstStatus: f.status,
      topPackages: b.topPackages,
      topContributors: b.contributors.slice(0, TOP_CONTRIBUTORS),
      beyondBaseline: { bytes: b.bundleBytes - baseBundle.bundleBytes, top: beyond.slice(0, TOP_CONTRIBUTORS) },
      overProtectedFloor: floorBundle
        ? {
            bytes: b.bundleBytes - floorBundle.bundleBytes,
            ratio: orNull(ratioOf(f.totalMs, floor.totalMs)),
            cpuRatio: orNull(ratioOf(f.cpuMs, floor.cpuMs)),
            top: beyondBaseline(b.contributors, floorBundle.contributors).slice(0, TOP_CONTRIBUTORS),
          }
        : null,
      overFloorOfKind: floorOfKind && bundles.has(floorOfKind) ? { floor: floorOfKind, ratio: orNull(ratioOf(f.totalMs, figures(floorOfKind).totalMs)) } : null,
      floor: orNull(base.totalMs),
      ratio: orNull(ratio),
      goal: `${goal} (import + first request / the baseline's)`,
      meetsGoal: bytesOk && within(ratio, COLD_START_RATIO_GOAL),
      ...(notes.length ? { note: notes.join('; ') } : {}),
    };
  }
  const worst = worstRatio(out);
  const maxBundleBytes = Math.max(...Object.values(out).map((f) => f.bundleBytes));
  return {
    families: out,
    baseline: {
      bundleBytes: baseBundle.bundleBytes,
      startFiles: baseBundle.startFiles,
      topContributors: baseBundle.contributors.slice(0, TOP_CONTRIBUTORS),
      importMs: orNull(base.importMs),
      firstRequestMs: orNull(base.firstRequestMs),
      totalMs: orNull(base.totalMs),
      cpuMs: orNull(base.cpuMs),
      firstRequestPhases: base.phases,
      what: 'a handler importing only @aws-sdk/client-dynamodb + lib-dynamodb (from node_modules, as the runtime provides them), serving one GetItem (bench/cold-start-baseline.ts)',
    },
    protectedFloor: reference(
      PROTECTED_FLOOR,
      'the smallest function every protected family must be: API Gateway event, ES256 access token verified with jose against the ' +
        "deployment's public keys (the JWKS item of the table, read with the same client, as the families read it), " +
        "Powertools Logger, one GetItem in the token's instance, a JSON answer (bench/cold-start-floor.ts)",
    ),
    statusFloor: reference(
      STATUS_FLOOR,
      'the protected floor plus the smallest check that refuses a disabled user or instance or revoked sessions, which every ' +
        'protected family makes: one BatchGetItem of the user and the instance beside the verification and the read ' +
        '(bench/cold-start-floor-status.ts)',
    ),
    listFloor: reference(
      LIST_FLOOR,
      "the status floor serving the first page of a collection instead of one object: the Query of the page beside the keys' " +
        "and status's BatchGetItem (a Query cannot join it), as a family's first list sends them (bench/cold-start-floor-list.ts)",
    ),
    floor: orNull(base.totalMs),
    ratio: worst?.ratio ?? null,
    worst: worst?.name ?? null,
    maxBundleBytes,
    buildMs: Math.round(baseBundle.buildMs),
    lazyImports: input.lazyImports,
    goal: `every function: ${goal}`,
    meetsGoal: families.length > 0 && Object.values(out).every((f) => f.meetsGoal),
    ...coldStartNote(errors.get(BASELINE)),
    measured: input.measured(),
  };
}
