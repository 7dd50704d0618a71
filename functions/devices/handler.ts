/**
 * Devices family: inputs (with their status), outputs, readers, controllers, input scanners,
 * doors, service containers, their connections, and `peripherals/<key>` (any reader, input or
 * output).
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';
import { connectOperation, disconnectOperation, listConnectionsOperation } from '#shared/relations/relation-operations.ts';

const objects = objectOperations(relationHooks);

export const operations = { ...objects.collection, ...objects.peripheral, connect: connectOperation, listConnections: listConnectionsOperation, disconnect: disconnectOperation };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'devices', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
