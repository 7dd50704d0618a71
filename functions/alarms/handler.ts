/**
 * Alarms family: the alarm definition collection, and the event types an alarm definition
 * references (see `shared/events/event-type-operations.ts`).
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { operationsOnFirstCall } from '#shared/http/lazy-operations.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';

const objects = objectOperations(relationHooks);

// The event types of an alarm definition load with the first call on them.
const eventTypes = operationsOnFirstCall(
  () => import('#shared/events/event-type-operations.ts').then((m) => m.alarmEventTypeOperations),
  ['addAlarmEventType', 'listAlarmEventTypes', 'removeAlarmEventType'],
);

export const operations = { ...objects.collection, ...eventTypes };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'alarms', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
