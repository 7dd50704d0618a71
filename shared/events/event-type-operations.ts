/**
 * The operations of event types and alarm membership, by route-table name. Thin: parse, call the
 * domain, respond. The `apps` and `alarms` functions load this module with the first call on an
 * event type (shared/http/lazy-operations.ts): a cold start serving their own collection never
 * reads it. Apart from the events family's operations (operations.ts), whose events list compiles
 * queries: these families load no query engine.
 */
import { stringParam } from '../http/params.ts';
import { created, noContent, ok, pathParam, type Operation } from '../http/operation-contract.ts';
import { contextOf } from '../objects/domain-context.ts';
import { parsePaging } from '../objects/paging.ts';
import { addAlarmEventType, addEventType, removeAlarmEventType, removeEventType, updateEventType } from './event-type-writes.ts';
import { eventTypeLink, findEventType, listAlarmEventTypes, listEventTypes, locateEventType } from './event-types.ts';
import { renderEventType } from './event-render.ts';

// ---------------------------------------------------------------------------------------------
// apps family: event types (`{key}` is the app, `{linkKey}` the event type)

const addEventTypeOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return created(renderEventType(await addEventType(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), req.body), ctx.ns));
};

const listEventTypesOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const namespace = stringParam(req, 'namespace');
  const nickname = stringParam(req, 'nickname');
  if (namespace !== undefined || nickname !== undefined) {
    return ok(renderEventType(await findEventType(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), namespace, nickname), ctx.ns));
  }
  const types = await listEventTypes(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), parsePaging(req));
  return ok(types.map((t) => renderEventType(t, ctx.ns)));
};

const updateEventTypeOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  await updateEventType(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), pathParam(req, 'linkKey'), req.body);
  return noContent();
};

// The spec's update form is a GET with a body; without a body, GET reads the event type.
const getEventTypeOp: Operation = async (req, deps) => {
  if (req.body !== undefined) return updateEventTypeOp(req, deps);
  const ctx = contextOf(req, deps);
  return ok(renderEventType(await locateEventType(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), pathParam(req, 'linkKey')), ctx.ns));
};

const removeEventTypeOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  await removeEventType(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), pathParam(req, 'linkKey'));
  return noContent();
};

const getEventTypeLinkOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(await eventTypeLink(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), pathParam(req, 'linkKey'), pathParam(req, 'link').toLowerCase()));
};

export const eventTypeOperations: Readonly<Record<string, Operation>> = {
  addEventType: addEventTypeOp,
  listEventTypes: listEventTypesOp,
  getEventType: getEventTypeOp,
  updateEventType: updateEventTypeOp,
  removeEventType: removeEventTypeOp,
  getEventTypeLink: getEventTypeLinkOp,
};

// ---------------------------------------------------------------------------------------------
// alarms family: event types of an alarm definition (`{key}` is the alarm, `{linkKey}` the event type)

const addAlarmEventTypeOp: Operation = async (req, deps) => {
  await addAlarmEventType(contextOf(req, deps), pathParam(req, 'folderKey'), pathParam(req, 'key'), req.body);
  return noContent();
};

const listAlarmEventTypesOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const types = await listAlarmEventTypes(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), parsePaging(req));
  return ok(types.map((t) => renderEventType(t, ctx.ns)));
};

const removeAlarmEventTypeOp: Operation = async (req, deps) => {
  await removeAlarmEventType(contextOf(req, deps), pathParam(req, 'folderKey'), pathParam(req, 'key'), pathParam(req, 'linkKey'));
  return noContent();
};

export const alarmEventTypeOperations: Readonly<Record<string, Operation>> = {
  addAlarmEventType: addAlarmEventTypeOp,
  listAlarmEventTypes: listAlarmEventTypesOp,
  removeAlarmEventType: removeAlarmEventTypeOp,
};
