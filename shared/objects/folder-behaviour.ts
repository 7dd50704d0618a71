/**
 * Folders (and the folder side of instances): a folder is deleted only when it holds nothing.
 * Emptiness is checked without a Scan: one keys-only Query with Limit 1 per collection the folder
 * can hold (in parallel). No counter is kept on the folder item: a counter would put every create
 * and delete of a folder's objects in a transaction on one hot item, and parallel creates in one
 * folder would then conflict.
 *
 * Known window (documented): an object created in the instant between the emptiness check and the
 * folder's delete transaction is orphaned (it can still be read by its key, but its folder is
 * gone). Closing it would need that same hot item. A create trusts a folder its execution
 * environment read in the last minute (`createTarget` in tenant-scope.ts), which widens that window to
 * a minute for creates served by another execution environment than the delete.
 *
 * A deleted folder leaves a tombstone so its old paths answer 404 rather than 403.
 */
import { folderHasContent } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { putTombstoneItem } from '../db/object-writes.ts';
import { collectionLinkDefs } from '../model/object-render.ts';
import type { Override } from './behaviour.ts';
import type { Ctx } from './domain-context.ts';
import { folderNotEmpty } from './object-errors.ts';

/** Throws 409 FolderNotEmpty when any collection of the folder holds an object. */
export async function requireEmpty(ctx: Ctx, folder: StoredObject): Promise<void> {
  const collections = collectionLinkDefs(folder).map((l) => l.href);
  if (await folderHasContent(ctx.db, folder.key, collections)) throw folderNotEmpty();
}

export const folderBehaviour: Override = (base) => ({
  ...base,
  beforeDelete: (ctx, o) => requireEmpty(ctx, o),
  deleteExtra: (ctx, o) => [putTombstoneItem(ctx.db, o, ctx.now.getTime())],
});
