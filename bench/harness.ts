/**
 * What the in-process measurements share: a fresh table on the benchmark's DynamoDB Local, the
 * real family dependencies over one SDK client whose every call is recorded (consumed capacity
 * through `createDb`'s `onCapacity`; item counts through one more middleware of our own), a
 * tenant with tokens, and a way to call a family handler exactly as API Gateway would.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { loadConfig, type Config } from '#shared/config.ts';
import { createDb, type CapacityRecord, type Db } from '#shared/db/client.ts';
import { ensureTable } from '#local/storage/create-tables.ts';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import type { Family } from '#shared/model/collections.ts';
import { Router } from '#shared/http/router.ts';
import { httpEvent, lambdaContext, type CallOptions } from '../test/support/api.ts';
import { seedTenant, type Tenant } from '../test/support/tokens.ts';

/** What one DynamoDB call returned, beside its capacity: how many items it read. */
export interface CallDetail {
  readonly command: string;
  readonly index: string | undefined;
  /** Items returned (Query/Scan `Count`, BatchGet responses, GetItem 0 or 1). */
  readonly items: number;
  /** Items examined before any filter (Query/Scan `ScannedCount`). */
  readonly scanned: number;
  /** When the call was sent and answered (`performance.now()`): calls that overlap ran in parallel. */
  readonly startMs: number;
  readonly endMs: number;
  /** The items a PutItem, BatchWriteItem or TransactWriteItems (transactional) put, as plain values. */
  readonly written?: { readonly items: Record<string, unknown>[]; readonly transactional: boolean };
}

export interface Harness {
  readonly config: Config;
  readonly db: Db;
  /** Every call through `db`, with its consumed capacity (`onCapacity`). */
  readonly calls: CapacityRecord[];
  /** Every call through `db`, with the number of items it read. */
  readonly details: CallDetail[];
  readonly deps: CoreDeps;
  readonly tenant: Tenant;
  readonly dataDir: string;
  /** The handler of a family, with the harness's dependencies. */
  handler(family: Family): Promise<FamilyHandler>;
  /** Calls the family the route table names for `method path`, as API Gateway would. */
  call(method: string, path: string, opts?: CallOptions): Promise<Answer>;
}

type FamilyHandler = (e: APIGatewayProxyEventV2, c: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface Answer {
  readonly status: number;
  readonly body: any;
  readonly text: string;
}

type FamilyModule = { createHandler: (deps: () => CoreDeps) => FamilyHandler };

function countItems(command: string, output: Record<string, unknown>): { items: number; scanned: number } {
  if (typeof output.Count === 'number') return { items: output.Count, scanned: typeof output.ScannedCount === 'number' ? output.ScannedCount : output.Count };
  if (command === 'GetItem') return { items: output.Item ? 1 : 0, scanned: output.Item ? 1 : 0 };
  if (command === 'BatchGetItem') {
    const n = Object.values((output.Responses ?? {}) as Record<string, unknown[]>).reduce((s, l) => s + l.length, 0);
    return { items: n, scanned: n };
  }
  return { items: 0, scanned: 0 };
}

/** The items a write command puts (plain values), or undefined for other commands. */
function writtenItems(command: string, input: Record<string, unknown>): CallDetail['written'] {
  const plain = (i: unknown) => unmarshall(i as Record<string, AttributeValue>) as Record<string, unknown>;
  if (command === 'PutItem') return { items: [plain(input.Item)], transactional: false };
  if (command === 'TransactWriteItems') {
    const puts = (input.TransactItems as Array<{ Put?: { Item: unknown } }>).flatMap((t) => (t.Put ? [plain(t.Put.Item)] : []));
    return { items: puts, transactional: true };
  }
  if (command === 'BatchWriteItem') {
    const reqs = Object.values(input.RequestItems as Record<string, Array<{ PutRequest?: { Item: unknown } }>>).flat();
    return { items: reqs.flatMap((r) => (r.PutRequest ? [plain(r.PutRequest.Item)] : [])), transactional: false };
  }
  return undefined;
}

/** A fresh uniquely named table on `endpoint`, the real dependencies, and a tenant. */
export async function createHarness(endpoint: string, baseDir: string): Promise<Harness> {
  const tableName = `bench-${randomBytes(4).toString('hex')}`;
  const dataDir = join(baseDir, tableName);
  await mkdir(dataDir, { recursive: true });
  const config = loadConfig({
    GATEHOUSE_DYNAMODB_ENDPOINT: endpoint,
    GATEHOUSE_TABLE_NAME: tableName,
    // The request log line is left out of the timings: it goes to CloudWatch in AWS, here nowhere.
    GATEHOUSE_LOG_LEVEL: 'SILENT',
    GATEHOUSE_DATA_DIR: dataDir,
    // Usage counts are flushed once an hour here, so no flush lands in a measured call; the
    // capacity entry measures metering on its own (`capacity.meteringAtLoad`).
    GATEHOUSE_USAGE_FLUSH_SECONDS: '3600',
  });
  const calls: CapacityRecord[] = [];
  const details: CallDetail[] = [];
  const db = createDb(config, { onCapacity: (r) => calls.push(r) });
  db.raw.middlewareStack.add(
    (next, context) => async (args) => {
      const startMs = performance.now();
      const out = await next(args);
      const endMs = performance.now();
      const command = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const input = args.input as { IndexName?: string };
      const written = writtenItems(command, args.input as Record<string, unknown>);
      details.push({
        command,
        index: input.IndexName,
        ...countItems(command, (out.output ?? {}) as unknown as Record<string, unknown>),
        startMs,
        endMs,
        ...(written ? { written } : {}),
      });
      return out;
    },
    // After the document client's own marshalling, so item values are attribute values.
    { step: 'build', name: 'benchItemCounts' },
  );
  await ensureTable(db);
  const deps = createCoreDeps({ config, db });
  const tenant = await seedTenant({ db, config, calls }, deps, { name: `Bench-${randomBytes(3).toString('hex')}` });

  const router = new Router();
  const handlers = new Map<Family, Promise<FamilyHandler>>();
  const handler = (family: Family): Promise<FamilyHandler> => {
    let h = handlers.get(family);
    if (!h) {
      h = (import(`#functions/${family}/handler.ts`) as Promise<FamilyModule>).then((m) => m.createHandler(() => deps));
      handlers.set(family, h);
    }
    return h;
  };
  const call = async (method: string, path: string, opts: CallOptions = {}): Promise<Answer> => {
    const event = httpEvent(method, path, opts);
    const family = router.match(method, event.rawPath)?.route.family ?? 'service';
    const res = await (await handler(family))(event, lambdaContext());
    const text = res.body ?? '';
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.statusCode ?? 200, body, text };
  };
  return { config, db, calls, details, deps, tenant, dataDir, handler, call };
}

export interface Window<T> {
  readonly result: T;
  readonly calls: CapacityRecord[];
  readonly details: CallDetail[];
  readonly ms: number;
}

/** Runs `fn` and returns the DynamoDB calls it made (run nothing else on the harness meanwhile). */
export async function recorded<T>(h: Harness, fn: () => Promise<T>): Promise<Window<T>> {
  const c0 = h.calls.length;
  const d0 = h.details.length;
  const t0 = performance.now();
  const result = await fn();
  const ms = performance.now() - t0;
  return { result, calls: h.calls.slice(c0), details: h.details.slice(d0), ms };
}

/** Sums of a window's calls. */
export function totals(calls: readonly CapacityRecord[]): { requests: number; rcu: number; wcu: number; commands: string[] } {
  return {
    requests: calls.length,
    rcu: round3(calls.reduce((s, c) => s + c.read, 0)),
    wcu: round3(calls.reduce((s, c) => s + c.write, 0)),
    commands: calls.map((c) => c.command),
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Throws with the answer when a setup call did not get the expected status. */
export function expectStatus(what: string, a: Answer, ...ok: number[]): Answer {
  if (!ok.includes(a.status)) throw new Error(`${what}: HTTP ${a.status} ${a.text.slice(0, 300)}`);
  return a;
}
