/**
 * The requests every repository makes the same way, written once: a Query page by page
 * ({@link queryPage}, {@link queryAll}), a batch read and a batch write that send again what
 * DynamoDB leaves unprocessed ({@link batchGetItems}, {@link batchWriteItems}), and an update
 * made only while the item keeps the version its writer read ({@link updateVersioned}). Failures
 * are sorted as every call's are (`send.ts`: throttling and 5xx become `StoreUnavailable`).
 */
import { BatchGetItemCommand, type BatchGetItemCommandInput, type BatchGetItemCommandOutput } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, QueryCommand, UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { StoreUnavailable } from '../errors.ts';
import type { Db } from './client.ts';
import { sendTo } from './send.ts';

/** An item as the document client reads and writes it. */
type Item = Record<string, unknown>;

/** The primary key of any item of the table. */
export interface ItemKey {
  readonly PK: string;
  readonly SK: string;
}

/** What a Query needs besides the table's name: the key condition, and any index, filter, projection, order. */
type QueryInput = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>;

/** One page of a Query. */
interface QueryPage {
  readonly items: Item[];
  /** Where the next page starts (the Query's `LastEvaluatedKey`), or undefined after the last. */
  readonly next: Item | undefined;
  /** Items DynamoDB read for the page before any filter: what the page cost. */
  readonly scanned: number;
}

/** A pause before the `retry`th retry (1, 2, …): `base`, then twice as long each time. */
const backoff = (base: number, retry: number) => new Promise((resolve) => setTimeout(resolve, base * 2 ** (retry - 1)));

/**
 * One Query request of `db`'s table: at most `input.Limit` items (DynamoDB also stops at 1 MB
 * read), starting after `start` (the `next` of the page before).
 */
export async function queryPage(db: Pick<Db, 'doc' | 'tableName'>, input: QueryInput, start?: Item): Promise<QueryPage> {
  const out = await sendTo<{ Items?: Item[]; LastEvaluatedKey?: Item; ScannedCount?: number }>(
    db.doc,
    new QueryCommand({ TableName: db.tableName, ...input, ...(start ? { ExclusiveStartKey: start } : {}) }),
  );
  const items = out.Items ?? [];
  return { items, next: out.LastEvaluatedKey, scanned: out.ScannedCount ?? items.length };
}

interface QueryAllOptions {
  /** Reading stops once this many items or more are read (a page is never cut: it may end past it). */
  readonly max?: number;
  /** Reads at most this many items in all: each request's `Limit` is what remains; none past it. */
  readonly limit?: number;
  /** Starts after this key (a `next` of {@link queryPage}, or a key built to resume from). */
  readonly start?: Item;
  /** Sees each page as it arrives; may throw to stop (a read budget). */
  readonly onPage?: (items: readonly Item[]) => void;
  /** Awaited before each request (a call's read steps: shared/objects/context.ts `readSteps`). */
  readonly step?: () => Promise<void> | undefined;
}

/**
 * Every item of a Query, page after page (DynamoDB pages at 1 MB, or at `Limit`), until the last
 * page or a bound of `opts` is reached, in the Query's order.
 */
export async function queryAll(db: Pick<Db, 'doc' | 'tableName'>, input: QueryInput, opts: QueryAllOptions = {}): Promise<Item[]> {
  const items: Item[] = [];
  const max = opts.max ?? Number.POSITIVE_INFINITY;
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  let start = opts.start;
  do {
    await opts.step?.();
    const remaining = limit - items.length;
    const page = await queryPage(db, Number.isFinite(remaining) ? { ...input, Limit: remaining } : input, start);
    opts.onPage?.(page.items);
    items.push(...page.items);
    start = page.next;
  } while (start && items.length < max && items.length < limit);
  return items;
}

/** What {@link batchGetItems} needs of a {@link Db}: the plain client (the keys are two strings). */
type BatchDb = Pick<Db, 'raw' | 'tableName'>;

interface BatchGetOptions {
  /** Strongly consistent reads (twice the read units). */
  readonly consistent?: boolean;
  /** The attributes to read (a ProjectionExpression of plain names); all when absent. */
  readonly projection?: string;
}

/** Retries of the keys or writes a batch request leaves unprocessed, and the first pause, by default. */
const BATCH_RETRIES = 7;
const BATCH_BACKOFF_MS = 40;

/**
 * Reads items by key: BatchGetItem, 100 keys a request, one request after another. The keys
 * DynamoDB leaves unprocessed (`UnprocessedKeys`: throttling, or 16 MB read) are asked again, up
 * to 7 times with backoff (40 ms, doubling); when some are still unread, throws
 * {@link StoreUnavailable} (the pipeline answers 503). Missing items are left out; the items come
 * in no particular order. Through the plain client, unmarshalled as the document client does: the
 * document client's marshalling middleware, resolved again on every call, costs more CPU than
 * the rest of a read by key.
 */
export async function batchGetItems(db: BatchDb, keys: readonly ItemKey[], opts: BatchGetOptions = {}): Promise<Item[]> {
  const items: Item[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let request: BatchGetItemCommandInput['RequestItems'] = {
      [db.tableName]: {
        Keys: keys.slice(i, i + 100).map((k) => ({ PK: { S: k.PK }, SK: { S: k.SK } })),
        ...(opts.consistent ? { ConsistentRead: true } : {}),
        ...(opts.projection ? { ProjectionExpression: opts.projection } : {}),
      },
    };
    for (let retry = 0; request && Object.keys(request).length > 0; retry++) {
      if (retry > BATCH_RETRIES) throw new StoreUnavailable(new Error('unprocessed keys'));
      if (retry > 0) await backoff(BATCH_BACKOFF_MS, retry);
      const out: BatchGetItemCommandOutput = await sendTo<BatchGetItemCommandOutput>(db.raw, new BatchGetItemCommand({ RequestItems: request }));
      for (const item of out.Responses?.[db.tableName] ?? []) items.push(unmarshall(item));
      request = out.UnprocessedKeys;
    }
  }
  return items;
}

/** One write of a BatchWriteItem: an item to put, or the key of one to delete. */
type BatchWrite = { readonly PutRequest: { readonly Item: Item } } | { readonly DeleteRequest: { readonly Key: Item } };

interface BatchWriteOptions {
  /** Send the requests (25 writes each) at once instead of one after another. */
  readonly parallel?: boolean;
  /** Retries of the writes left unprocessed (default 7). */
  readonly retries?: number;
  /** The first retry's pause in ms, doubled at each further one (default 40). */
  readonly backoffMs?: number;
  /** Names what was written in the error when some stay unwritten. */
  readonly what?: string;
}

/**
 * Puts and deletes items: BatchWriteItem, 25 writes a request (in order, or all at once with
 * `parallel`). The writes DynamoDB leaves unprocessed (`UnprocessedItems`) are sent again with
 * backoff; when some are still unwritten after the retries, throws {@link StoreUnavailable}. No
 * write is conditional and the batch is no transaction: each write must be safe to repeat, and a
 * failure may leave some of them made.
 */
export async function batchWriteItems(db: Pick<Db, 'doc' | 'tableName'>, writes: readonly BatchWrite[], opts: BatchWriteOptions = {}): Promise<void> {
  const retries = opts.retries ?? BATCH_RETRIES;
  const backoffMs = opts.backoffMs ?? BATCH_BACKOFF_MS;
  const writeChunk = async (chunk: readonly BatchWrite[]) => {
    let pending: readonly unknown[] | undefined = chunk;
    for (let retry = 0; pending && pending.length > 0; retry++) {
      if (retry > retries) throw new StoreUnavailable(new Error(`${pending.length} ${opts.what ?? 'writes'} left unprocessed`));
      if (retry > 0) await backoff(backoffMs, retry);
      const out: { UnprocessedItems?: Record<string, unknown[]> } = await sendTo(db.doc, new BatchWriteCommand({ RequestItems: { [db.tableName]: pending } as never }));
      pending = out.UnprocessedItems?.[db.tableName];
    }
  };
  const chunks: BatchWrite[][] = [];
  for (let i = 0; i < writes.length; i += 25) chunks.push(writes.slice(i, i + 25));
  if (opts.parallel) await Promise.all(chunks.map(writeChunk));
  else for (const chunk of chunks) await writeChunk(chunk);
}

/** A condition with its placeholders, to spread into a write's input. */
interface WriteCondition {
  readonly ConditionExpression: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
}

/**
 * The condition of a versioned write (optimistic concurrency): the item exists and its `Version`
 * is still `version`, the one its writer read (undefined: whatever its version), and each
 * attribute of `unchanged` still has that value as stored. Placeholders `#v`, `:v`, `#u<n>`,
 * `:u<n>`: a write's own names must differ. Spread into a PutItem, UpdateItem, DeleteItem or a
 * transaction's item; DynamoDB then answers `ConditionalCheckFailed` when another writer got in
 * first, instead of losing that writer's change.
 */
export function versionCondition(version: number | undefined, unchanged: Readonly<Record<string, unknown>> = {}): WriteCondition {
  const conditions = ['attribute_exists(PK)'];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (version !== undefined) {
    names['#v'] = 'Version';
    values[':v'] = version;
    conditions.push('#v = :v');
  }
  Object.entries(unchanged).forEach(([attr, value], i) => {
    names[`#u${i}`] = attr;
    values[`:u${i}`] = value;
    conditions.push(`#u${i} = :u${i}`);
  });
  // DynamoDB refuses an empty map of names or values.
  return {
    ConditionExpression: conditions.join(' AND '),
    ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
  };
}

/** The change {@link updateVersioned} makes. */
interface VersionedChange {
  /** Attributes to set to these values. */
  readonly set?: Readonly<Record<string, unknown>>;
  /** Attributes to remove. */
  readonly remove?: readonly string[];
  /** Raises `Version` by one with the change (a client-visible edit); else it stays. */
  readonly bump?: boolean;
  /** Attributes that must also still have these values (as stored) for the change to be made. */
  readonly unchanged?: Readonly<Record<string, unknown>>;
}

/**
 * Updates one existing item only while its `Version` is still `version`, the one its writer read
 * ({@link versionCondition}: another writer in between makes this one fail, never lose its
 * change); `version` undefined: whatever its version. Returns the item as updated, or undefined
 * when it is gone or the condition failed (the caller answers that as a conflict). Any other
 * failure is thrown (a transaction working on the item at that moment:
 * `TransactionConflictException`).
 */
export async function updateVersioned(
  db: Pick<Db, 'doc' | 'tableName'>,
  key: ItemKey,
  version: number | undefined,
  change: VersionedChange,
): Promise<Item | undefined> {
  const condition = versionCondition(version, change.unchanged);
  const names: Record<string, string> = { ...condition.ExpressionAttributeNames };
  const values: Record<string, unknown> = { ...condition.ExpressionAttributeValues };
  const sets: string[] = [];
  Object.entries(change.set ?? {}).forEach(([attr, value], i) => {
    names[`#s${i}`] = attr;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  });
  if (change.bump) {
    names['#version'] = 'Version';
    values[':one'] = 1;
    sets.push('#version = #version + :one');
  }
  const removes = (change.remove ?? []).map((attr, i) => {
    names[`#r${i}`] = attr;
    return `#r${i}`;
  });
  const expression = [sets.length > 0 ? `SET ${sets.join(', ')}` : '', removes.length > 0 ? `REMOVE ${removes.join(', ')}` : ''].filter(Boolean).join(' ');
  try {
    const out = await sendTo<{ Attributes?: Item }>(
      db.doc,
      new UpdateCommand({
        TableName: db.tableName,
        Key: { PK: key.PK, SK: key.SK },
        UpdateExpression: expression,
        ConditionExpression: condition.ConditionExpression,
        ExpressionAttributeNames: names,
        ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes ?? {};
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
    throw err;
  }
}
