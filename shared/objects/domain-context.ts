/** What the domain needs from a request: the store, the namespace, the caller, the clock. */
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import type { ExtraWrite, ReadStep } from '../db/objects-repo.ts';
import { unauthorized } from '../errors.ts';
import type { ApiRequest, BaseDeps } from '../http/operation-contract.ts';
import type { Principal } from '../auth/principal.ts';
import type { StoredObject } from '../model/stored-object.ts';

export interface Ctx {
  readonly db: Db;
  /** `$type` namespace of output. */
  readonly ns: string;
  readonly principal: Principal;
  readonly now: Date;
  /** What other modules do around the object calls (none by default). */
  readonly hooks: ObjectHooks;
  /** The caller's verdict while it is not in (see `ApiRequest.verdict`). */
  readonly verdict?: Promise<boolean>;
  /** The deployment's settings, for the rules that depend on them (an identity provider's Issuer, its secret's key). */
  readonly config?: Config;
}

export function contextOf(req: ApiRequest, deps: BaseDeps, hooks: ObjectHooks = NO_HOOKS): Ctx {
  // The pipeline authenticates every route with `auth: true` before the operation runs.
  if (!req.principal) throw unauthorized();
  return {
    db: deps.db,
    ns: deps.config.modelNamespace,
    principal: req.principal,
    now: deps.now(),
    hooks,
    config: deps.config,
    ...(req.verdict ? { verdict: req.verdict } : {}),
  };
}

/**
 * Before a read's later steps (the next page of keys, the instances below, the next batch of a
 * listing): waits for the caller's verdict while it is not in, and answers 401 once the caller is
 * refused (the pipeline then answers the refusal's own error). A call whose caller was accepted,
 * or whose verdict came first, does not wait.
 */
export async function verdictIn(ctx: Pick<Ctx, 'verdict'>): Promise<void> {
  if (ctx.verdict && !(await ctx.verdict)) throw unauthorized();
}

export type { ReadStep };

/**
 * The steps of one call's reads: the first request goes out at once (synchronously: a read by key
 * still joins a gathering of reads, shared/db/item-reads.ts), every later one waits for
 * {@link verdictIn} while the verdict is not in. Shared by the parts of a call that read side by side.
 */
export function readSteps(ctx: Pick<Ctx, 'verdict'>): ReadStep {
  let first = true;
  return () => {
    if (first) {
      first = false;
      return undefined;
    }
    return ctx.verdict ? verdictIn(ctx) : undefined;
  };
}

/**
 * The hooks: extension points for the work other modules do around the object calls (in this module:
 * a hook is given the context, and the context carries its hooks), passed explicitly (no
 * module-level registration): the relationships issue turns ObjectLinks into connections after a
 * write, forgets an object's connections after its delete, and serves `<Href>/connections` and
 * `<Href>/references`. A family plugs its hooks in with `objectOperations(hooks)`.
 *
 * `beforeWrite` runs before the object's transaction and may add to it; the `after` hooks run
 * after it succeeded: one that throws makes the call answer its error, but the write stands.
 */
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
