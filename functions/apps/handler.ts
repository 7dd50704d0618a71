/**
 * Apps family: the app collection, and the event types of an app (see `shared/events/event-type-operations.ts`).
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { forgettingApps } from '#shared/events/app-cache.ts';
import { operationsOnFirstCall } from '#shared/http/lazy-operations.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';

// A publish served by this environment (the local runtime's one process) sees an app's change at once.
const objects = objectOperations(forgettingApps(relationHooks));

// The event types of an app load with the first call on them.
const eventTypes = operationsOnFirstCall(
  () => import('#shared/events/event-type-operations.ts').then((m) => m.eventTypeOperations),
  ['addEventType', 'listEventTypes', 'getEventType', 'updateEventType', 'removeEventType', 'getEventTypeLink'],
);

export const operations = { ...objects.collection, ...eventTypes };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'apps', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
