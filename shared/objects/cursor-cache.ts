import type { StoredObject } from '../model/stored-object.ts';
import { TtlCache } from '../ttl-cache.ts';

/** Cursor of page N of a listing = the last key of page N-1 (5 minutes, 10 000 entries: a bound on its memory). */
export const cursorCache = new TtlCache<string>(10_000, 5 * 60_000);

/** Where a folder sits (its chain of folders), for scope checks of an empty listing and for creates in it. */
export interface FolderPlacement {
  readonly key: string;
  readonly path: readonly string[];
  readonly folderLike: boolean;
  /** A deleted folder, known by its tombstone. */
  readonly gone: boolean;
  /** When it was read (epoch ms): creates trust a recent one only (see `createTarget`). */
  readonly at: number;
  /**
   * The folder or instance as it was read (never for a tombstone), without its document (`{}`):
   * what a create places its object under (key, collection, path, instances).
   */
  readonly container?: StoredObject;
}

/** Folder placements never change (folders do not move), so caching them cannot give a wrong scope answer. */
export const placementCache = new TtlCache<FolderPlacement>(10_000, 5 * 60_000);
