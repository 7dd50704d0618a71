/**
 * The DynamoDB clients of an execution environment, created once and injected. Only `shared/db`
 * imports the DynamoDB SDK.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Config } from '../config.ts';
import { addConsumedCapacity } from './capacity.ts';
import { TABLE } from './table.ts';

/** The commands that read or write items (and accept ReturnConsumedCapacity). */
const DATA_PLANE = /^(?:(?:Get|Put|Update|Delete|BatchGet|BatchWrite)Item|TransactGetItems|TransactWriteItems|Query|Scan|ExecuteStatement)Command$/;

/** What a repository needs: the document client and the table name. */
export interface Db {
  readonly doc: DynamoDBDocumentClient;
  readonly raw: DynamoDBClient;
  readonly tableName: string;
}

/** Consumed capacity of one DynamoDB call, as reported with ReturnConsumedCapacity. */
export interface CapacityRecord {
  readonly command: string;
  readonly read: number;
  readonly write: number;
}

export interface DbOptions {
  /** Called with the consumed capacity of every call (tests and benchmarks count requests). */
  readonly onCapacity?: (record: CapacityRecord) => void;
  /** Extra attempts for throttling and 5xx (the SDK's standard retry mode with backoff). */
  readonly maxAttempts?: number;
}

/** Creates the clients for a configuration. Call once per execution environment. */
export function createDb(cfg: Pick<Config, 'tableName' | 'dynamodbEndpoint' | 'region'>, opts: DbOptions = {}): Db {
  const local = cfg.dynamodbEndpoint !== undefined;
  const clientConfig = {
    region: cfg.region,
    maxAttempts: opts.maxAttempts ?? 4,
    ...(local
      ? {
          endpoint: cfg.dynamodbEndpoint,
          // DynamoDB Local accepts any credentials; these never leave the machine.
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {}),
  };
  const raw = new DynamoDBClient(clientConfig);
  // Every data-plane call reports its consumed capacity: to the request's scope (the request log
  // line and the ConsumedCapacity metric) and to `onCapacity` when given (tests and benchmarks).
  const onCapacity = opts.onCapacity;
  raw.middlewareStack.add(
    (next, context) => async (args) => {
      const commandName = context.commandName ?? '';
      if (!DATA_PLANE.test(commandName)) return next(args);
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity ??= 'TOTAL';
      const out = await next(args);
      const cc = (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const list = (Array.isArray(cc) ? cc : cc ? [cc] : []) as Array<{
        CapacityUnits?: number;
        ReadCapacityUnits?: number;
        WriteCapacityUnits?: number;
      }>;
      let read = 0;
      let write = 0;
      for (const c of list) {
        read += c.ReadCapacityUnits ?? 0;
        write += c.WriteCapacityUnits ?? 0;
        if (c.ReadCapacityUnits === undefined && c.WriteCapacityUnits === undefined) {
          // DynamoDB Local reports only CapacityUnits: attribute it by command kind.
          if (/Get|Query|Scan/.test(commandName)) read += c.CapacityUnits ?? 0;
          else write += c.CapacityUnits ?? 0;
        }
      }
      addConsumedCapacity(read + write);
      onCapacity?.({ command: (commandName || 'unknown').replace(/Command$/, ''), read, write });
      return out;
    },
    { step: 'initialize', name: 'gatehouseCapacity' },
  );
  if (local) waitForLocalCommits(raw, clientConfig);
  const doc = DynamoDBDocumentClient.from(raw, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
  return { doc, raw, tableName: cfg.tableName };
}

/**
 * DynamoDB Local answers a TransactWriteItems a moment before its database file holds it: a crash
 * of Java then (SIGKILL, a power cut) loses a write that was answered. A read of the same table
 * waits for that commit, so a transaction's answer is returned only after one (of a key that is
 * never written, through a client of its own: no capacity is counted for it). A read that fails
 * fails the write's call too: its outcome is then unknown, as a write cut off by a crash is.
 */
function waitForLocalCommits(raw: DynamoDBClient, clientConfig: ConstructorParameters<typeof DynamoDBClient>[0]): void {
  let reader: DynamoDBClient | undefined;
  raw.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName !== 'TransactWriteItemsCommand') return out;
      const first = ((args.input as { TransactItems?: Array<Record<string, { TableName?: string } | undefined>> }).TransactItems ?? [])[0] ?? {};
      const tableName = Object.values(first).find((op) => op?.TableName)?.TableName;
      if (tableName) {
        // Sharing the client's connections (destroyed with it).
        reader ??= new DynamoDBClient({ ...clientConfig, requestHandler: raw.config.requestHandler });
        await reader.send(new GetItemCommand({ TableName: tableName, Key: { [TABLE.partitionKey]: { S: COMMIT_PROBE }, [TABLE.sortKey]: { S: COMMIT_PROBE } } }));
      }
      return out;
    },
    { step: 'initialize', name: 'gatehouseLocalCommit' },
  );
}

/** The key {@link waitForLocalCommits} reads: no item has it. */
const COMMIT_PROBE = '#commit-probe';

/**
 * The local runtime's webhook job queue: a table of its own beside the main one, with the same
 * key names, no index and no stream. It stands for SQS, which is not on the table's stream in AWS
 * either: in the main table, each delivery's queue item would put two records (its put and its
 * delete) on the stream the fan-out reads, work the fan-out does not do in AWS.
 */
const queueTableOf = (tableName: string): string => `${tableName}-webhook-queue`;

/** The queue table's clients: the same as `db`'s, named for {@link queueTableOf} (local/storage/create-tables.ts creates it). */
export const queueDbOf = (db: Db): Db => ({ ...db, tableName: queueTableOf(db.tableName) });
