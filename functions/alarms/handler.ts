/**
 * Alarms family: the alarm definition collection, and the event types an alarm definition
 * references (see `shared/events/event-type-operations.ts`).
 */
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { alarmEventTypeOperations } from '#shared/events/event-type-operations.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { objectOperations } from '#shared/objects/operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';

const objects = objectOperations(relationHooks);

export const operations = { ...objects.collection, ...alarmEventTypeOperations };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'alarms', operations, deps });

export const handler = createHandler(() => createCoreDeps());
