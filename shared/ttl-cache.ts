/**
 * A small in-memory LRU map with a time to live, one per execution environment (a Lambda
 * container or the local process). Every use holds hints that a miss merely makes slower: the
 * cursor of a listing's next page, folder placements, what publishing resolves again and again.
 */
export class TtlCache<V> {
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

  /** True when `key` holds a live entry (an entry may hold `null` for "known missing"). */
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  set(key: string, value: V, ttlMs = this.ttlMs): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.clock() + ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Deletes every entry whose value matches (used on writes, which are rare). */
  deleteWhere(match: (value: V, key: string) => boolean): void {
    for (const [k, e] of this.entries) if (match(e.value, k)) this.entries.delete(k);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
