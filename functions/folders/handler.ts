/**
 * Folders family: the caller's instance (`GET /api`), folders and instances at their own Href
 * (`/api/f/<key>`, with their standard links), the folders, instances and users collections, an
 * instance's metered usage (`/api/f/<instance_key>/usage`) and a user's "sign out everywhere"
 * (`POST .../users/<key>/revokesessions`).
 */
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { objectOperations } from '#shared/objects/operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';
import { usageOperations } from '#shared/usage/operations.ts';

const objects = objectOperations(relationHooks);

export const operations = { ...objects.collection, ...objects.folder, ...objects.users, ...usageOperations };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'folders', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
