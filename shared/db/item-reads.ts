/**
 * Items read by key, through the plain client: {@link getItem} (GetItem) and {@link getItems}
 * (BatchGetItem), and the gathering of reads started together into one request:
 * {@link readTogether} gathers the reads one synchronous stretch starts, {@link gatherReads} those
 * started until it is closed (a request's own reads, where invocations run one at a time).
 *
 * Why gathering matters: a new execution environment's first protected call reads the published
 * public keys (the verifier's) and the caller's user and instance (the status check) before it
 * can answer. Two calls in flight on a cold client cost two signed requests, two connections (two
 * TLS handshakes in AWS) and, on DynamoDB Local, two turns of its request queue; one BatchGetItem
 * of the same three items costs one of each, and the same read units (BatchGetItem counts every
 * item as a GetItem of it would) unless one of the reads gathered is strongly consistent, which
 * the whole request then is.
 */
import { GetItemCommand, type GetItemCommandOutput } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Db } from './client.ts';
import { batchGetItems, type ItemKey } from './requests.ts';
import { sendTo } from './send.ts';

export type { ItemKey } from './requests.ts';

/** What the item reads need of a {@link Db}. */
export type ItemDb = Pick<Db, 'raw' | 'tableName'>;

/** Any item by key (auth state, status items). Inside a gathering, sent with the reads it gathers. */
export function getItem(db: ItemDb, pk: string, sk: string, consistent = false): Promise<Record<string, unknown> | undefined> {
  const into = gathering;
  if (into) return new Promise((resolve, reject) => into.push({ db, keys: [{ PK: pk, SK: sk }], consistent, single: true, resolve: (items) => resolve(items[0]), reject }));
  return readItem(db, pk, sk, consistent);
}

async function readItem(db: ItemDb, pk: string, sk: string, consistent: boolean): Promise<Record<string, unknown> | undefined> {
  // The plain client, not the document client: a GetItem is the hottest call there is (every
  // object GET), and the document client resolves its marshalling middleware again on every call,
  // which costs more CPU than the rest of the call. The key is two strings; the item is
  // unmarshalled as the document client does (the same function, the same default options).
  const out = await sendTo<GetItemCommandOutput>(db.raw, new GetItemCommand({ TableName: db.tableName, Key: { PK: { S: pk }, SK: { S: sk } }, ConsistentRead: consistent }));
  return out.Item ? unmarshall(out.Item) : undefined;
}

/** A `getItems` (or `getItem`: `single`) call waiting for its gathered request. */
interface Gathered {
  readonly db: ItemDb;
  readonly keys: readonly ItemKey[];
  readonly consistent: boolean;
  readonly single?: boolean;
  readonly resolve: (items: Record<string, unknown>[]) => void;
  readonly reject: (err: unknown) => void;
}

/** The calls gathered by the gathering open now, if any. */
let gathering: Gathered[] | undefined;

/**
 * Opens a gathering: the {@link getItem} and {@link getItems} calls started until the returned
 * function is called are sent as one BatchGetItem per table (a lone GetItem as itself; strongly
 * consistent when any of them asks), each caller given the items of its own keys. Closed at the
 * latest on the event loop's next turn. Inside an open gathering it opens none (the outer one
 * sends). Between opening and closing, every read of the process joins: only where invocations
 * run one at a time (a Lambda execution environment) may it stay open across an `await`, so that
 * a request never waits on another's reads and its read units count for it.
 */
export function gatherReads(): () => void {
  if (gathering) return () => {};
  const gathered: Gathered[] = [];
  gathering = gathered;
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    if (gathering === gathered) gathering = undefined;
    sendGathered(gathered);
  };
  setImmediate(close);
  return close;
}

/**
 * Runs `fn`, and sends the reads it starts before it returns (synchronously: an async function
 * runs up to its first `await`) as {@link gatherReads} does. Nothing else can run meanwhile, so a
 * request's reads are never gathered with another's.
 */
export function readTogether<T>(fn: () => T): T {
  const close = gatherReads();
  try {
    return fn();
  } finally {
    close();
  }
}

const idOf = (k: { readonly PK: unknown; readonly SK: unknown }) => `${String(k.PK)}\u0000${String(k.SK)}`;

function sendGathered(gathered: readonly Gathered[]): void {
  // One request per client and table (a gathering holds one of each in practice).
  const groups: Gathered[][] = [];
  for (const g of gathered) {
    const group = groups.find(([f]) => f!.db.raw === g.db.raw && f!.db.tableName === g.db.tableName);
    if (group) group.push(g);
    else groups.push([g]);
  }
  for (const group of groups) {
    const first = group[0]!;
    if (group.length === 1) {
      const k = first.keys[0]!;
      const read = first.single ? readItem(first.db, k.PK, k.SK, first.consistent).then((item) => (item ? [item] : [])) : readItems(first.db, first.keys, first.consistent);
      read.then(first.resolve, first.reject);
      continue;
    }
    const unique = new Map<string, ItemKey>();
    for (const g of group) for (const k of g.keys) unique.set(idOf(k), k);
    // Strongly consistent when any caller asked for it: the others are served a fresher read
    // than they needed, at one read unit per item instead of half of one, for one request less.
    const consistent = group.some((g) => g.consistent);
    readItems(first.db, [...unique.values()], consistent).then(
      (items) => {
        for (const g of group) {
          const mine = new Set(g.keys.map(idOf));
          g.resolve(items.filter((item) => mine.has(idOf(item as { PK: unknown; SK: unknown }))));
        }
      },
      (err: unknown) => {
        for (const g of group) g.reject(err);
      },
    );
  }
}

/**
 * Reads any items by key (`batchGetItems` of requests.ts: BatchGetItem, 100 keys a request,
 * unprocessed keys tried again with backoff); missing items are left out, in no particular order.
 * `consistent` reads them strongly consistent (twice the read capacity). Inside a gathering, sent
 * with the reads it gathers.
 */
export function getItems(db: ItemDb, keys: readonly ItemKey[], consistent = false): Promise<Record<string, unknown>[]> {
  const into = gathering;
  if (into && keys.length > 0) return new Promise((resolve, reject) => into.push({ db, keys, consistent, resolve, reject }));
  return readItems(db, keys, consistent);
}

function readItems(db: ItemDb, keys: readonly ItemKey[], consistent: boolean): Promise<Record<string, unknown>[]> {
  return batchGetItems(db, keys, consistent ? { consistent } : {});
}
