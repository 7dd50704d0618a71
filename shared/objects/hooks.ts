/**
 * Extension points for the work other modules do around the object calls, passed explicitly (no
 * module-level registration): the relationships issue turns ObjectLinks into connections after a
 * write, forgets an object's connections after its delete, and serves `<Href>/connections` and
 * `<Href>/references`. A family plugs its hooks in with `objectOperations(hooks)`.
 *
 * `beforeWrite` runs before the object's transaction and may add to it; the `after` hooks run
 * after it succeeded: one that throws makes the call answer its error, but the write stands.
 */
import type { ExtraWrite } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import type { Ctx } from './context.ts';

export interface ObjectHooks {
  /**
   * Before an object is created (`previous` undefined) or replaced: throws to refuse the write
   * (nothing is written), or returns the document to store instead of the draft's and extra items
   * for the object's own transaction.
   */
  readonly beforeWrite?: (
    ctx: Ctx,
    draft: StoredObject,
    previous: StoredObject | undefined,
  ) => Promise<{ readonly doc: Record<string, unknown>; readonly extra: ExtraWrite[] } | undefined>;
  /** After an object was created (`previous` undefined) or replaced; not called for an unchanged PUT. */
  readonly afterWrite?: (ctx: Ctx, o: StoredObject, previous: StoredObject | undefined) => Promise<void>;
  /** After an object was deleted. */
  readonly afterDelete?: (ctx: Ctx, o: StoredObject) => Promise<void>;
  /** `GET <Href>/connections` (default: an empty array). */
  readonly connections?: (ctx: Ctx, o: StoredObject) => Promise<unknown[]>;
  /** `GET <Href>/references` (default: an empty array). */
  readonly references?: (ctx: Ctx, o: StoredObject) => Promise<unknown[]>;
}

export const NO_HOOKS: ObjectHooks = Object.freeze({});
