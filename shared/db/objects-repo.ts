/**
 * The object repository: every stored object (people, devices, folders, instances, users, apps,
 * events, ...) is one item `O#<key>` / `A` whose client-visible document is kept as JSON text in
 * `Doc` (so any field a client sends round-trips, whatever its nesting), beside the attributes
 * the service needs to find and scope it:
 *
 * - `Key`, `Coll` (collection), `Type` (bare type name), `Folder` (containing folder key, '' for
 *   the root instance), `Path` (folder and instance keys from the root down to the containing
 *   folder), `Instances` (instance keys from the root down to the object's own instance; an
 *   instance lists itself last), `Version` (ConcurrencyVersion), `Name` (CommonName).
 *
 * Unique values (card numbers, names, monikers) are claim items written in the same transaction
 * as the object, so a race resolves to exactly one winner.
 *
 * The reads are here; the writes are in `object-writes.ts`, so that a function serving reads does
 * not load them at its cold start.
 */
import { parseJson } from '../json.ts';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { sendTo } from './send.ts';
import { getItem, getItems, type ItemKey } from './item-reads.ts';
import { batchGetItems, queryAll, queryPage } from './requests.ts';
import type { Db } from './client.ts';
import { expandEventDoc, occurredOfItem } from './event-doc.ts';
import { CLAIM_SK, OBJECT_SK, STATUS_SK, TOMBSTONE_SK, claimPk, collectionPk, objectPk } from './item-keys.ts';
import type { Claim, StoredObject } from '../model/stored-object.ts';

// The reads by key live in item-reads.ts (with the gathering of reads started together).
export { getItem, getItems, readTogether, type ItemKey } from './item-reads.ts';

/** The owning instance of an object: the last of its `instances`. */
export const ownInstance = (o: Pick<StoredObject, 'instances'>): string => o.instances[o.instances.length - 1] ?? '';

/** One item of a write transaction (see `object-writes.ts`), for callers that add their own items (AUTH, status). */
export type ExtraWrite = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Sends a command; DynamoDB throttling and 5xx (after the SDK's own retries with backoff) become
 * {@link StoreUnavailable}, which the pipeline answers with 503 and Retry-After.
 */
export const send = <T>(_db: Db, command: object, client: Pick<Db['doc'], 'send'> = _db.doc): Promise<T> => sendTo<T>(client, command);

export function fromItem(item: Record<string, unknown>): StoredObject {
  const doc = parseJson(item.Doc as string) as Record<string, unknown>;
  return {
    key: item.Key as string,
    collection: item.Coll as string,
    type: item.Type as string,
    folder: (item.Folder as string) ?? '',
    path: (item.Path as string[]) ?? [],
    instances: (item.Instances as string[]) ?? [],
    version: Number(item.Version ?? 1),
    // An event's document is stored packed (see event-doc.ts): every reader gets it whole.
    doc: item.Coll === 'events' ? expandEventDoc(doc, { key: item.Key as string, folder: (item.Folder as string) ?? '', occurredOn: occurredOfItem(item) }) : doc,
    ...(item.SessionGeneration !== undefined ? { sessionGeneration: Number(item.SessionGeneration) } : {}),
  };
}

/** The key of a claim's item. */
export const claimItemKey = (c: Claim): ItemKey => ({ PK: claimPk(c.scope, c.kind, c.value), SK: CLAIM_SK });

/** The key of an object's item. */
export const objectItemKey = (key: string): ItemKey => ({ PK: objectPk(key), SK: OBJECT_SK });

export async function getObject(db: Db, key: string, consistent = false): Promise<StoredObject | undefined> {
  const item = await getItem(db, objectPk(key), OBJECT_SK, consistent);
  return item ? fromItem(item) : undefined;
}

/**
 * Reads many objects (BatchGetItem, 100 keys a request); missing keys are left out; order follows
 * `keys`. `consistent` reads them strongly consistent.
 */
export async function getObjects(db: Db, keys: readonly string[], consistent = false): Promise<StoredObject[]> {
  const found = new Map<string, StoredObject>();
  for (const item of await getItems(db, [...new Set(keys)].map(objectItemKey), consistent)) {
    const o = fromItem(item);
    found.set(o.key, o);
  }
  return keys.map((k) => found.get(k)).filter((o): o is StoredObject => o !== undefined);
}

/** The owner of a claim, or undefined. */
export async function claimOwner(db: Db, c: Claim, consistent = false): Promise<string | undefined> {
  const key = claimItemKey(c);
  const item = await getItem(db, key.PK, key.SK, consistent);
  return item?.Owner as string | undefined;
}

export interface Page {
  readonly items: StoredObject[];
  /** Where the next page starts (the last key read), or undefined at the end. */
  readonly nextStart: string | undefined;
}

/**
 * One page of a folder's collection in creation order (ObjectIds are time-ordered): one Query of
 * at most `limit` items on GSI1, starting after `afterKey`.
 */
export async function listCollection(
  db: Db,
  folder: string,
  collection: string,
  limit: number,
  afterKey?: string,
): Promise<Page> {
  const page = await queryPage(
    db,
    { IndexName: 'GSI1', KeyConditionExpression: 'GSI1PK = :pk', ExpressionAttributeValues: { ':pk': collectionPk(folder, collection) }, Limit: limit },
    afterKey ? collectionStart(folder, collection, afterKey) : undefined,
  );
  return { items: page.items.map(fromItem), nextStart: page.next ? (page.next.GSI1SK as string) : undefined };
}

/** Where a Query of a collection page resumes after the object `afterKey` (its GSI1 and table keys). */
const collectionStart = (folder: string, collection: string, afterKey: string) => ({
  GSI1PK: collectionPk(folder, collection),
  GSI1SK: afterKey,
  ...objectItemKey(afterKey),
});

/**
 * Awaited before each request of a read of several (a call's read steps: shared/objects/domain-context.ts
 * `readSteps`): undefined when the request may go out now, else what to await first.
 */
export type ReadStep = () => Promise<void> | undefined;

/** Keys only of a folder's collection after `afterKey` (used to skip to a page when no cursor is cached). */
export async function listCollectionKeys(
  db: Db,
  folder: string,
  collection: string,
  count: number,
  afterKey?: string,
  step?: ReadStep,
): Promise<string[]> {
  if (count <= 0) return [];
  const items = await queryAll(
    db,
    { IndexName: 'GSI1', KeyConditionExpression: 'GSI1PK = :pk', ExpressionAttributeValues: { ':pk': collectionPk(folder, collection) }, ProjectionExpression: 'GSI1SK' },
    { limit: count, ...(afterKey ? { start: collectionStart(folder, collection, afterKey) } : {}), ...(step ? { step } : {}) },
  );
  return items.map((i) => i.GSI1SK as string);
}

/**
 * An instance and the instances below it, breadth first, `root` first: child instances live
 * directly in their parent instance (never in a folder), so one keys-only Query per instance
 * visited finds them. At most `max` keys, and `truncated` when there were more (one key more than
 * the cap is read to tell). `step` is awaited before each Query (a call's read steps:
 * shared/objects/domain-context.ts `readSteps`). The walk of a search with `includeChildInstances`, of the
 * usage report and of an MQTT connection's policy.
 */
export async function instanceTree(
  db: Db,
  root: string,
  max: number,
  step?: ReadStep,
): Promise<{ keys: string[]; truncated: boolean }> {
  const keys = [root];
  for (let i = 0; i < keys.length && keys.length <= max; i++) {
    keys.push(...(await listCollectionKeys(db, keys[i]!, 'instances', max + 1 - keys.length, undefined, step)));
  }
  return { keys: keys.slice(0, max), truncated: keys.length > max };
}

/** The latest status document stored for an object (inputs), or undefined. */
export async function getObjectStatus(db: Db, key: string): Promise<Record<string, unknown> | undefined> {
  const item = await getItem(db, objectPk(key), STATUS_SK, true);
  return typeof item?.Doc === 'string' ? (parseJson(item.Doc) as Record<string, unknown>) : undefined;
}

/**
 * Whether a folder holds anything in any of `collections`: one Query with Limit 1 (keys only)
 * per collection, in parallel. Never a Scan; the cost is a fixed number of small reads.
 */
export async function folderHasContent(db: Db, folder: string, collections: readonly string[]): Promise<boolean> {
  const found = await Promise.all(
    collections.map(async (collection) => {
      const page = await queryPage(db, {
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': collectionPk(folder, collection) },
        ProjectionExpression: 'PK',
        Limit: 1,
      });
      return page.items.length > 0;
    }),
  );
  return found.some(Boolean);
}

/** Where a deleted folder or instance was (its tombstone). */
export interface Tombstone {
  readonly key: string;
  readonly collection: string;
  readonly path: readonly string[];
}

/** An object, or else its tombstone: one BatchGetItem (used only when deciding 403 or 404). */
export async function getObjectOrTombstone(
  db: Db,
  key: string,
  nowMs: number,
): Promise<{ object?: StoredObject; tombstone?: Tombstone }> {
  const items = await batchGetItems(db, [objectItemKey(key), { PK: objectPk(key), SK: TOMBSTONE_SK }], { consistent: true });
  const obj = items.find((i) => i.SK === OBJECT_SK);
  if (obj) return { object: fromItem(obj) };
  const t = items.find((i) => i.SK === TOMBSTONE_SK && Number(i.ttl ?? Infinity) > nowMs / 1000);
  return t ? { tombstone: { key, collection: String(t.Coll), path: (t.Path as string[]) ?? [] } } : {};
}
