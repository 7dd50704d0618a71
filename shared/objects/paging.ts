/**
 * Pagination (`page`, zero-based, default 0; `pageSize`, default 20, 1..1000). Out-of-range values
 * are a 400, never a silent clamp: a client that stops on a short page would lose data.
 *
 * Walking pages 0..N sequentially costs O(total items): each page is one Query that starts after
 * the last key of the page before, and that cursor is cached per execution environment (LRU with
 * a TTL, keyed by table, folder, collection, page size and page). On a cache miss (another
 * execution environment served the page before, or the entry expired) the keys before the page are
 * read with keys-only Queries (`listCollectionKeys`, up to 1000 keys a request) to find the
 * cursor: slower, never wrong. A listing is in creation order (keys are time-ordered ObjectIds);
 * a cached cursor keeps its place when items before it are deleted, so a walking client sees every
 * item that exists throughout the walk.
 */
import { listCollection, listCollectionKeys } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import type { Db } from '../db/client.ts';
import { isObjectKey } from '../db/item-keys.ts';
import type { CollectionDef } from '../model/collections.ts';
import { checkListedScope, requireFolderInScope } from './tenant-scope.ts';
import { readSteps, type Ctx, type ReadStep } from './domain-context.ts';
import { cursorCache } from './cursor-cache.ts';

import type { Paging } from '../http/paging-params.ts';

export { parsePaging, type Paging } from '../http/paging-params.ts';

const cursorKey = (db: Db, folder: string, collection: string, pageSize: number, page: number): string =>
  `${db.tableName}\u0000${folder}\u0000${collection}\u0000${pageSize}\u0000${page}`;

/**
 * One page of a folder's collection: one Query of at most `pageSize` items when the cursor is
 * cached (or for page 0). Only a page larger than DynamoDB's 1 MB response limit takes more than
 * one Query (a short page would tell the client the data has ended).
 */
export async function pageOf(db: Db, folder: string, collection: string, { page, pageSize }: Paging, step?: ReadStep): Promise<StoredObject[]> {
  let after: string | undefined;
  if (page > 0) {
    after = cursorCache.get(cursorKey(db, folder, collection, pageSize, page));
    if (after === undefined) {
      const skip = page * pageSize;
      const keys = await listCollectionKeys(db, folder, collection, skip, undefined, step);
      if (keys.length < skip) return [];
      for (let p = 1; p <= page; p++) cursorCache.set(cursorKey(db, folder, collection, pageSize, p), keys[p * pageSize - 1]!);
      after = keys[skip - 1];
    }
  }
  const items: StoredObject[] = [];
  let start = after;
  do {
    await step?.();
    const out = await listCollection(db, folder, collection, pageSize - items.length, start);
    items.push(...out.items);
    start = out.nextStart;
  } while (items.length < pageSize && start !== undefined);
  if (items.length === pageSize) cursorCache.set(cursorKey(db, folder, collection, pageSize, page + 1), items[items.length - 1]!.key);
  return items;
}

/**
 * One page of a folder's collection, scope-checked: one Query; an empty page outside the caller's
 * instance reads the folder once (cached).
 */
export async function listObjects(ctx: Ctx, def: CollectionDef, folderKey: string, paging: Paging): Promise<StoredObject[]> {
  // A key that cannot be a folder is refused before any read.
  if (!isObjectKey(folderKey)) await requireFolderInScope(ctx, folderKey);
  const items = await pageOf(ctx.db, folderKey, def.name, paging, readSteps(ctx));
  // The scope check costs nothing when the page has items (each carries its path).
  if (items.length > 0) checkListedScope(ctx, items);
  else await requireFolderInScope(ctx, folderKey);
  return items;
}
