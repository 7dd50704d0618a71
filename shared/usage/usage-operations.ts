/**
 * `GET /api/f/<instance_key>/usage?from=&to=`: the metered usage of an instance and every
 * instance below it, per UTC day: requests answered per family, events published (audit events
 * apart), objects created and deleted, and the objects stored now. Administrators of the
 * instance or of an instance above it; the usual scope answers otherwise (403 outside the
 * caller's scope, 404 for a folder that is not an instance).
 *
 * Precision (see docs/api.md, "Reading tenant usage"): counts are written by each execution environment at most once a
 * minute, so the last minute may be missing; an environment that stops unflushed loses at most
 * its last minute; a retried write may count twice. The billing-grade figure is the Logs
 * Insights query over the request log lines.
 *
 * Cost: the instance subtree is walked breadth first (one keys-only Query on GSI1 per instance
 * for its child instances), then one Query per instance on its usage partition for the range (at
 * most {@link MAX_USAGE_INSTANCES} instances) and one BatchGetItem per 100 instances for the
 * stored totals. A broader subtree answers 400 QueryTooBroad: ask for a sub-instance instead.
 */
import { ApiError, badRequest } from '../errors.ts';
import { instanceTree } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { storedObjects, usageDays, USAGE_RETENTION_DAYS, type DayCounts } from '../db/usage-repo.ts';
import type { CoreDeps } from '../core-deps.ts';
import { ok, queryValue, type ApiRequest, type Operation } from '../http/operation-contract.ts';
import { typeTag } from '../model/type-tags.ts';
import { loadFolder, requireRole } from '../objects/tenant-scope.ts';
import { contextOf, verdictIn, type Ctx } from '../objects/domain-context.ts';
import { utcDay } from './meter.ts';

/** Instances one usage answer may sum (the instance itself included). */
export const MAX_USAGE_INSTANCES = 100;
/** Days one answer may span. */
const MAX_USAGE_DAYS = 366;
/** Days answered without `from`. */
const DEFAULT_USAGE_DAYS = 30;

const DAY_MS = 86_400_000;
const tooBroad = (what: string) => new ApiError(400, 'QueryTooBroad', `The usage query ${what}: ask for the usage of a sub-instance.`);

/** A `from`/`to` value: a date (`2026-05-01`) or a date-time, read as its UTC day. */
function dayParam(req: ApiRequest, name: string): string | undefined {
  const raw = queryValue(req, name)?.trim();
  if (raw === undefined || raw === '') return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? Date.parse(`${raw}T00:00:00Z`) : /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (!Number.isFinite(ms)) throw badRequest('InvalidParameter', `Query parameter ${name} must be a date (yyyy-mm-dd) or an ISO 8601 date-time.`);
  const day = utcDay(ms);
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw) && day !== raw) throw badRequest('InvalidParameter', `Query parameter ${name} is not a calendar date.`);
  return day;
}

/** The answered range: `to` defaults to today, `from` to {@link DEFAULT_USAGE_DAYS} days before `to`. */
function usageRange(req: ApiRequest, now: Date): { from: string; to: string; days: string[] } {
  const today = utcDay(now.getTime());
  const to = dayParam(req, 'to') ?? today;
  const from = dayParam(req, 'from') ?? utcDay(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_USAGE_DAYS - 1) * DAY_MS);
  if (from > to) throw badRequest('InvalidParameter', 'Query parameter from must not be after to.');
  const oldest = utcDay(now.getTime() - (USAGE_RETENTION_DAYS - 1) * DAY_MS);
  if (from < oldest) throw badRequest('InvalidParameter', `Usage is kept ${USAGE_RETENTION_DAYS} days: from must be ${oldest} or later.`);
  const days: string[] = [];
  for (let ms = Date.parse(`${from}T00:00:00Z`); ms <= Date.parse(`${to}T00:00:00Z`); ms += DAY_MS) {
    days.push(utcDay(ms));
    if (days.length > MAX_USAGE_DAYS) throw badRequest('InvalidParameter', `The range may span at most ${MAX_USAGE_DAYS} days.`);
  }
  return { from, to, days };
}

/**
 * The instance and every instance below it (`instanceTree`). Bounded: more than
 * {@link MAX_USAGE_INSTANCES} answers 400 QueryTooBroad.
 */
async function instanceSubtree(ctx: Pick<Ctx, 'db'>, instanceKey: string): Promise<string[]> {
  const { keys, truncated } = await instanceTree(ctx.db, instanceKey, MAX_USAGE_INSTANCES);
  if (truncated) throw tooBroad(`spans more than ${MAX_USAGE_INSTANCES} instances`);
  return keys;
}

const REQUEST_PREFIX = 'Req_';

/** The answer's day: the counters of every instance of the subtree summed. */
function renderDay(ns: string, day: string, perInstance: ReadonlyArray<ReadonlyMap<string, DayCounts>>): Record<string, unknown> {
  const requests: Record<string, number> = {};
  let events = 0;
  let audit = 0;
  let created = 0;
  let deleted = 0;
  for (const days of perInstance) {
    const c = days.get(day);
    if (!c) continue;
    for (const [name, n] of Object.entries(c)) {
      if (name.startsWith(REQUEST_PREFIX)) {
        const family = name.slice(REQUEST_PREFIX.length);
        requests[family] = (requests[family] ?? 0) + n;
      }
    }
    events += c.EventsPublished ?? 0;
    audit += c.AuditEvents ?? 0;
    created += c.ObjectsCreated ?? 0;
    deleted += c.ObjectsDeleted ?? 0;
  }
  const sorted = Object.fromEntries(Object.entries(requests).sort(([a], [b]) => a.localeCompare(b)));
  return {
    $type: typeTag(ns, 'UsageDay'),
    Day: day,
    Requests: sorted,
    TotalRequests: Object.values(requests).reduce((a, b) => a + b, 0),
    EventsPublished: events,
    AuditEvents: audit,
    ObjectsCreated: created,
    ObjectsDeleted: deleted,
  };
}

const usage: Operation<CoreDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const instance: StoredObject = await loadFolder(ctx, req.params.folderKey!);
  if (instance.collection !== 'instances') throw new ApiError(404, 'NotFound', 'Usage belongs to an instance, not a folder.');
  requireRole(ctx, 'Administrator', 'read usage');
  const range = usageRange(req, ctx.now);
  // The instance's read was the call's first: the walk below it waits for the caller's verdict.
  await verdictIn(ctx);
  const instances = await instanceSubtree(ctx, instance.key);
  const [perInstance, stored] = await Promise.all([
    Promise.all(instances.map((k) => usageDays(ctx.db, k, range.from, range.to))),
    storedObjects(ctx.db, instances),
  ]);
  return ok({
    $type: typeTag(ctx.ns, 'UsageInfo'),
    InstanceKey: instance.key,
    From: range.from,
    To: range.to,
    InstanceKeys: instances,
    StoredObjects: [...stored.values()].reduce((a, b) => a + b, 0),
    Days: range.days.map((d) => renderDay(ctx.ns, d, perInstance)),
  });
};

export const usageOperations = { usage };
