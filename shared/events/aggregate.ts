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
 * `$match` stages filter each page as it arrives (only matches are kept) and send it to a worker
 * thread, which runs the rest of the pipeline once every timeline is read (aggregate-pool.ts).
 *
 * Refused with 400 InvalidQuery, wherever they appear in the pipeline: stages other than
 * {@link STAGES}, accumulators other than those of aggregate-engine.ts, operators that run code
 * (`$function`, `$accumulator`, `$where`), `$expr` (refused in searches too) and regular expressions outside `$match`
 * (`$regexMatch`...: JavaScript's engine backtracks; `$regex` in `$match` runs on RE2, as in
 * searches). Refused with 400 QueryTooExpensive: a pipeline that crosses a limit on the values it
 * builds or the documents a stage emits (`WORK_LIMITS`), on the memory of its worker, or on
 * the time queryTimeout leaves it.
 *
 * Numbers: 64-bit integers beyond 2^53 (card numbers in event data) enter the engine as marked
 * text, so equality and grouping are exact, and leave it as the same digits.
 */
import type { queryFolderEvents, SortRange } from '../db/event-reads.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { ApiError, badRequest } from '../errors.ts';
import { boolParam } from '../http/params.ts';
import type { ApiRequest } from '../http/operation-contract.ts';
import type { requireFolderInScope } from '../objects/tenant-scope.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { checkRegex, compileQuery } from '../query/matcher.ts';
export { loadRegexEngine } from '../query/matcher.ts';
import { filterPaced, pacer } from '../query/pacer.ts';
import { ALLOWED_OPERATORS, MAX_QUERY_DEPTH, asDate, conjuncts, parseQueryBody } from '../query/query.ts';
import { invalidQuery, type Matcher, type QueryDoc } from '../query/shape.ts';
import { ENGINE_OPERATORS, LEFT_OUT, STAGES, bigText, engineEventData, engineInteger, toEngine } from './aggregate-engine.ts';
export { MAX_RESULT_BYTES, STAGES, WORK_LIMITS } from './aggregate-engine.ts';
import { startAggregation } from './aggregate-pool.ts';
import type { WorkerDoc } from './aggregate-worker.ts';
import type { foldersOf } from './list.ts';
import { canonicalQuery } from './list-query.ts';
import { renderEvent, renderEventFields } from './event-render.ts';

/** Without a lower bound on `OccurredOn`, the window is this many days back from now. */
export const DEFAULT_WINDOW_DAYS = 30;
/**
 * `queryTimeout` when absent, and its upper bound (seconds): inside the events function's
 * timeout (infra/sizing.ts) and API Gateway's 30 s, with room to run the pipeline and answer.
 */
export const MAX_QUERY_TIMEOUT_SECONDS = 25;
export const MAX_STAGES = 50;
/**
 * Whole events a pipeline that answers them may hold before its later stages run: sized so that
 * twice that would not fit the function's 512 MB. A grouping or an inclusion
 * `$project` holds only the fields it names (see {@link fieldsRead}) and has no such limit.
 */
export const MAX_WHOLE_EVENTS = 50_000;
/** Timeline pages read at once (one per folder). */
const CONCURRENCY = 4;
const PAGE_ITEMS = 1000;

/** Operators refused with the reason in the message. */
const RUNS_CODE = new Set(['$function', '$accumulator', '$where']);
const WRITES_OR_JOINS = new Set(['$out', '$merge', '$lookup', '$unionWith', '$graphLookup']);

/** Every `$` key a stage's body may hold (the engine refuses one used in the wrong place). */
const INNER_OPERATORS: ReadonlySet<string> = new Set([...ALLOWED_OPERATORS, ...ENGINE_OPERATORS]);

export interface AggregateQuery {
  readonly pipeline: readonly QueryDoc[];
  readonly includeSubFolders: boolean;
  readonly spanScope: boolean;
  readonly timeoutMs: number;
}

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
    return engineInteger(BigInt(obj.$numberLong));
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
 * An event as the pipeline's input: rendered as the API returns it (only the fields `fields` when
 * given), with its raw `EventData` beside it when the pipeline reads it (the worker decodes it).
 */
function inputOf(e: StoredObject, sk: string, ns: string, fields: ReadonlySet<string> | undefined): WorkerDoc {
  const doc = toEngine(fields ? renderEventFields(e, ns, fields) : renderEvent(e, ns)) as Record<string, unknown>;
  return !fields || fields.has('EventData') ? { sk, doc, data: e.doc.EventDataBsonBase64 } : { sk, doc };
}

/** Whether the leading matches keep `input`; its `EventData` decoded only for them to read. */
function matches(matchers: readonly Matcher[], input: WorkerDoc): boolean {
  if (matchers.length === 0) return true;
  const doc = input.data === undefined ? input.doc : { ...input.doc, EventData: engineEventData(input.data) };
  return matchers.every((m) => m.test(doc));
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
 * importing the repositories here put the whole DynamoDB client (every command) in the events
 * bundle. Nothing reached from here may import the AWS SDK.
 */
export interface AggregateReads {
  readonly requireFolderInScope: typeof requireFolderInScope;
  readonly foldersOf: typeof foldersOf;
  readonly queryFolderEvents: typeof queryFolderEvents;
}

/**
 * Runs an aggregation over the events of `folderKey` (see the module's comment). The stages after
 * the leading matches run in a worker thread (aggregate-pool.ts), which receives each page's
 * matches as they are read and is ended when the request's queryTimeout runs out.
 */
export async function aggregateEvents(
  ctx: Ctx,
  folderKey: string,
  q: AggregateQuery,
  { maxEvents, clock }: AggregateLimits,
  { requireFolderInScope, foldersOf, queryFolderEvents }: AggregateReads,
): Promise<unknown[]> {
  const started = clock();
  const left = () => q.timeoutMs - (clock() - started);
  await requireFolderInScope(ctx, folderKey);
  const { leading, rest } = split(q.pipeline);
  const matchers: Matcher[] = leading.map(compileQuery);
  const fields = fieldsRead(q.pipeline);

  const bounds = occurredRange(leading);
  const from = bounds.from ?? new Date(ctx.now.getTime() - DEFAULT_WINDOW_DAYS * 86_400_000);
  // The leading matches run here, between reads: at the pace that lets other requests run.
  const pace = pacer('aggregation', q.timeoutMs);
  const job = await startAggregation(rest, left());
  try {
    if (!(bounds.to && bounds.to <= from)) await readInto(job.push, from);
  } catch (err) {
    job.abort();
    throw err;
  }
  return job.finish(left(), q.timeoutMs);

  async function readInto(push: (docs: WorkerDoc[]) => void, from: Date): Promise<void> {
    const range: SortRange = { from: from.toISOString(), ...(bounds.to ? { to: bounds.to.toISOString() } : {}) };
    const folders = await foldersOf(ctx, folderKey, q);
    // Fewer timelines than reads in flight: a timeline with more than a page in the window reads the
    // rest as consecutive slices at once.
    const slicesPerFolder = Math.ceil(CONCURRENCY / folders.length);
    const nowEpoch = Math.floor(ctx.now.getTime() / 1000);
    let read = 0;
    let kept = 0;
    const readRange = async (folder: string, range: SortRange, split: boolean): Promise<void> => {
      let start: Record<string, unknown> | undefined;
      do {
        if (left() < 0) throw timedOut(q.timeoutMs);
        // One more than the cap allows tells "exactly the cap" from "more".
        const limit = Math.max(1, Math.min(PAGE_ITEMS, maxEvents + 1 - read));
        const page = await queryFolderEvents(ctx.db, folder, range, limit, start, nowEpoch);
        read += page.scanned;
        if (read > maxEvents) throw tooBroad(maxEvents);
        // The fields the pipeline reads include every field its leading matches name.
        const all = page.items.map((e, i) => inputOf(e, page.sortKeys[i]!, ctx.ns, fields));
        const inputs = matchers.length === 0 ? all : await filterPaced(all, (d) => matches(matchers, d), pace);
        kept += inputs.length;
        if (!fields && kept > MAX_WHOLE_EVENTS) {
          throw new ApiError(400, 'QueryTooBroad', `More than ${MAX_WHOLE_EVENTS} whole events pass the first $match: narrow it, or $group or $project what the answer needs first.`);
        }
        if (inputs.length > 0) push(inputs);
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
  }
}
