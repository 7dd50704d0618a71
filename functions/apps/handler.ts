/**
 * Apps family: the app collection, and the event types of an app (see `shared/events/event-type-operations.ts`).
 */
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { eventTypeOperations } from '#shared/events/event-type-operations.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { objectOperations } from '#shared/objects/operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';

const objects = objectOperations(relationHooks);

export const operations = { ...objects.collection, ...eventTypeOperations };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'apps', operations, deps });

export const handler = createHandler(() => createCoreDeps());
