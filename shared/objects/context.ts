/** What the domain needs from a request: the store, the namespace, the caller, the clock. */
import type { Db } from '../db/client.ts';
import type { ReadStep } from '../db/objects-repo.ts';
import { unauthorized } from '../errors.ts';
import type { ApiRequest, BaseDeps } from '../http/types.ts';
import type { Principal } from '../auth/principal.ts';
import { NO_HOOKS, type ObjectHooks } from './hooks.ts';

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
}

export function contextOf(req: ApiRequest, deps: BaseDeps, hooks: ObjectHooks = NO_HOOKS): Ctx {
  // The pipeline authenticates every route with `auth: true` before the operation runs.
  if (!req.principal) throw unauthorized();
  return { db: deps.db, ns: deps.config.modelNamespace, principal: req.principal, now: deps.now(), hooks, ...(req.verdict ? { verdict: req.verdict } : {}) };
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
