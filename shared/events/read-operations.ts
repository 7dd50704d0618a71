/**
 * The `events` family's calls on stored events: the list, one event and its links, an
 * acknowledgement, lastevent and aggregation. Loaded with the first of them (operations.ts): a
 * cold start serving a publish, the family's hot call (one per badge swipe), reads none of it, nor
 * the list's query compiler.
 */
import { dateParam } from '../http/params.ts';
import { created, ok, pathParam, type Operation } from '../http/operation-contract.ts';
import { contextOf } from '../objects/domain-context.ts';
import { queryFolderEvents } from '../db/event-reads.ts';
import { requireFolderInScope } from '../objects/tenant-scope.ts';
import { foldersOf, listEvents } from './list.ts';
import { parseEventListQuery } from './list-query.ts';
import { acknowledge, eventLink, lastEvents, locateEvent } from './read.ts';
import { renderEvent } from './event-render.ts';
import { onFirstUse } from '../first-use.ts';

const listEventsOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const q = await parseEventListQuery(req);
  const events = await listEvents(ctx, pathParam(req, 'folderKey'), q);
  return ok(events.map((e) => renderEvent(e, ctx.ns)));
};

const getEventOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(renderEvent(await locateEvent(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key')), ctx.ns));
};

const getEventLinkOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(await eventLink(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), pathParam(req, 'link').toLowerCase()));
};

const acknowledgeOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const event = await acknowledge(ctx, pathParam(req, 'folderKey'), pathParam(req, 'key'), req.body);
  return created(renderEvent(event, ctx.ns));
};

// GET with a JSON array body (the spec's form) and POST (for clients that cannot send GET bodies).
const lastEventOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(await lastEvents(ctx, pathParam(req, 'folderKey'), dateParam(req, 'since'), req.body));
};

/**
 * The aggregation engine (mingo) is loaded on the first aggregation, not with the first list or
 * read of events, which load this module (what that saves: docs/cost.md). It gets its reads from here (see `AggregateReads`).
 */
const aggregation = onFirstUse(() => import('./aggregate.ts'));

const aggregateEventsOp: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const { aggregateEvents, parseAggregateQuery, loadRegexEngine } = await aggregation();
  // A stage may hold its `$regex` inside a JSON string: RE2 loads before the pipeline is read.
  await loadRegexEngine();
  const q = parseAggregateQuery(req);
  const limits = { maxEvents: deps.config.aggregateMaxEvents, clock: () => deps.now().getTime() };
  return ok(await aggregateEvents(ctx, pathParam(req, 'folderKey'), q, limits, { requireFolderInScope, foldersOf, queryFolderEvents }));
};

export const eventReadOperations = {
  listEvents: listEventsOp,
  getEvent: getEventOp,
  getEventLink: getEventLinkOp,
  acknowledge: acknowledgeOp,
  lastEvent: lastEventOp,
  aggregateEvents: aggregateEventsOp,
} satisfies Readonly<Record<string, Operation>>;
