/**
 * Tenant scope, roles, and finding the object a path names.
 *
 * Scope: a token acts in its own instance and the instances and folders below it, never in a
 * parent or a sibling. A path whose folder is outside that scope answers 403 whether the folder
 * exists or not (a key that does not exist cannot be shown to be inside the scope, and answering
 * 404 for it would tell which keys exist elsewhere). An unknown object in an accessible folder,
 * or an object of another collection or folder, answers 404.
 *
 * Cost: every object item carries its `Path`, so a successful GET is one GetItem; only a miss
 * reads the path's folder to tell 403 from 404.
 *
 * Roles: ReadOnly may not write; Operator writes everything except users and instances;
 * Administrator writes everything. Controller (an edge door controller) calls only the operations
 * of `CONTROLLER_OPERATIONS` (auth/principal.ts; the pipeline refuses the others).
 */
import type { Role } from '../auth/principal.ts';
import { getObject, getObjectOrTombstone, type Tombstone } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { PERIPHERAL_COLLECTIONS } from '../model/collections.ts';
import { isWithin } from '../model/placement.ts';
import { isFolderLike } from '../model/object-render.ts';
import { placementCache, type FolderPlacement } from './cursor-cache.ts';
import type { Ctx } from './domain-context.ts';
import { invalidFolder, objectNotFound, outOfScope, roleForbidden } from './object-errors.ts';

const RANK: Readonly<Record<Role, number>> = { Controller: 0, ReadOnly: 0, Operator: 1, Administrator: 2 };

/** Throws 403 unless the caller's role is at least `needed` for writing `what`. */
export function requireRole(ctx: Ctx, needed: Role, what: string): void {
  if (RANK[ctx.principal.role] < RANK[needed]) throw roleForbidden(what);
}

/** What a note or an acknowledgement written by a user of an ancestor instance names as its author. */
export const OUTER_AUTHOR = 'Parent instance';

/**
 * The author a note or an acknowledgement records (`CreatedBy`, `AcknowledgedBy`): the caller's
 * user name when the caller belongs to `ownerInstance`, the instance that owns the object.
 * A user of an ancestor instance acting here is not named: the owner's users cannot see that
 * instance, and its users' names are its own (tenant isolation).
 */
export function authorName(ctx: Ctx, ownerInstance: string): string {
  return ctx.principal.instanceKey === ownerInstance ? ctx.principal.userName : OUTER_AUTHOR;
}

/** Where a request's path points. */
export type Locator =
  /** `/api/f/<folderKey>/<collection>/<key>` */
  | { readonly kind: 'member'; readonly collection: string; readonly folderKey: string; readonly key: string }
  /** `/api/f/<key>`: a folder or an instance */
  | { readonly kind: 'folder'; readonly key: string }
  /** `/api/f/<folderKey>/peripherals/<key>`: a reader, input or output */
  | { readonly kind: 'peripheral'; readonly folderKey: string; readonly key: string };

/** True when the folder that holds `o` is in the caller's scope (its path lists the caller's instance). */
const holderInScope = (ctx: Ctx, o: Pick<StoredObject, 'path'>): boolean => o.path.includes(ctx.principal.instanceKey);

/** True when the folder-like `f` itself is in the caller's scope. */
const folderInScope = (ctx: Ctx, f: Pick<StoredObject, 'key' | 'path'>): boolean => isWithin(ctx.principal.instanceKey, f);

const placementId = (db: Ctx['db'], key: string): string => `${db.tableName}\u0000${key}`;

function remember(db: Ctx['db'], o: StoredObject | Tombstone, gone = false): FolderPlacement {
  const folderLike = isFolderLike(o);
  // The container keeps its placement, not its document (which may be large and change).
  const container = folderLike && !gone && 'doc' in o ? { ...o, doc: {} } : undefined;
  const p: FolderPlacement = { key: o.key, path: o.path, folderLike, gone, at: Date.now(), ...(container ? { container } : {}) };
  placementCache.set(placementId(db, o.key), p);
  return p;
}

/**
 * Forgets the cached placement of a deleted object. Other execution environments keep theirs
 * until it expires: there, an empty listing of the deleted folder answers [] instead of 404 for
 * at most the cache's TTL (never a wrong scope answer, as placements never change), and a create
 * in it may still succeed there for at most {@link CREATE_PLACEMENT_MAX_AGE_MS} (see
 * {@link createTarget}).
 */
export function forgetPlacement(ctx: Ctx, key: string): void {
  placementCache.delete(placementId(ctx.db, key));
}

/** Where a folder (or a deleted folder, by its tombstone) sits; cached, as placements never change. */
async function placementOf(ctx: Ctx, key: string): Promise<FolderPlacement | undefined> {
  const cached = placementCache.get(placementId(ctx.db, key));
  if (cached) return cached;
  const { object, tombstone } = await getObjectOrTombstone(ctx.db, key, ctx.now.getTime());
  if (object) return remember(ctx.db, object);
  return tombstone ? remember(ctx.db, tombstone, true) : undefined;
}

/**
 * Decides between 403 and 404 for a path whose object was not found in `folderKey`: 403 when the
 * folder is not provably inside the caller's scope, else 404 (also when the "folder" is an object
 * in scope that is not a folder).
 */
export async function missIn(ctx: Ctx, folderKey: string): Promise<never> {
  if (folderKey === ctx.principal.instanceKey) throw objectNotFound();
  if (!isObjectKey(folderKey)) throw outOfScope();
  const f = await placementOf(ctx, folderKey);
  if (!f) throw outOfScope();
  const inScope = f.folderLike ? folderInScope(ctx, f) : holderInScope(ctx, f);
  throw inScope ? objectNotFound() : outOfScope();
}

/** Throws 403/404 unless `folderKey` is a folder in the caller's scope (no read for the caller's own instance). */
export async function requireFolderInScope(ctx: Ctx, folderKey: string): Promise<void> {
  if (folderKey === ctx.principal.instanceKey) return;
  if (!isObjectKey(folderKey)) throw outOfScope();
  const f = await placementOf(ctx, folderKey);
  if (!f) throw outOfScope();
  if (f.folderLike) {
    if (!folderInScope(ctx, f)) throw outOfScope();
    if (f.gone) throw objectNotFound();
    return;
  }
  throw holderInScope(ctx, f) ? objectNotFound() : outOfScope();
}

/** Records that the objects of a listing show their folder to be in scope (or throws 403). */
export function checkListedScope(ctx: Ctx, items: readonly StoredObject[]): void {
  const first = items[0];
  if (first && !holderInScope(ctx, first)) throw outOfScope();
}

/**
 * Reads a folder (or instance) a new object goes into: 403 when it is missing or outside the
 * scope, 404 when the key names an object in scope that is not a folder. One GetItem.
 */
export async function loadFolder(ctx: Ctx, folderKey: string): Promise<StoredObject> {
  if (!isObjectKey(folderKey)) throw outOfScope();
  const f = await getObject(ctx.db, folderKey, true);
  if (!f) throw outOfScope();
  if (!isFolderLike(f)) throw holderInScope(ctx, f) ? objectNotFound() : outOfScope();
  if (!folderInScope(ctx, f)) throw outOfScope();
  remember(ctx.db, f);
  return f;
}

/**
 * The folder a POST creates its object in: the path's folder, or the folder `InFolderKey` names
 * when it lies below the path's folder. Any other folder is 400 InvalidFolder, or 403 when it is
 * outside the caller's scope (or does not exist: that cannot be shown to be inside it).
 */
async function targetFolder(ctx: Ctx, pathFolder: StoredObject, inFolderKey: string | undefined): Promise<StoredObject> {
  if (inFolderKey === undefined || inFolderKey === pathFolder.key) return pathFolder;
  if (!isObjectKey(inFolderKey)) throw invalidFolder(`InFolderKey "${inFolderKey}" is not a folder key.`);
  const t = await getObject(ctx.db, inFolderKey, true);
  if (!t) throw outOfScope();
  if (!isFolderLike(t)) {
    if (!holderInScope(ctx, t)) throw outOfScope();
    throw invalidFolder(`InFolderKey ${inFolderKey} is not a folder.`);
  }
  return below(ctx, t, pathFolder);
}

/** The folder-like `t`, checked to be in the caller's scope and below `pathFolder`. */
function below(ctx: Ctx, t: StoredObject, pathFolder: StoredObject): StoredObject {
  if (!folderInScope(ctx, t)) throw outOfScope();
  if (!t.path.includes(pathFolder.key)) {
    throw invalidFolder(`InFolderKey ${t.key} is neither the folder of the path nor a folder below it.`);
  }
  remember(ctx.db, t);
  return t;
}

/** Where a create writes, and whether its document was read just now. */
export interface CreateTarget {
  readonly folder: StoredObject;
  /**
   * False when the folder came from the placement cache: its placement is exact (placements
   * never change) but its document is not kept (`{}`): read the folder for its fields.
   */
  readonly read: boolean;
}

/**
 * How long a create trusts a folder this execution environment has read: a create then costs its
 * transaction alone (a bulk import into one instance reads the instance once a minute). The price:
 * a folder deleted by another execution environment within that minute may still receive a
 * create. The transaction cannot check the folder instead: the folder item would be in every
 * create's transaction, and in AWS two transactions in flight on one item cancel one another
 * (TransactionConflict), so parallel creates into one instance would mostly retry.
 */
export const CREATE_PLACEMENT_MAX_AGE_MS = 60_000;

/**
 * The folder a create writes into ({@link loadFolder}, then {@link targetFolder}) with the same
 * answers, scope-checked for this caller; a folder this execution environment read less than
 * {@link CREATE_PLACEMENT_MAX_AGE_MS} ago is not read again.
 */
export async function createTarget(ctx: Ctx, folderKey: string, inFolderKey: string | undefined): Promise<CreateTarget> {
  const known = (key: string) => {
    const p = isObjectKey(key) ? placementCache.get(placementId(ctx.db, key)) : undefined;
    return p && Date.now() - p.at <= CREATE_PLACEMENT_MAX_AGE_MS ? p.container : undefined;
  };
  const hitPath = known(folderKey);
  if (hitPath && !folderInScope(ctx, hitPath)) throw outOfScope();
  const pathFolder = hitPath ?? (await loadFolder(ctx, folderKey));
  if (inFolderKey === undefined || inFolderKey === pathFolder.key) return { folder: pathFolder, read: !hitPath };
  const hitInner = known(inFolderKey);
  if (hitInner) return { folder: below(ctx, hitInner, pathFolder), read: false };
  return { folder: await targetFolder(ctx, pathFolder, inFolderKey), read: true };
}

/**
 * The object a path names, with its scope checked. One (strongly consistent) GetItem when it is
 * found; a miss reads the path's folder to tell 403 from 404.
 */
export async function locate(ctx: Ctx, loc: Locator): Promise<StoredObject> {
  if (loc.kind === 'folder') {
    if (!isObjectKey(loc.key)) throw outOfScope();
    const o = await getObject(ctx.db, loc.key, true);
    if (!o) {
      // A deleted folder in scope answers 404 (its tombstone says where it was).
      const f = await placementOf(ctx, loc.key);
      throw f?.folderLike && folderInScope(ctx, f) ? objectNotFound() : outOfScope();
    }
    if (isFolderLike(o)) {
      if (!folderInScope(ctx, o)) throw outOfScope();
      return o;
    }
    throw holderInScope(ctx, o) ? objectNotFound() : outOfScope();
  }
  const o = isObjectKey(loc.key) ? await getObject(ctx.db, loc.key, true) : undefined;
  const matches =
    o !== undefined &&
    o.folder === loc.folderKey &&
    (loc.kind === 'member' ? o.collection === loc.collection : PERIPHERAL_COLLECTIONS.includes(o.collection));
  if (!matches) return missIn(ctx, loc.folderKey);
  if (!holderInScope(ctx, o)) throw outOfScope();
  return o;
}
