/**
 * Schedules family: schedules and holidays.
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';

const objects = objectOperations(relationHooks);

export const operations = { ...objects.collection };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'schedules', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
