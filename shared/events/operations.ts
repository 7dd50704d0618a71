/**
 * The operations of the `events` family, by route-table name. Thin: parse, call the domain,
 * respond. The event types of apps and alarms are in event-type-operations.ts: the events list
 * compiles queries (mingo and re2js), which those families never load.
 */
import { accepted, created, pathParam, type Operation } from '../http/types.ts';
import { operationsOnFirstCall } from '../http/lazy-operations.ts';
import { contextOf } from '../objects/context.ts';
import { publish, type CommandHook } from './publish.ts';
import { renderEvent } from './render.ts';

/** The publish call; a family gives it the commands it carries out (the events family: the card read). */
export const publishOperation =
  (commands?: CommandHook): Operation =>
  async (req, deps) => {
    const ctx = contextOf(req, deps);
    const { event, live } = await publish(ctx, deps.config.eventRetentionDays, pathParam(req, 'folderKey'), req.body, commands);
    // A NonLogging event is delivered live and not stored: 202 with the event as delivered.
    return live ? accepted(renderEvent(event, ctx.ns)) : created(renderEvent(event, ctx.ns));
  };

const publishOp = publishOperation();

/**
 * The calls on stored events (read-operations.ts) load with the first of them: publish, the
 * family's hot call and what most cold starts serve, needs none of their code.
 */
const reads = operationsOnFirstCall(
  () => import('./read-operations.ts').then((m) => m.eventReadOperations),
  ['listEvents', 'getEvent', 'getEventLink', 'acknowledge', 'lastEvent', 'aggregateEvents'],
);

export const eventOperations: Readonly<Record<string, Operation>> = { publish: publishOp, ...reads };
