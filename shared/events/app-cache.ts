/**
 * The apps a publish resolves (resolve.ts reads and fills these caches), and the hooks with which
 * the apps family forgets them when it writes an app.
 *
 * A publish names its app by key or by a moniker's nickname. A new app or nickname needs nothing
 * here: a miss is read again before it is a 404. But a nickname taken away (a PUT of the app) or
 * a deleted app stays in a cached copy: the write forgets every cached app of the execution
 * environment that made it, so a publish served there answers 404 AppNotFound at once (the local
 * runtime, where every family shares one process). In AWS the apps and the events families are
 * separate functions, so the events function's copies are not reached: there they live at most
 * {@link RESOLVE_TTL_MS}, the bound resolve.ts gives for changes to event types made elsewhere.
 */
import type { StoredObject } from '../model/stored-object.ts';
import type { ObjectHooks } from '../objects/domain-context.ts';
import { TtlCache } from '../ttl-cache.ts';

/** How long a resolved sink, app list or event type is reused. */
export const RESOLVE_TTL_MS = 10_000;

/** The apps of an instance, by table and instance key. */
export const appLists = new TtlCache<StoredObject[]>(5_000, RESOLVE_TTL_MS);
/** Apps read by key (found ones only), whichever instance they are in: the sink's chain decides. */
export const appsByKey = new TtlCache<StoredObject>(5_000, RESOLVE_TTL_MS);

/** Forgets every cached app of this execution environment (an app was written or deleted). */
function forgetApps(): void {
  appLists.clear();
  appsByKey.clear();
}

const isApp = (o: StoredObject): boolean => o.collection === 'apps';

/** `hooks`, and the apps cached in this execution environment forgotten after an app's write or delete. */
export function forgettingApps(hooks: ObjectHooks): ObjectHooks {
  return Object.freeze<ObjectHooks>({
    ...hooks,
    afterWrite: async (ctx, o, previous) => {
      if (isApp(o)) forgetApps();
      await hooks.afterWrite?.(ctx, o, previous);
    },
    afterDelete: async (ctx, o) => {
      if (isApp(o)) forgetApps();
      await hooks.afterDelete?.(ctx, o);
    },
  });
}
