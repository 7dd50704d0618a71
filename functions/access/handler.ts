/**
 * Access family: access levels (with their connections to schedules and readers), badge types
 * and card formats.
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';
import { connectOperation, disconnectOperation, listConnectionsOperation } from '#shared/relations/relation-operations.ts';

const objects = objectOperations(relationHooks);

export const operations = { ...objects.collection, connect: connectOperation, listConnections: listConnectionsOperation, disconnect: disconnectOperation };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'access', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
