/**
 * The operations of events, event types and alarm membership, by route-table name. Thin: parse,
 * call the domain, respond. `eventOperations` make the `events` family; `eventTypeOperations` and
 * `alarmEventTypeOperations` are spread into the `apps` and `alarms` families' operation maps.
 */
import { stringParam } from '../http/params.ts';
import { accepted, created, noContent, ok, type ApiRequest, type Operation } from '../http/types.ts';
import { contextOf } from '../objects/context.ts';
import { parsePaging } from '../objects/paging.ts';
import {
  addAlarmEventType,
  addEventType,
  eventTypeLink,
  findEventType,
  listAlarmEventTypes,
  listEventTypes,
  locateEventType,
  removeAlarmEventType,
  removeEventType,
  updateEventType,
} from './event-types.ts';
import { listEvents } from './list.ts';
import { dateParam } from '../http/params.ts';
import { parseEventListQuery } from './list-query.ts';
import { publish } from './publish.ts';
import { acknowledge, eventLink, lastEvents, locateEvent } from './read.ts';
import { renderEvent, renderEventType } from './render.ts';

const p = (req: ApiRequest, name: string): string => req.params[name] ?? '';

// ---------------------------------------------------------------------------------------------
// events family

const publishOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const { event, live } = await publish(ctx, deps.config.eventRetentionDays, p(req, 'folderKey'), req.body);
  // A NonLogging event is delivered live and not stored: 202 with the event as delivered.
  return live ? accepted(renderEvent(event, ctx.ns)) : created(renderEvent(event, ctx.ns));
};

const listEventsOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const q = parseEventListQuery(req);
  const events = await listEvents(ctx, p(req, 'folderKey'), q);
  return ok(events.map((e) => renderEvent(e, ctx.ns)));
};

const getEventOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(renderEvent(await locateEvent(ctx, p(req, 'folderKey'), p(req, 'key')), ctx.ns));
};

const getEventLinkOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(await eventLink(ctx, p(req, 'folderKey'), p(req, 'key'), p(req, 'link').toLowerCase()));
};

const acknowledgeOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const event = await acknowledge(ctx, p(req, 'folderKey'), p(req, 'key'), req.body);
  return created(renderEvent(event, ctx.ns));
};

// GET with a JSON array body (the spec's form) and POST (for clients that cannot send GET bodies).
const lastEventOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(await lastEvents(ctx, p(req, 'folderKey'), dateParam(req, 'since'), req.body));
};

export const eventOperations: Readonly<Record<string, Operation>> = {
  publish: publishOp,
  listEvents: listEventsOp,
  getEvent: getEventOp,
  getEventLink: getEventLinkOp,
  acknowledge: acknowledgeOp,
  lastEvent: lastEventOp,
};

// ---------------------------------------------------------------------------------------------
// apps family: event types (`{key}` is the app, `{linkKey}` the event type)

const addEventTypeOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return created(renderEventType(await addEventType(ctx, p(req, 'folderKey'), p(req, 'key'), req.body), ctx.ns));
};

const listEventTypesOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const namespace = stringParam(req, 'namespace');
  const nickname = stringParam(req, 'nickname');
  if (namespace !== undefined || nickname !== undefined) {
    return ok(renderEventType(await findEventType(ctx, p(req, 'folderKey'), p(req, 'key'), namespace, nickname), ctx.ns));
  }
  const types = await listEventTypes(ctx, p(req, 'folderKey'), p(req, 'key'), parsePaging(req));
  return ok(types.map((t) => renderEventType(t, ctx.ns)));
};

const updateEventTypeOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  await updateEventType(ctx, p(req, 'folderKey'), p(req, 'key'), p(req, 'linkKey'), req.body);
  return noContent();
};

// The spec's update form is a GET with a body; without a body, GET reads the event type.
const getEventTypeOp: Operation = async (req, deps) => {
  if (req.body !== undefined) return updateEventTypeOp(req, deps);
  const ctx = contextOf(req, deps);
  return ok(renderEventType(await locateEventType(ctx, p(req, 'folderKey'), p(req, 'key'), p(req, 'linkKey')), ctx.ns));
};

const removeEventTypeOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  await removeEventType(ctx, p(req, 'folderKey'), p(req, 'key'), p(req, 'linkKey'));
  return noContent();
};

const getEventTypeLinkOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(await eventTypeLink(ctx, p(req, 'folderKey'), p(req, 'key'), p(req, 'linkKey'), p(req, 'link').toLowerCase()));
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
  await addAlarmEventType(contextOf(req, deps), p(req, 'folderKey'), p(req, 'key'), req.body);
  return noContent();
};

const listAlarmEventTypesOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const types = await listAlarmEventTypes(ctx, p(req, 'folderKey'), p(req, 'key'), parsePaging(req));
  return ok(types.map((t) => renderEventType(t, ctx.ns)));
};

const removeAlarmEventTypeOp: Operation = async (req, deps) => {
  await removeAlarmEventType(contextOf(req, deps), p(req, 'folderKey'), p(req, 'key'), p(req, 'linkKey'));
  return noContent();
};

export const alarmEventTypeOperations: Readonly<Record<string, Operation>> = {
  addAlarmEventType: addAlarmEventTypeOp,
  listAlarmEventTypes: listAlarmEventTypesOp,
  removeAlarmEventType: removeAlarmEventTypeOp,
};
