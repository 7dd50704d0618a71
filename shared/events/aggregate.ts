/**
 * Aggregation over the events of a folder (`POST /api/f/<folder_key>/aggregate/Events`): a
 * document-database style pipeline run by mingo over the events as the API returns them, plus
 * `EventData` (the decoded BSON of `EventDataBsonBase64`).
 *
 * Reads, never a Scan: each folder of the listing (`foldersOf`, with the events list's
 * `includeSubFolders` and `spanScope`) is its event timeline on GSI1, read with the `OccurredOn`
 * range of the leading `$match` stages in the key condition; without a lower bound the window is
 * the last {@link DEFAULT_WINDOW_DAYS} days. `EventTypeKey`, `AppKey` and `Priority` have no index
 * within a folder's timeline: they are filtered in memory after the read, like everything else.
 * Each event is rendered with only the fields the pipeline reads ({@link fieldsRead}), the leading
 * `$match` stages filter each page as it arrives (only matches are kept), the rest of the pipeline
 * runs once every timeline is read.
 *
 * Refused with 400 InvalidQuery, wherever they appear in the pipeline: stages other than
 * {@link STAGES}, accumulators other than {@link ACCUMULATORS}, operators that run code
 * (`$function`, `$accumulator`, `$where`), `$expr` (refused in searches too) and regular expressions outside `$match`
 * (`$regexMatch`...: JavaScript's engine backtracks; `$regex` in `$match` runs on RE2, as in
 * searches). `$range` and `$reduce` are left out too: one document could make them build
 * unbounded arrays.
 *
 * Numbers: 64-bit integers beyond 2^53 (card numbers in event data) enter the engine as marked
 * text, so equality and grouping are exact, and leave it as the same digits.
 */
import { Aggregator } from 'mingo/aggregator';
import { Context, ProcessingMode } from 'mingo/core';
import { $addToSet, $avg, $count as $countAcc, $first, $last, $max, $min, $push, $sum } from 'mingo/operators/accumulator';
import * as arithmetic from 'mingo/operators/expression/arithmetic';
import * as array from 'mingo/operators/expression/array';
import * as boolean from 'mingo/operators/expression/boolean';
import * as comparison from 'mingo/operators/expression/comparison';
import * as conditional from 'mingo/operators/expression/conditional';
import * as date from 'mingo/operators/expression/date';
import * as object from 'mingo/operators/expression/object';
import * as set from 'mingo/operators/expression/set';
import * as string from 'mingo/operators/expression/string';
import * as type from 'mingo/operators/expression/type';
import * as variable from 'mingo/operators/expression/variable';
import { $literal } from 'mingo/operators/expression';
import { $addFields, $bucket, $count, $group, $limit, $match, $project, $set, $skip, $sort, $sortByCount, $unwind } from 'mingo/operators/pipeline';
import type { queryFolderEvents, SortRange } from '../db/event-reads.ts';
import type { StoredObject } from '../db/objects-repo.ts';
import { ApiError, badRequest } from '../errors.ts';
import { boolParam } from '../http/params.ts';
import type { ApiRequest } from '../http/types.ts';
import { narrowInteger, stringifyJson } from '../json.ts';
import type { requireFolderInScope } from '../objects/access.ts';
import type { Ctx } from '../objects/context.ts';
import { checkRegex, compileQuery, QUERY_OPERATORS } from '../search/matcher.ts';
export { loadRegexEngine } from '../search/matcher.ts';
import { ALLOWED_OPERATORS, MAX_QUERY_DEPTH, asDate, conjuncts, invalidQuery, parseQueryBody, type Matcher, type QueryDoc } from '../search/query.ts';
import type { foldersOf } from './list.ts';
import { canonicalQuery } from './list-query.ts';
import { decodeEventData } from './event-data.ts';
import { renderEvent, renderEventFields } from './render.ts';

/** Without a lower bound on `OccurredOn`, the window is this many days back from now. */
export const DEFAULT_WINDOW_DAYS = 30;
/**
 * `queryTimeout` when absent, and its upper bound (seconds): inside the events function's
 * timeout (infra/sizing.ts) and API Gateway's 30 s, with room to run the pipeline and answer.
 */
export const MAX_QUERY_TIMEOUT_SECONDS = 25;
export const MAX_STAGES = 50;
/** Largest answer (JSON bytes): a Lambda response holds at most 6 MB. */
export const MAX_RESULT_BYTES = 5 * 1024 * 1024;
/**
 * Whole events (about 3.7 KB each in memory) a pipeline that answers them may hold before its
 * later stages run: twice that would not fit the function's 512 MB. A grouping or an inclusion
 * `$project` holds only the fields it names (see {@link fieldsRead}) and has no such limit.
 */
export const MAX_WHOLE_EVENTS = 50_000;
/** Timeline pages read at once (one per folder). */
const CONCURRENCY = 4;
const PAGE_ITEMS = 1000;

export const STAGES: ReadonlySet<string> = new Set([
  '$match', '$sort', '$project', '$skip', '$limit', '$group', '$count', '$unwind', '$addFields', '$set', '$sortByCount', '$bucket',
]);

const ACCUMULATORS = { $sum, $avg, $min, $max, $first, $last, $push, $addToSet, $count: $countAcc };

/** Expression operators left out of the groups registered below, and why. */
const LEFT_OUT: Readonly<Record<string, string>> = {
  $regexMatch: 'it runs a backtracking regular expression; use $regex in $match',
  $regexFind: 'it runs a backtracking regular expression; use $regex in $match',
  $regexFindAll: 'it runs a backtracking regular expression; use $regex in $match',
  $range: 'it can build unbounded arrays',
  $reduce: 'it can build unbounded arrays',
};

/** Operators refused with the reason in the message. */
const RUNS_CODE = new Set(['$function', '$accumulator', '$where']);
const WRITES_OR_JOINS = new Set(['$out', '$merge', '$lookup', '$unionWith', '$graphLookup']);

const EXPRESSIONS: Record<string, unknown> = Object.fromEntries(
  Object.entries({ ...arithmetic, ...array, ...boolean, ...comparison, ...conditional, ...date, ...object, ...set, ...string, ...type, ...variable, $literal }).filter(
    ([name]) => name.startsWith('$') && !(name in LEFT_OUT),
  ),
);

const CONTEXT = Context.init({
  pipeline: { $match, $sort, $project, $skip, $limit, $group, $count, $unwind, $addFields, $set, $sortByCount, $bucket } as never,
  accumulator: ACCUMULATORS as never,
  expression: EXPRESSIONS as never,
  query: QUERY_OPERATORS,
});

/** Every `$` key a stage's body may hold (the engine refuses one used in the wrong place). */
const INNER_OPERATORS: ReadonlySet<string> = new Set([...ALLOWED_OPERATORS, ...Object.keys(ACCUMULATORS), ...Object.keys(EXPRESSIONS)]);

export interface AggregateQuery {
  readonly pipeline: readonly QueryDoc[];
  readonly includeSubFolders: boolean;
  readonly spanScope: boolean;
  readonly timeoutMs: number;
}

// ---------------------------------------------------------------------------------------------
// Big integers: marked text inside the engine, digits outside.

/** A private-use character no event text starts with. */
const BIG = '\uE000';
const bigText = (v: bigint): string => `${BIG}${v}`;
const BIG_TEXT = /^\uE000-?\d+$/;

/** `v` with `leaf` applied to every value that is not an array or a plain object (BSON values, dates and scalars). */
function mapLeaves(v: unknown, leaf: (x: unknown) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => mapLeaves(x, leaf));
  if (v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = mapLeaves(x, leaf);
    return out;
  }
  return leaf(v);
}

/** Documents as the engine reads them: dates that round-trip as dates, big integers marked. */
const toEngine = (doc: unknown): unknown =>
  mapLeaves(doc, (v) => {
    if (typeof v === 'bigint') return bigText(v);
    // Only text written exactly as `toISOString()` (how events store dates) becomes a date, so
    // every such field leaves the engine as the same text.
    if (typeof v === 'string' && v.length === 24 && v[10] === 'T' && v.endsWith('Z')) {
      const d = new Date(v);
      if (!Number.isNaN(d.getTime()) && d.toISOString() === v) return d;
    }
    return v;
  });

/** Results as the API returns them: marked big integers as integers again (dates serialize as ISO). */
const fromEngine = (result: unknown): unknown => mapLeaves(result, (v) => (typeof v === 'string' && BIG_TEXT.test(v) ? BigInt(v.slice(1)) : v));

// ---------------------------------------------------------------------------------------------
// Parsing and checking

const notAllowed = (op: string, kind = 'operator'): ApiError =>
  invalidQuery(
    RUNS_CODE.has(op)
      ? `The operator ${op} is not allowed: it runs code.`
      : WRITES_OR_JOINS.has(op)
        ? `The stage ${op} is not allowed: aggregations only read the folder's events.`
        : LEFT_OUT[op]
          ? `The operator ${op} is not allowed: ${LEFT_OUT[op]}.`
          : `The ${kind} ${op} is not allowed.`,
  );

/** `{"$date": ...}` as a Date; `{"$numberLong": "..."}` as an integer; else undefined. */
function extendedJson(obj: QueryDoc): unknown {
  const keys = Object.keys(obj);
  if (keys.length !== 1) return undefined;
  if (keys[0] === '$date') {
    const raw = obj.$date;
    const d = typeof raw === 'string' || typeof raw === 'number' ? new Date(raw) : new Date(NaN);
    if (Number.isNaN(d.getTime())) throw invalidQuery('$date needs an ISO 8601 date or epoch milliseconds.');
    return d;
  }
  if (keys[0] === '$numberLong') {
    if (typeof obj.$numberLong !== 'string' || !/^-?\d{1,19}$/.test(obj.$numberLong)) throw invalidQuery('$numberLong needs the digits of an integer.');
    const n = narrowInteger(BigInt(obj.$numberLong));
    return typeof n === 'bigint' ? bigText(n) : n;
  }
  return undefined;
}

/**
 * Checks one stage's body against the allow-lists, however deep, and rewrites it for the engine:
 * `{"$date": ...}` as dates everywhere, ISO strings as dates inside `$match` (as in searches), big
 * integers marked (see {@link toEngine}).
 */
function normalizeStageBody(v: unknown, depth: number, inMatch: boolean): unknown {
  if (depth > MAX_QUERY_DEPTH) throw invalidQuery(`A stage is nested deeper than ${MAX_QUERY_DEPTH} levels.`);
  if (typeof v === 'bigint') return bigText(v);
  if (Array.isArray(v)) return v.map((x) => normalizeStageBody(x, depth + 1, inMatch));
  if (v === null || typeof v !== 'object') return inMatch ? asDate(v) : v;
  const obj = v as QueryDoc;
  const ext = extendedJson(obj);
  if (ext !== undefined) return ext;
  const out: QueryDoc = {};
  for (const [k, x] of Object.entries(obj)) {
    if (k.startsWith('$')) {
      if (!INNER_OPERATORS.has(k)) throw notAllowed(k);
      if (k === '$regex') checkRegex(obj.$regex, obj.$options);
      if (k === '$options' && !('$regex' in obj)) throw invalidQuery('$options needs $regex beside it.');
    }
    out[k] = normalizeStageBody(x, depth + 1, inMatch);
  }
  return out;
}

function normalizeStage(raw: QueryDoc, n: number): QueryDoc {
  const keys = Object.keys(raw);
  if (keys.length !== 1) throw invalidQuery(`Stage ${n} must hold exactly one stage operator ({"$match": ...}).`);
  const name = keys[0]!;
  if (!STAGES.has(name)) throw notAllowed(name, 'stage');
  return { [name]: normalizeStageBody(raw[name], 1, name === '$match') };
}

/** The pipeline of a body: a JSON array whose elements are stages or JSON strings holding one. */
export function parsePipeline(body: unknown): QueryDoc[] {
  if (!Array.isArray(body)) throw invalidQuery('The body must be a JSON array of pipeline stages.');
  if (body.length > MAX_STAGES) throw invalidQuery(`A pipeline has at most ${MAX_STAGES} stages.`);
  return body.map((element, i) => {
    if (typeof element !== 'string' && (element === null || typeof element !== 'object' || Array.isArray(element))) {
      throw invalidQuery(`Stage ${i + 1} must be a stage document or a JSON string holding one.`);
    }
    return normalizeStage(parseQueryBody(element), i + 1);
  });
}

function queryTimeoutMs(req: ApiRequest): number {
  const entry = Object.entries(req.query).find(([k]) => k.toLowerCase() === 'querytimeout');
  const raw = entry?.[1][0]?.trim();
  if (raw === undefined || raw === '') return MAX_QUERY_TIMEOUT_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) throw badRequest('InvalidParameter', 'Query parameter queryTimeout must be a positive number of seconds.');
  return Math.min(seconds, MAX_QUERY_TIMEOUT_SECONDS) * 1000;
}

export function parseAggregateQuery(req: ApiRequest): AggregateQuery {
  const q = canonicalQuery(req);
  return {
    pipeline: parsePipeline(req.body),
    includeSubFolders: boolParam(q, 'includeSubFolders'),
    spanScope: boolParam(q, 'spanScope'),
    timeoutMs: queryTimeoutMs(req),
  };
}

// ---------------------------------------------------------------------------------------------
// Planning: the key condition of the leading $match stages

/** The leading `$match` stages (they filter each page as it is read) and the stages after them. */
function split(pipeline: readonly QueryDoc[]): { leading: QueryDoc[]; rest: QueryDoc[] } {
  let i = 0;
  while (i < pipeline.length && '$match' in pipeline[i]!) i++;
  return { leading: pipeline.slice(0, i).map((s) => s.$match as QueryDoc), rest: pipeline.slice(i) };
}

/**
 * The `OccurredOn` instants the leading matches allow: `from` included, `to` excluded, either
 * missing when unbounded. A bound the timeline cannot use (not a date) is left to the filter.
 */
export function occurredRange(leading: readonly QueryDoc[]): { from?: Date; to?: Date } {
  let from: number | undefined;
  let to: number | undefined;
  const lower = (t: number) => (from = from === undefined ? t : Math.max(from, t));
  const upper = (t: number) => (to = to === undefined ? t : Math.min(to, t));
  for (const m of leading) {
    for (const [k, v] of conjuncts(m)) {
      if (k !== 'OccurredOn') continue;
      if (v instanceof Date) {
        lower(v.getTime());
        upper(v.getTime() + 1);
        continue;
      }
      if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
      for (const [op, x] of Object.entries(v as QueryDoc)) {
        if (!(x instanceof Date)) continue;
        // Stored instants have millisecond precision: `> t` is `>= t + 1 ms`, `<= t` is `< t + 1 ms`.
        const t = x.getTime();
        if (op === '$gte') lower(t);
        else if (op === '$gt') lower(t + 1);
        else if (op === '$lt') upper(t);
        else if (op === '$lte') upper(t + 1);
        else if (op === '$eq') {
          lower(t);
          upper(t + 1);
        }
      }
    }
  }
  return { ...(from !== undefined ? { from: new Date(from) } : {}), ...(to !== undefined ? { to: new Date(to) } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Running

const tooBroad = (cap: number) =>
  new ApiError(400, 'QueryTooBroad', `The aggregation would read more than ${cap} events: narrow the OccurredOn range of its first $match.`);
const timedOut = (ms: number) =>
  new ApiError(503, 'QueryTimeout', `The aggregation did not finish reading within queryTimeout (${ms / 1000} s): narrow its OccurredOn range.`);

/** Stages after which no field of the events is read again: their output replaces the documents (an inclusion `$project` too). */
const REPLACING = new Set(['$group', '$count', '$sortByCount', '$bucket']);

/**
 * The top-level event fields a pipeline can read, or undefined for all of them: what it names (as
 * a key, or a `$path` value) up to its first stage that replaces the documents. A pipeline without
 * one, or naming `$$ROOT`/`$$CURRENT`, answers whole events. A superset is harmless (a field is
 * kept for nothing); the point is that a grouping over 100 000 events holds a few fields of each,
 * not 100 000 whole events.
 */
export function fieldsRead(pipeline: readonly QueryDoc[]): ReadonlySet<string> | undefined {
  const fields = new Set<string>();
  let all = false;
  const first = (path: string) => fields.add(path.split('.')[0]!);
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      if (/^\$\$(ROOT|CURRENT)(\.|$)/.test(v)) {
        const rest = v.replace(/^\$\$(ROOT|CURRENT)\.?/, '');
        if (rest) first(rest);
        else all = true;
      } else if (v.startsWith('$') && !v.startsWith('$$')) first(v.slice(1));
      return;
    }
    if (Array.isArray(v)) return v.forEach(walk);
    if (v === null || typeof v !== 'object' || v instanceof Date) return;
    for (const [k, x] of Object.entries(v)) {
      if (!k.startsWith('$')) first(k);
      walk(x);
    }
  };
  for (const stage of pipeline) {
    const [name, body] = Object.entries(stage)[0]!;
    walk(body);
    if (all) return undefined;
    if (REPLACING.has(name) || (name === '$project' && isInclusion(body))) return fields;
  }
  return undefined;
}

/** A `$project` that keeps only what it names (every value but `_id`'s is not 0/false). */
function isInclusion(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const values = Object.entries(body).filter(([k]) => k !== '_id').map(([, v]) => v);
  return values.length > 0 && values.every((v) => v !== 0 && v !== false);
}

/**
 * An event as the pipeline sees it: rendered as the API returns it, with `EventData` decoded; only
 * the fields `fields` when given.
 */
function documentOf(e: StoredObject, ns: string, fields: ReadonlySet<string> | undefined): Record<string, unknown> {
  const doc = fields ? renderEventFields(e, ns, fields) : renderEvent(e, ns);
  if (!fields || fields.has('EventData')) {
    let data: unknown = null;
    try {
      data = decodeEventData(e.doc.EventDataBsonBase64);
    } catch {
      // Checked when the event was published; an event stored otherwise shows no data.
    }
    doc.EventData = data;
  }
  return toEngine(doc) as Record<string, unknown>;
}

/**
 * The sort keys from `from` (an ISO instant) up to `end` (a timeline sort key, excluded) as `n`
 * consecutive ranges that together hold exactly the same events; one range when the span is
 * shorter than `n` milliseconds.
 */
export function splitWindow(from: string, end: string, n: number): SortRange[] {
  const t0 = new Date(from).getTime();
  const span = new Date(end.slice(0, 24)).getTime() - t0;
  if (n <= 1 || !(span >= n)) return [{ from, to: end }];
  const at = (i: number) => (i === 0 ? from : new Date(t0 + Math.floor((span * i) / n)).toISOString());
  return Array.from({ length: n }, (_, i) => ({ from: at(i), to: i < n - 1 ? at(i + 1) : end }));
}

export interface AggregateLimits {
  /** Events one aggregation may read (GATEHOUSE_AGGREGATE_MAX_EVENTS). */
  readonly maxEvents: number;
  /** The server clock, epoch milliseconds: `queryTimeout` is measured on it. */
  readonly clock: () => number;
}

/**
 * The reads an aggregation makes, passed in by the events operations: this module is loaded on the
 * first aggregation (`import()`), and esbuild cannot tree-shake what a dynamic import reaches, so
 * importing the repositories here put the whole DynamoDB client (every command, 56 KB) in the
 * events bundle. Nothing reached from here may import the AWS SDK.
 */
export interface AggregateReads {
  readonly requireFolderInScope: typeof requireFolderInScope;
  readonly foldersOf: typeof foldersOf;
  readonly queryFolderEvents: typeof queryFolderEvents;
}

/** Runs an aggregation over the events of `folderKey` (see the module's comment). */
export async function aggregateEvents(
  ctx: Ctx,
  folderKey: string,
  q: AggregateQuery,
  { maxEvents, clock }: AggregateLimits,
  { requireFolderInScope, foldersOf, queryFolderEvents }: AggregateReads,
): Promise<unknown[]> {
  const started = clock();
  await requireFolderInScope(ctx, folderKey);
  const { leading, rest } = split(q.pipeline);
  const matchers: Matcher[] = leading.map(compileQuery);
  const aggregator = compile(rest);
  const fields = fieldsRead(q.pipeline);

  const bounds = occurredRange(leading);
  const from = bounds.from ?? new Date(ctx.now.getTime() - DEFAULT_WINDOW_DAYS * 86_400_000);
  if (bounds.to && bounds.to <= from) return aggregator ? run(aggregator, []) : [];
  const range: SortRange = { from: from.toISOString(), ...(bounds.to ? { to: bounds.to.toISOString() } : {}) };
  const folders = await foldersOf(ctx, folderKey, q);
  // Fewer timelines than reads in flight: a timeline with more than a page in the window reads the
  // rest as consecutive slices at once.
  const slicesPerFolder = Math.ceil(CONCURRENCY / folders.length);
  const nowEpoch = Math.floor(ctx.now.getTime() / 1000);
  const kept: Array<{ sk: string; doc: Record<string, unknown> }> = [];
  let read = 0;
  const readRange = async (folder: string, range: SortRange, split: boolean): Promise<void> => {
    let start: Record<string, unknown> | undefined;
    do {
      if (clock() - started > q.timeoutMs) throw timedOut(q.timeoutMs);
      // One more than the cap allows tells "exactly the cap" from "more".
      const limit = Math.max(1, Math.min(PAGE_ITEMS, maxEvents + 1 - read));
      const page = await queryFolderEvents(ctx.db, folder, range, limit, start, nowEpoch);
      read += page.scanned;
      if (read > maxEvents) throw tooBroad(maxEvents);
      page.items.forEach((e, i) => {
        // The fields the pipeline reads include every field its leading matches name.
        const doc = documentOf(e, ctx.ns, fields);
        if (!matchers.every((m) => m.test(doc))) return;
        kept.push({ sk: page.sortKeys[i]!, doc });
        if (!fields && kept.length > MAX_WHOLE_EVENTS) {
          throw new ApiError(400, 'QueryTooBroad', `More than ${MAX_WHOLE_EVENTS} whole events pass the first $match: narrow it, or $group or $project what the answer needs first.`);
        }
      });
      start = page.next;
      const last = page.sortKeys.at(-1);
      if (split && start && last) {
        await Promise.all(splitWindow(range.from!, last, slicesPerFolder).map((r) => readRange(folder, r, false)));
        return;
      }
    } while (start);
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, folders.length) }, async () => {
      while (next < folders.length) await readRange(folders[next++]!, range, slicesPerFolder > 1);
    }),
  );
  // The events list's order (newest first, ties by key), whatever the folders' interleaving.
  kept.sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0));
  const docs = kept.map((k) => k.doc);
  const results = aggregator ? run(aggregator, docs) : docs;
  const out = results.map(fromEngine);
  if (Buffer.byteLength(stringifyJson(out)) > MAX_RESULT_BYTES) {
    throw new ApiError(400, 'QueryTooBroad', `The aggregation's result is larger than ${MAX_RESULT_BYTES} bytes: add $project, $group or $limit.`);
  }
  return out;
}

function compile(stages: readonly QueryDoc[]): Aggregator | undefined {
  if (stages.length === 0) return undefined;
  try {
    // Documents are built per request and never shared: no cloning.
    return new Aggregator([...stages], { context: CONTEXT, scriptEnabled: false, processingMode: ProcessingMode.CLONE_OFF } as never);
  } catch (err) {
    throw invalidQuery(`The pipeline is not valid: ${(err as Error).message}`);
  }
}

function run(aggregator: Aggregator, docs: Record<string, unknown>[]): unknown[] {
  try {
    return aggregator.run(docs);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // The engine checks a stage's arguments as it runs it ($bucket boundaries, $count's name...).
    throw invalidQuery(`The pipeline is not valid: ${(err as Error).message}`);
  }
}
