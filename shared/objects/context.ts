/** What the domain needs from a request: the store, the namespace, the caller, the clock. */
import type { Db } from '../db/client.ts';
import { unauthorized } from '../errors.ts';
import type { ApiRequest, BaseDeps, Principal } from '../http/types.ts';
import { NO_HOOKS, type ObjectHooks } from './hooks.ts';

export interface Ctx {
  readonly db: Db;
  /** `$type` namespace of output. */
  readonly ns: string;
  readonly principal: Principal;
  readonly now: Date;
  /** What other modules do around the object calls (none by default). */
  readonly hooks: ObjectHooks;
}

export function contextOf(req: ApiRequest, deps: BaseDeps, hooks: ObjectHooks = NO_HOOKS): Ctx {
  // The pipeline authenticates every route with `auth: true` before the operation runs.
  if (!req.principal) throw unauthorized();
  return { db: deps.db, ns: deps.config.modelNamespace, principal: req.principal, now: deps.now(), hooks };
}
