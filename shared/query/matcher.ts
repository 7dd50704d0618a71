/**
 * The query engine: compiling a checked query (`normalizeQuery` of `query.ts`) into a matcher
 * (mingo, with RE2's linear-time regular expressions for `$regex`, whose syntax is checked here).
 * Loaded on demand through `loadMatcher()` of `query.ts`, which keeps the parsing and planning
 * that need none of it; aggregation (itself loaded on demand) imports it directly. RE2 (re2js,
 * three quarters of the engine's bytes) loads only for a query that holds a `$regex`: callers
 * await {@link regexFor} (or {@link loadRegexEngine}) before they check or compile one.
 */
import { Context } from 'mingo/core';
import { Query } from 'mingo/query';
import { $all, $elemMatch, $size } from 'mingo/operators/query/array';
import { $eq, $gt, $gte, $in, $lt, $lte, $ne, $nin } from 'mingo/operators/query/comparison';
import { $exists } from 'mingo/operators/query/element';
import { $and, $nor, $not, $or } from 'mingo/operators/query/logical';
import { resolve } from 'mingo/util';
import { ApiError } from '../errors.ts';
import { onFirstUse } from '../first-use.ts';
import { checkRegexShape, invalidQuery, type Matcher, type QueryDoc } from './shape.ts';

const loadEngine = onFirstUse(() => import('./regex.ts'));
let engine: Awaited<ReturnType<typeof loadEngine>> | undefined;

/** Loads RE2 for the queries to come (aggregation, whose stages may hide a `$regex` in a string). */
export async function loadRegexEngine(): Promise<void> {
  engine ??= await loadEngine();
}

/** Loads RE2 when the parsed query `q` holds a `$regex` anywhere; a query without one never reads it. */
export async function regexFor(q: unknown): Promise<void> {
  if (!engine && holdsRegex(q)) await loadRegexEngine();
}

/** Whether `$regex` is a key anywhere in `v` (walked without recursion: a body may nest deeply). */
function holdsRegex(v: unknown): boolean {
  const stack = [v];
  while (stack.length) {
    const x = stack.pop();
    if (x === null || typeof x !== 'object') continue;
    if (Array.isArray(x)) stack.push(...(x as unknown[]));
    else for (const [k, y] of Object.entries(x)) {
      if (k === '$regex') return true;
      stack.push(y);
    }
  }
  return false;
}

/** A caller checked or compiled a `$regex` without loading RE2 first: our defect, never the query's (a 500). */
class EngineNotLoaded extends Error {
  constructor() {
    super('the regular expression engine is not loaded: await regexFor(query) before checking or compiling it');
  }
}

/** RE2, loaded by {@link regexFor} before any `$regex` is checked or compiled. */
function re2(): NonNullable<typeof engine> {
  if (!engine) throw new EngineNotLoaded();
  return engine;
}

/** Refuses a `$regex` (with its `$options`) that RE2 cannot run or that is too long. */
export function checkRegex(pattern: unknown, options: unknown): void {
  checkRegexShape(pattern, options);
  re2().compileRegex(pattern as string, typeof options === 'string' ? options : '');
}

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

/** `$regex` through RE2: a pattern can never backtrack catastrophically. */
const $regex = (selector: string, value: unknown) => {
  const r = value as RegExp;
  const re = re2().compileRegex(r.source, r.flags.replace(/[gyu]/g, ''));
  const test = (x: unknown) => typeof x === 'string' && re.test(x);
  return (o: Record<string, unknown>) => {
    const v = resolve(o, selector, { unwrapArray: true });
    return Array.isArray(v) ? v.some((x) => test(x) || (Array.isArray(x) && x.some(test))) : test(v);
  };
};

/** The query operators of {@link ALLOWED_OPERATORS}, `$regex` through RE2 (aggregation's `$match` uses them too). */
export const QUERY_OPERATORS = { $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $and, $or, $nor, $not, $elemMatch, $all, $size, $regex } as never;

const CONTEXT = Context.init({ query: QUERY_OPERATORS });

/** Compiles a normalised query. Matching runs over documents revived with `reviveDates` (query.ts). */
export function compileQuery(q: QueryDoc): Matcher {
  let query: Query;
  try {
    query = new Query(q, { context: CONTEXT, scriptEnabled: false } as never);
  } catch (err) {
    if (err instanceof ApiError || err instanceof EngineNotLoaded) throw err;
    throw invalidQuery(`The query is not valid: ${(err as Error).message}`);
  }
  return {
    test(doc) {
      try {
        return query.test(doc);
      } catch {
        // A comparison the matcher cannot make (e.g. $size on a non-number) matches nothing.
        return false;
      }
    },
  };
}
