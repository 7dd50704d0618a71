/**
 * A fresh table on the integration run's DynamoDB Local for one test file. Refuses any endpoint
 * that is not on this machine, so a stray setting can never point tests at a real table.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '#shared/config.ts';
import { createDb, type CapacityRecord, type Db } from '#shared/db/client.ts';
import { ensureTable } from '#local/storage/create-tables.ts';
import { dynamoEndpoint } from './dynamo-endpoint.ts';

function assertLocalEndpoint(endpoint: string): void {
  const host = new URL(endpoint).hostname;
  if (!['localhost', '127.0.0.1', '::1', '[::1]'].includes(host)) {
    throw new Error(`Refusing to run tests against a non-local DynamoDB endpoint: ${endpoint}`);
  }
}

export interface TestDb {
  readonly db: Db;
  readonly config: Config;
  /** Every DynamoDB call made through `db`, with its consumed capacity. */
  readonly calls: CapacityRecord[];
}

/**
 * Login throttle settings for test runs: on, but far above what a file or suite sends from its one
 * address (every test logs in from 127.0.0.1); test/security/login-abuse.test.ts sets its own.
 */
export const TEST_LOGIN_LIMITS: Readonly<Record<string, string>> = {
  GATEHOUSE_LOGIN_ADDRESS_RATE: '100000',
  GATEHOUSE_LOGIN_ADDRESS_BURST: '100000',
  GATEHOUSE_LOGIN_NAME_RATE: '100000',
  GATEHOUSE_LOGIN_NAME_BURST: '100000',
};

let timelines = 0;

/**
 * Runs `fn` while every DynamoDB request made through `t` is recorded in the array it is given,
 * as it starts and as it ends (`start Query`, `end Query`, in order): what a test of requests
 * sent side by side reads. `fn` may empty the array between its steps, after `idle()`: every
 * request recorded as started has ended (a call may answer before a read it no longer needs).
 */
export async function withTimeline<T>(t: TestDb, fn: (timeline: string[], idle: () => Promise<void>) => Promise<T>): Promise<T> {
  const timeline: string[] = [];
  const open = () => timeline.filter((e) => e.startsWith('start ')).length - timeline.filter((e) => e.startsWith('end ')).length;
  const idle = async () => {
    for (let i = 0; i < 500 && open() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    if (open() > 0) throw new Error(`DynamoDB requests still running after 5 s: ${timeline.join(', ')}`);
  };
  const name = `timeline${++timelines}`;
  t.db.raw.middlewareStack.add(
    (next, ctx) => async (args) => {
      const command = String(ctx.commandName).replace(/Command$/, '');
      timeline.push(`start ${command}`);
      try {
        return await next(args);
      } finally {
        timeline.push(`end ${command}`);
      }
    },
    { step: 'initialize', name },
  );
  try {
    return await fn(timeline, idle);
  } finally {
    t.db.raw.middlewareStack.remove(name);
  }
}

/** What `fn` returned, and the DynamoDB requests (by command) made through `t` while it ran. */
export async function commandsOf<T>(t: TestDb, fn: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const before = t.calls.length;
  const result = await fn();
  return { result, commands: t.calls.slice(before).map((c) => c.command) };
}

/** Creates a uniquely named table and a config pointing at it. */
export async function createTestDb(env: Record<string, string> = {}): Promise<TestDb> {
  const endpoint = dynamoEndpoint();
  assertLocalEndpoint(endpoint);
  const tableName = `t-${randomBytes(6).toString('hex')}`;
  const config = loadConfig({
    GATEHOUSE_DYNAMODB_ENDPOINT: endpoint,
    GATEHOUSE_TABLE_NAME: tableName,
    GATEHOUSE_LOG_LEVEL: 'SILENT',
    GATEHOUSE_DATA_DIR: `.test-data/${tableName}`,
    // Usage counts are written once an hour here, so tests that count a call's DynamoDB requests
    // never see a flush land in their window; the usage tests set the interval they exercise.
    GATEHOUSE_USAGE_FLUSH_SECONDS: '3600',
    ...TEST_LOGIN_LIMITS,
    ...env,
  });
  const calls: CapacityRecord[] = [];
  const db = createDb(config, { onCapacity: (r) => calls.push(r) });
  await ensureTable(db);
  return { db, config, calls };
}
