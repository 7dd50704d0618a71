/**
 * Search family: `POST /api/f/<instance_key>/search`.
 */
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { boolParam, parsePaging } from '#shared/http/params.ts';
import { ok, type Operation } from '#shared/http/types.ts';
import { ownInstance } from '#shared/db/objects-repo.ts';
import { loadFolder } from '#shared/objects/access.ts';
import { contextOf } from '#shared/objects/context.ts';
import { descendantInstances, search } from '#shared/search/service.ts';

const searchOperation: Operation<CoreDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const scope = await loadFolder(ctx, req.params.folderKey!);
  const paging = parsePaging(req);
  const instance = ownInstance(scope);
  const instances = boolParam(req, 'includeChildInstances') ? await descendantInstances(ctx.db, instance) : [instance];
  return ok(await search({ db: ctx.db, ns: ctx.ns, scope, instances, body: req.body, paging, callerInstance: ctx.principal.instanceKey }));
};

export const operations = { search: searchOperation };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'search', operations, deps });

export const handler = createHandler(() => createCoreDeps());
