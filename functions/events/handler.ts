/**
 * Events family: the event message sink, the events list, one event and its links,
 * acknowledgements and lastevent (see `shared/events/event-operations.ts`).
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { eventOperations } from '#shared/events/event-operations.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';

export const operations = { ...eventOperations };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'events', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
