/**
 * The query engine: checking a parsed query against the allow-list and the depth cap, and
 * compiling it into a matcher (mingo, with RE2's linear-time regular expressions for `$regex`).
 * Loaded on demand through `loadMatcher()` of `query.ts`, which keeps the parsing and planning
 * that need none of it; aggregation (itself loaded on demand) imports it directly.
 */
import { Context } from 'mingo/core';
import { Query } from 'mingo/query';
import { $all, $elemMatch, $size } from 'mingo/operators/query/array';
import { $eq, $gt, $gte, $in, $lt, $lte, $ne, $nin } from 'mingo/operators/query/comparison';
import { $exists } from 'mingo/operators/query/element';
import { $and, $nor, $not, $or } from 'mingo/operators/query/logical';
import { resolve } from 'mingo/util';
import { RE2JS } from 're2js';
import { ApiError } from '../errors.ts';
import { ALLOWED_OPERATORS, asDate, bigDigits, invalidQuery, MAX_QUERY_DEPTH, MAX_REGEX_LENGTH, type Matcher, type QueryDoc } from './query.ts';

/** Refuses a `$regex` (with its `$options`) that RE2 cannot run or that is too long. */
export function checkRegex(pattern: unknown, options: unknown): void {
  if (typeof pattern !== 'string') throw invalidQuery('$regex needs a string pattern.');
  if (pattern.length > MAX_REGEX_LENGTH) throw invalidQuery(`A $regex pattern is limited to ${MAX_REGEX_LENGTH} characters.`);
  if (options !== undefined && (typeof options !== 'string' || !/^[imsx]*$/.test(options))) {
    throw invalidQuery('$options may only hold the flags i, m, s and x.');
  }
  compileRegex(pattern, typeof options === 'string' ? options : '');
}

const regexCache = new Map<string, RE2JS>();

/** Compiles with RE2 semantics (linear time, no backreferences or lookaround). */
function compileRegex(pattern: string, options: string): RE2JS {
  const id = `${options}/${pattern}`;
  let re = regexCache.get(id);
  if (!re) {
    let flags = 0;
    if (options.includes('i')) flags |= RE2JS.CASE_INSENSITIVE;
    if (options.includes('m')) flags |= RE2JS.MULTILINE;
    if (options.includes('s')) flags |= RE2JS.DOTALL;
    // `x`: white space and `#` comments are not part of the pattern (escaped ones are).
    const source = options.includes('x') ? pattern.replace(/(\\.)|\s+|#[^\n]*/g, (_m, esc: string | undefined) => esc ?? '') : pattern;
    try {
      re = RE2JS.compile(source, flags);
    } catch (err) {
      throw invalidQuery(`The regular expression /${pattern}/ is not supported: ${(err as Error).message}`);
    }
    if (regexCache.size > 500) regexCache.clear();
    regexCache.set(id, re);
  }
  return re;
}

/**
 * Checks the query against the allow-list and the depth cap, and rewrites it for the matcher:
 * `_id` is the Key, `{"$date": ...}` and ISO strings become dates, and `_t` type names are read
 * with or without the `Info` suffix (documents carry both; see `discriminators`).
 */
export function normalizeQuery(q: QueryDoc): QueryDoc {
  const walk = (v: unknown, depth: number, inOperatorValue: boolean): unknown => {
    if (depth > MAX_QUERY_DEPTH) throw invalidQuery(`The query is nested deeper than ${MAX_QUERY_DEPTH} levels.`);
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1, inOperatorValue));
    if (typeof v === 'bigint') return bigDigits(v);
    if (v === null || typeof v !== 'object') return asDate(v);
    const obj = v as QueryDoc;
    const keys = Object.keys(obj);
    if (keys.length === 1 && keys[0] === '$date') {
      const d = new Date(obj.$date as string | number);
      if (Number.isNaN(d.getTime())) throw invalidQuery('$date needs an ISO 8601 date or epoch milliseconds.');
      return d;
    }
    if (keys.length === 1 && keys[0] === '$oid' && typeof obj.$oid === 'string') return obj.$oid.toLowerCase();
    const out: QueryDoc = {};
    for (const k of keys) {
      if (k.startsWith('$')) {
        if (!ALLOWED_OPERATORS.has(k)) throw invalidQuery(`The operator ${k} is not allowed.`);
        if (k === '$regex') checkRegex(obj.$regex, obj.$options);
        if (k === '$options' && !('$regex' in obj)) throw invalidQuery('$options needs $regex beside it.');
      }
      const name = k === '_id' ? 'Key' : k;
      out[name] = walk(obj[k], depth + 1, k.startsWith('$') || inOperatorValue);
    }
    return out;
  };
  return walk(q, 1, false) as QueryDoc;
}

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

/** `$regex` through RE2: a pattern can never backtrack catastrophically. */
const $regex = (selector: string, value: unknown) => {
  const r = value as RegExp;
  const re = compileRegex(r.source, r.flags.replace(/[gyu]/g, ''));
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
    if (err instanceof ApiError) throw err;
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
