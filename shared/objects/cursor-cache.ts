/**
 * A small in-memory LRU map with a time to live, one per execution environment (a Lambda
 * container or the local process). Used for the cursor of the next page of a listing and for the
 * (immutable) placement of folders; both are hints that a miss merely makes slower.
 */
export class TtlLru<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.expires <= this.clock()) return undefined;
    this.entries.set(key, e); // most recently used last
    return e.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.clock() + this.ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** Cursor of page N of a listing = the last key of page N-1 (5 minutes, 10 000 entries ≈ 1 MB). */
export const cursorCache = new TtlLru<string>(10_000, 5 * 60_000);

/** Where a folder sits (its chain of folders), for scope checks of an empty listing. */
export interface FolderPlacement {
  readonly key: string;
  readonly path: readonly string[];
  readonly folderLike: boolean;
  /** A deleted folder, known by its tombstone. */
  readonly gone: boolean;
}

/** Folder placements never change (folders do not move), so caching them cannot give a wrong scope answer. */
export const placementCache = new TtlLru<FolderPlacement>(10_000, 5 * 60_000);
