/**
 * Events family: the event message sink, the events list, one event and its links,
 * acknowledgements and lastevent (see `shared/events/operations.ts`); a card read command posted
 * to the sink is decided and recorded (shared/access/commands.ts).
 */
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { accessCommands } from '#shared/access/commands.ts';
import { eventOperations, publishOperation } from '#shared/events/operations.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';

// The sink carries out the built-in MercuryCommands app's card read (shared/access/commands.ts).
export const operations = { ...eventOperations, publish: publishOperation(accessCommands) };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'events', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
