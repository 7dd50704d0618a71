/**
 * Folders family: the caller's instance (`GET /api`), folders and instances at their own Href
 * (`/api/f/<key>`, with their standard links), the folders, instances and users collections, an
 * instance's metered usage (`/api/f/<instance_key>/usage`) and a user's "sign out everywhere"
 * (`POST .../users/<key>/revokesessions`).
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';
import { operationsOnFirstCall } from '#shared/http/lazy-operations.ts';

const objects = objectOperations(relationHooks);

// The usage report (an operator's occasional call) loads with its first call: a cold start
// serving the folders and the API root does not read it.
const usage = operationsOnFirstCall(() => import('#shared/usage/usage-operations.ts').then((m) => m.usageOperations), ['usage']);

export const operations = { ...objects.collection, ...objects.folder, ...objects.users, ...usage };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'folders', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
