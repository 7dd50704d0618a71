/**
 * A stored object as the domain sees it, and the unique values objects claim. Types only, here in
 * the model so that the model, the db layer and every domain folder name them without importing
 * the repository (db/objects-repo.ts reads and writes them).
 */
export interface StoredObject {
  readonly key: string;
  readonly collection: string;
  readonly type: string;
  readonly folder: string;
  readonly path: readonly string[];
  readonly instances: readonly string[];
  readonly version: number;
  readonly doc: Readonly<Record<string, unknown>>;
  /**
   * Users only: the session generation (`SessionGeneration`, absent = 0). Tokens and refresh
   * families carry the generation they were issued in; revoking a user's sessions raises it, and
   * anything of an older generation is refused. Never part of the document: clients do not see it.
   */
  readonly sessionGeneration?: number;
}

/** A unique value owned by one object: `scope` + `kind` + `value` may be claimed once. */
export interface Claim {
  readonly scope: string;
  readonly kind: string;
  readonly value: string;
}
