/**
 * Search family: `POST /api/f/<instance_key>/search`.
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { boolParam, parsePaging } from '#shared/http/params.ts';
import { ok, type Operation } from '#shared/http/operation-contract.ts';
import { instanceTree, ownInstance } from '#shared/db/objects-repo.ts';
import { loadFolder } from '#shared/objects/tenant-scope.ts';
import { contextOf, readSteps } from '#shared/objects/domain-context.ts';
import { loadMatcher } from '#shared/query/query.ts';
import { MAX_SEARCH_INSTANCES, needsQueryEngine, search } from '#shared/search/object-search.ts';

const searchOperation: Operation<CoreDeps> = async (req, deps) => {
  // The query engine loads (the first search of an environment) while the folder is read, unless
  // the query is string equalities only (a lookup by name or key), which need none; a refused call
  // leaves the load unawaited, so its failure is caught here and met again by search.
  if (needsQueryEngine(req.body)) loadMatcher().catch(() => undefined);
  const ctx = contextOf(req, deps);
  const folderKey = req.params.folderKey!;
  const paging = parsePaging(req);
  const children = boolParam(req, 'includeChildInstances');
  // The search's first read goes out at once; the others wait for the caller's verdict while it is
  // not in (a new environment's first call: ApiRequest.verdict).
  const step = readSteps(ctx);
  const run = (instances: readonly string[], folderScope?: string) =>
    search({ db: ctx.db, ns: ctx.ns, instances, ...(folderScope ? { folderScope } : {}), body: req.body, paging, callerInstance: ctx.principal.instanceKey, step });
  if (!children && folderKey.toLowerCase() === ctx.principal.instanceKey) {
    // The caller's own instance, the usual search: the instance is known, so its check and the
    // search's reads run side by side (one round trip less). The check decides first: a refused
    // call answers its own error, and the search's answer or error is dropped.
    const found = run([ctx.principal.instanceKey]);
    found.catch(() => undefined);
    await loadFolder(ctx, folderKey);
    return ok(await found);
  }
  const scope = await loadFolder(ctx, folderKey);
  const instance = ownInstance(scope);
  // An instance and every instance below it, the first MAX_SEARCH_INSTANCES of them.
  const instances = children ? (await instanceTree(ctx.db, instance, MAX_SEARCH_INSTANCES, step)).keys : [instance];
  return ok(await run(instances, scope.collection === 'folders' ? scope.key : undefined));
};

export const operations = { search: searchOperation };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'search', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
