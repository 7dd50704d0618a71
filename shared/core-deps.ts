/**
 * The default dependencies of an execution environment: created once, on first use, and
 * injected into operations. Tests and the local runtime pass their own where they need to. The
 * assembly is deps-assembly.ts; this adds the bearer-token authenticator with the callers' status check.
 */
import { createAuthenticator } from './auth/authenticator.ts';
import { createStatusCheck } from './auth/status-check.ts';
import { assembleDeps, type CoreDeps, type CoreDepsOverrides } from './deps-assembly.ts';
import { readTogether } from './db/item-reads.ts';

export type { CoreDeps, CoreDepsOverrides } from './deps-assembly.ts';

export function createCoreDeps(over: CoreDepsOverrides = {}): CoreDeps {
  return assembleDeps(over, ({ config, db, keys, now }) => {
    const checkStatus =
      over.checkStatus === false
        ? undefined
        : (over.checkStatus ?? createStatusCheck({ db, now, ...(over.statusCacheMs !== undefined ? { cacheMs: over.statusCacheMs } : {}) }));
    // The keys (the table's item in AWS) and the status are read as one request on a cold start.
    return createAuthenticator({ config, keys, together: readTogether, ...(checkStatus ? { checkStatus } : {}) });
  });
}
