/**
 * The aggregation engine: mingo with the operators aggregations may use, each one wrapped so that
 * no pipeline can build more than {@link WORK_LIMITS} allow. It runs in the aggregation worker
 * (aggregate-worker.ts); the main thread imports it only for the names of the operators it checks
 * pipelines against, and for {@link toEngine}.
 *
 * Every expression operator's and accumulator's result is measured against the caps on one value
 * (array length, string length, size, depth), with a walk that stops at the first cap it crosses:
 * a value built of shared references (`["$x", "$x"]` repeated) is measured as what it would
 * serialize to, never walked in full. Every stage counts the documents it emits, and a stage that
 * computes its documents (`$project`, `$set`, `$group`...) measures each one. The worker's heap
 * limit and the request's deadline bound whatever the caps do not foresee.
 */
import { Aggregator } from 'mingo/aggregator';
import { Context, evalExpr, ProcessingMode } from 'mingo/core';
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
import { ApiError } from '../errors.ts';
import { narrowInteger, stringifyJson } from '../json.ts';
import { QUERY_OPERATORS } from '../query/matcher.ts';
import { invalidQuery, type QueryDoc } from '../query/shape.ts';
import { decodeEventData } from './event-data.ts';

/**
 * What no aggregation may exceed. A value's size counts what it would take as JSON, about: two
 * bytes a character of text, eight a number. The value cap is MongoDB's own cap on a document.
 */
export const WORK_LIMITS = Object.freeze({
  /** Elements of any array an operator or accumulator answers. */
  maxArrayLength: 100_000,
  /** Characters of any text an operator answers. */
  maxStringLength: 1_000_000,
  /** Size of any value, and of any document a stage computes. */
  maxValueBytes: 16 * 1024 * 1024,
  /** Nesting of any value (arrays and documents within each other). */
  maxValueDepth: 100,
  /** Documents any one stage emits (an `$unwind` of big arrays, a `$group` of many keys). */
  maxStageDocuments: 1_000_000,
});

/** Largest answer (JSON bytes): a Lambda response holds at most 6 MB. */
export const MAX_RESULT_BYTES = 5 * 1024 * 1024;

/** A limit crossed: 400 QueryTooExpensive, naming it. */
export const tooExpensive = (what: string): ApiError => new ApiError(400, 'QueryTooExpensive', `The aggregation is too expensive: ${what}.`);

export const STAGES: ReadonlySet<string> = new Set([
  '$match', '$sort', '$project', '$skip', '$limit', '$group', '$count', '$unwind', '$addFields', '$set', '$sortByCount', '$bucket',
]);

/** Stages whose documents are computed by expressions or accumulators: each emitted document is measured. */
const COMPUTING: ReadonlySet<string> = new Set(['$project', '$addFields', '$set', '$group', '$bucket', '$sortByCount']);

/** Expression operators left out of the groups registered below, and why. */
export const LEFT_OUT: Readonly<Record<string, string>> = {
  $regexMatch: 'it runs a backtracking regular expression; use $regex in $match',
  $regexFind: 'it runs a backtracking regular expression; use $regex in $match',
  $regexFindAll: 'it runs a backtracking regular expression; use $regex in $match',
};

// ---------------------------------------------------------------------------------------------
// Measuring

/**
 * Throws QueryTooExpensive when `v` crosses a cap of {@link WORK_LIMITS}; answers `v`. Stops at
 * the first cap crossed, so its cost is bounded by the caps, not by `v`.
 */
export function checkValue<T>(v: T): T {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'string' && v.length > WORK_LIMITS.maxStringLength) throw tooExpensive(`a text would be longer than ${WORK_LIMITS.maxStringLength} characters`);
    return v;
  }
  const budget = { left: WORK_LIMITS.maxValueBytes };
  measure(v, 0, budget);
  return v;
}

function spend(budget: { left: number }, n: number): void {
  budget.left -= n;
  if (budget.left < 0) throw tooExpensive(`a value or document would be larger than ${WORK_LIMITS.maxValueBytes} bytes`);
}

function measure(v: unknown, depth: number, budget: { left: number }): void {
  if (typeof v === 'string') {
    if (v.length > WORK_LIMITS.maxStringLength) throw tooExpensive(`a text would be longer than ${WORK_LIMITS.maxStringLength} characters`);
    return spend(budget, 2 + 2 * v.length);
  }
  if (v === null || typeof v !== 'object' || v instanceof Date) return spend(budget, 8);
  if (depth >= WORK_LIMITS.maxValueDepth) throw tooExpensive(`a value would be nested deeper than ${WORK_LIMITS.maxValueDepth} levels`);
  if (Array.isArray(v)) {
    if (v.length > WORK_LIMITS.maxArrayLength) throw tooExpensive(`an array would hold more than ${WORK_LIMITS.maxArrayLength} elements`);
    spend(budget, 2);
    for (const x of v) measure(x, depth + 1, budget);
    return;
  }
  spend(budget, 2);
  for (const k in v) {
    spend(budget, 2 * k.length);
    measure((v as Record<string, unknown>)[k], depth + 1, budget);
  }
}

// ---------------------------------------------------------------------------------------------
// The operators, wrapped

type Op = (a: unknown, expr: unknown, options: unknown) => unknown;
type StageOp = (coll: { map(f: (o: unknown) => unknown): unknown }, expr: unknown, options: unknown) => { map(f: (o: unknown) => unknown): unknown };

const capped = (op: Op): Op => (a, expr, options) => checkValue(op(a, expr, options));

/** `$range` answers its length's worth of numbers: refused before they are built. */
const $range: Op = (obj, expr, options) => {
  if (Array.isArray(expr) && expr.length > 1 && expr.length < 4) {
    const [start, end, step = 1] = evalExpr(obj as never, expr, options as never) as unknown[];
    if (typeof start === 'number' && typeof end === 'number' && typeof step === 'number' && step !== 0 && (end - start) / step > WORK_LIMITS.maxArrayLength) {
      throw tooExpensive(`an array would hold more than ${WORK_LIMITS.maxArrayLength} elements`);
    }
  }
  return (array.$range as Op)(obj, expr, options);
};

const ACCUMULATORS = { $sum, $avg, $min, $max, $first, $last, $push, $addToSet, $count: $countAcc };

const EXPRESSIONS: Record<string, Op> = Object.fromEntries(
  Object.entries({ ...arithmetic, ...array, ...boolean, ...comparison, ...conditional, ...date, ...object, ...set, ...string, ...type, ...variable, $literal }).filter(
    ([name]) => name.startsWith('$') && !(name in LEFT_OUT),
  ),
) as Record<string, Op>;
EXPRESSIONS.$range = $range;

const PIPELINE: Record<string, StageOp> = { $match, $sort, $project, $skip, $limit, $group, $count, $unwind, $addFields, $set, $sortByCount, $bucket } as never;

const countedStage =
  (name: string, op: StageOp): StageOp =>
  (coll, expr, options) => {
    let emitted = 0;
    const measures = COMPUTING.has(name);
    return op(coll, expr, options).map((doc) => {
      if (++emitted > WORK_LIMITS.maxStageDocuments) throw tooExpensive(`the stage ${name} would emit more than ${WORK_LIMITS.maxStageDocuments} documents`);
      return measures ? checkValue(doc) : doc;
    }) as never;
  };

const mapValues = <T, U>(o: Record<string, T>, f: (v: T, k: string) => U): Record<string, U> => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v, k)]));

/** Every `$` name a stage's body may hold besides the query operators (the engine refuses one used in the wrong place). */
export const ENGINE_OPERATORS: ReadonlySet<string> = new Set([...Object.keys(ACCUMULATORS), ...Object.keys(EXPRESSIONS)]);

const CONTEXT = Context.init({
  pipeline: mapValues(PIPELINE, (op, name) => countedStage(name, op)) as never,
  accumulator: mapValues(ACCUMULATORS as unknown as Record<string, Op>, capped) as never,
  expression: mapValues(EXPRESSIONS, capped) as never,
  query: QUERY_OPERATORS,
});

// ---------------------------------------------------------------------------------------------
// Big integers: marked text inside the engine, digits outside.

/** A private-use character no event text starts with. */
const BIG = '\uE000';
export const bigText = (v: bigint): string => `${BIG}${v}`;
const BIG_TEXT = /^\uE000-?\d+$/;

/** The engine's text for a 64-bit integer: a number when it is exactly one, else marked text. */
export const engineInteger = (v: bigint): unknown => {
  const n = narrowInteger(v);
  return typeof n === 'bigint' ? bigText(n) : n;
};

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
export const toEngine = (doc: unknown): unknown =>
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

/** An event's `EventData` as the engine reads it: its decoded BSON, or null when it holds none. */
export function engineEventData(b64: unknown): unknown {
  try {
    return toEngine(decodeEventData(b64));
  } catch {
    // Checked when the event was published; an event stored otherwise shows no data.
    return null;
  }
}

/**
 * Results as the API returns them: marked big integers as integers again, BSON values of event
 * data (object ids...) as their JSON, as the events list writes them: the result crosses to the
 * main thread as a structured clone, which keeps no class but Date (dates serialize as ISO).
 */
const fromEngine = (result: unknown): unknown =>
  mapLeaves(result, (v) => {
    if (typeof v === 'string' && BIG_TEXT.test(v)) return BigInt(v.slice(1));
    if (v !== null && typeof v === 'object' && !(v instanceof Date) && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      return JSON.parse(stringifyJson(v)) as unknown;
    }
    return v;
  });

// ---------------------------------------------------------------------------------------------
// Running

/**
 * Runs `stages` over `docs` (in the events list's order) and answers the result as the API
 * returns it; ApiError for a pipeline the engine refuses (400 InvalidQuery), a limit crossed (400
 * QueryTooExpensive) or an answer too large (400 QueryTooBroad).
 */
export function runPipeline(stages: readonly QueryDoc[], docs: unknown[]): unknown[] {
  let results: unknown[];
  try {
    // Documents are built per request and never shared: no cloning.
    const aggregator = new Aggregator([...stages], { context: CONTEXT, scriptEnabled: false, processingMode: ProcessingMode.CLONE_OFF } as never);
    results = stages.length === 0 ? docs : aggregator.run(docs as never[]);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (err instanceof RangeError && /call stack/i.test(err.message)) throw tooExpensive(`it would nest calls deeper than the engine's stack allows`);
    // The engine checks a stage's arguments as it runs it ($bucket boundaries, $count's name...).
    throw invalidQuery(`The pipeline is not valid: ${(err as Error).message}`);
  }
  // Measured before it is copied: a result built of shared references is refused, not walked.
  const budget = { left: WORK_LIMITS.maxValueBytes };
  for (const r of results) measure(r, 0, budget);
  const out = results.map(fromEngine);
  if (Buffer.byteLength(stringifyJson(out)) > MAX_RESULT_BYTES) {
    throw new ApiError(400, 'QueryTooBroad', `The aggregation's result is larger than ${MAX_RESULT_BYTES} bytes: add $project, $group or $limit.`);
  }
  return out;
}
