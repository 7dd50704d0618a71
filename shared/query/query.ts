/**
 * Document-database style queries: parsing the syntax clients in the field send, refusing what
 * could run code or hang a function (the allow-list, the depth cap, the shape of a `$regex`:
 * {@link normalizeQuery}), and planning which index a search reads. Compiling the rest into a
 * matcher (mingo, with a linear-time regular expression engine in place of the backtracking one)
 * is `matcher.ts`: that engine is most of the bytes a query costs, so a function loads it with {@link loadMatcher} on the first request that carries a query, and an
 * events function serving a publish or an unfiltered list never does. A search starts its index
 * read before it awaits the engine.
 */
import { checkRegexShape, invalidQuery, type QueryDoc } from './shape.ts';
import { narrowInteger, stringifyJson } from '../json.ts';
import { onFirstUse } from '../first-use.ts';

const MAX_QUERY_BYTES = 16 * 1024;
export const MAX_QUERY_DEPTH = 16;

/**
 * The query engine (`compileQuery`, `checkRegex`, `regexFor`), loaded once per execution
 * environment: bundled, it is a chunk a cold start does not read until the first query asks.
 */
export const loadMatcher = onFirstUse(() => import('./matcher.ts'));

/** Operators a query may use; anything else (`$where`, `$function`, `$expr`, ...) is refused. */
export const ALLOWED_OPERATORS: ReadonlySet<string> = new Set([
  '$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$regex', '$options',
  '$and', '$or', '$nor', '$not', '$elemMatch', '$all', '$size',
]);

// ---------------------------------------------------------------------------------------------
// Relaxed syntax: single quotes, unquoted keys, ObjectId("..."), ISODate("..."), new Date("...")
// ---------------------------------------------------------------------------------------------

/** A number literal; an integer beyond 2^53 stays exact as a `bigint` (64-bit card numbers). */
function parseNumberLiteral(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) return narrowInteger(BigInt(text));
  return Number(text);
}

/**
 * Turns the relaxed syntax of shell-style queries into a value. Strict JSON passes unchanged.
 * Errors name the offset of the problem.
 */
export function parseRelaxed(text: string): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw invalidQuery(`Malformed query at offset ${i}: ${what} (near "${text.slice(Math.max(0, i - 10), i + 10)}").`);
  };
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const str = (): string => {
    const q = text[i];
    i++;
    let out = '';
    while (i < text.length && text[i] !== q) {
      const c = text[i]!;
      if (c === '\\') {
        const n = text[i + 1];
        if (n === undefined) fail('unterminated escape');
        const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '/': '/', '\\': '\\', '"': '"', "'": "'" };
        if (n === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
          continue;
        }
        // Regular expressions keep their own escapes (`\d`, `\.`): an unknown escape stays as written.
        out += simple[n!] ?? `\\${n}`;
        i += 2;
        continue;
      }
      out += c;
      i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
    return out;
  };
  const ident = (): string => {
    const m = /^[A-Za-z_$][A-Za-z0-9_$.]*/.exec(text.slice(i));
    if (!m) return fail('unexpected character');
    i += m[0].length;
    return m[0];
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === undefined) return fail('unexpected end');
    if (c === '{') {
      i++;
      const obj: QueryDoc = {};
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        const key = text[i] === '"' || text[i] === "'" ? str() : ident();
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        obj[key] = value();
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          if (text[i] === '}') {
            i++;
            return obj;
          }
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          if (text[i] === ']') {
            i++;
            return arr;
          }
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        fail('expected "," or "]"');
      }
    }
    if (c === '"' || c === "'") return str();
    if (c === '/') {
      // A regular expression literal: /pattern/flags
      const m = /^\/((?:\\.|[^/\\\n])+)\/([a-z]*)/.exec(text.slice(i));
      if (!m) fail('bad regular expression literal');
      i += m![0].length;
      return { $regex: m![1], ...(m![2] ? { $options: m![2] } : {}) };
    }
    const num = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (num && num[0] !== '-') {
      i += num[0].length;
      return parseNumberLiteral(num[0]);
    }
    let word = ident();
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    if (word === 'new') {
      ws();
      word = ident();
    }
    ws();
    if (text[i] !== '(') fail(`unknown word "${word}"`);
    i++;
    ws();
    const arg = text[i] === ')' ? undefined : value();
    ws();
    if (text[i] !== ')') fail('expected ")"');
    i++;
    switch (word) {
      case 'ObjectId':
        if (typeof arg !== 'string' || !/^[0-9a-fA-F]{24}$/.test(arg)) fail('ObjectId needs 24 hex digits');
        return (arg as string).toLowerCase();
      case 'ISODate':
      case 'Date':
        return { $date: arg ?? new Date().toISOString() };
      case 'NumberInt':
      case 'NumberLong':
      case 'NumberDecimal':
        return typeof arg === 'string' ? parseNumberLiteral(arg.trim()) : typeof arg === 'bigint' ? arg : Number(arg);
      default:
        return fail(`unknown function ${word}()`);
    }
  };
  const out = value();
  ws();
  if (i < text.length) fail('unexpected text after the query');
  return out;
}

/**
 * The query of a search body: a JSON string holding the query (the spec's form), or the query
 * object itself.
 */
export function parseQueryBody(body: unknown): QueryDoc {
  if (body === undefined || body === null || body === '') return {};
  let q: unknown = body;
  if (typeof body === 'string') {
    if (Buffer.byteLength(body) > MAX_QUERY_BYTES) throw invalidQuery(`The query is larger than ${MAX_QUERY_BYTES} bytes.`);
    if (body.trim() === '') return {};
    q = parseRelaxed(body);
  } else if (Buffer.byteLength(stringifyJson(body)) > MAX_QUERY_BYTES) {
    throw invalidQuery(`The query is larger than ${MAX_QUERY_BYTES} bytes.`);
  }
  if (typeof q !== 'object' || q === null || Array.isArray(q)) throw invalidQuery('The query must be a document ({...}).');
  return q as QueryDoc;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date written as an ISO string or `{"$date": ...}`, as a Date; anything else unchanged. */
export function asDate(v: unknown): unknown {
  if (typeof v === 'string' && ISO_DATE.test(v)) {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? v : d;
  }
  return v;
}

/**
 * An integer beyond 2^53 (a 64-bit card number) as the matcher sees it, in queries and documents
 * alike: its digits. The matcher cannot hold a `bigint`, and a double would make neighbouring
 * card numbers equal; equality stays exact (ordering operators compare such numbers as text).
 */
const bigDigits = (v: bigint): string => v.toString();

/**
 * Checks the query against the allow-list and the depth cap, and rewrites it for the matcher:
 * a `$regex` is checked for its shape here and for RE2's syntax when it is compiled (matcher.ts);
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
        if (k === '$regex') checkRegexShape(obj.$regex, obj.$options);
        if (k === '$options' && !('$regex' in obj)) throw invalidQuery('$options needs $regex beside it.');
      }
      const name = k === '_id' ? 'Key' : k;
      out[name] = walk(obj[k], depth + 1, k.startsWith('$') || inOperatorValue);
    }
    return out;
  };
  return walk(q, 1, false) as QueryDoc;
}

/**
 * Deep copy of a document with ISO date strings as dates, so dates compare as instants, and big
 * integers as their digits (see {@link bigDigits}).
 */
export function reviveDates(v: unknown): unknown {
  if (typeof v === 'bigint') return bigDigits(v);
  if (Array.isArray(v)) return v.map(reviveDates);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = reviveDates(x);
    return out;
  }
  return asDate(v);
}

/** A top-level field name: no path (`a.b`), no operator, not `_t`. */
const PLAIN_FIELD = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * The matcher of a normalised query made only of string equalities on top-level fields (`{"CommonName":
 * "Front door"}`, `{"_t": "Door", "Key": "..."}`), the usual lookup, which needs no query engine.
 * It answers as the engine does: a field holding that very string matches, a missing field does not,
 * and `_t` (a document's type names, always an array) matches when it holds the name. Its `test`
 * answers undefined for a document whose compared field holds anything else (an array, a date, a
 * number): the engine decides those. Undefined for any other query.
 */
export function equalityMatcher(q: QueryDoc): { test(doc: Record<string, unknown>): boolean | undefined } | undefined {
  const pairs = Object.entries(q);
  if (pairs.length === 0) return undefined;
  for (const [k, v] of pairs) if (typeof v !== 'string' || (k !== '_t' && !PLAIN_FIELD.test(k))) return undefined;
  const wanted = pairs as ReadonlyArray<readonly [string, string]>;
  return {
    test(doc) {
      let matches = true;
      for (const [k, v] of wanted) {
        const x = doc[k];
        if (k === '_t' && Array.isArray(x) && x.every((t) => typeof t === 'string')) matches &&= x.includes(v);
        else if (typeof x === 'string') matches &&= x === v;
        else if (x !== undefined) return undefined;
        else matches = false;
      }
      return matches;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Planning
// ---------------------------------------------------------------------------------------------

/** The index a search reads; the matcher filters what it returns. */
export type Plan =
  | { readonly kind: 'keys'; readonly keys: readonly string[] }
  | { readonly kind: 'card'; readonly number: string }
  | { readonly kind: 'name'; readonly equals?: string; readonly prefix?: string }
  | { readonly kind: 'types'; readonly types: readonly string[] | undefined };

/** The conditions that must all hold: the top level and the members of a top-level `$and`. */
export function conjuncts(q: QueryDoc): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(q)) {
    if (k === '$and' && Array.isArray(v)) for (const sub of v) out.push(...conjuncts(sub as QueryDoc));
    else if (!k.startsWith('$')) out.push([k, v]);
  }
  return out;
}

function equalityValues(v: unknown): unknown[] | undefined {
  if (v === null || v instanceof Date) return undefined;
  if (typeof v !== 'object') return [v];
  if (Array.isArray(v)) return undefined;
  const o = v as QueryDoc;
  const keys = Object.keys(o);
  if (keys.length !== 1) return undefined;
  if (keys[0] === '$eq') return equalityValues(o.$eq);
  if (keys[0] === '$in' && Array.isArray(o.$in)) return o.$in.every((x) => typeof x !== 'object') ? o.$in : undefined;
  return undefined;
}

/** Requested type names of `_t` (string, array or `$in`/`$eq`), or undefined when absent. */
export function requestedTypes(q: QueryDoc): string[] | undefined {
  for (const [k, v] of conjuncts(q)) {
    if (k !== '_t') continue;
    const vals = Array.isArray(v) ? v : equalityValues(v);
    if (!vals || !vals.every((x) => typeof x === 'string')) throw invalidQuery('_t must be a type name, an array of them or {"$in": [...]}.');
    return vals as string[];
  }
  return undefined;
}

/**
 * `_t: [a, b]` means "any of a, b" (as `$in`), whatever the array rules would say; rewrite it so
 * the matcher agrees with the planner.
 */
export function rewriteTypeArrays(q: QueryDoc): QueryDoc {
  const out: QueryDoc = {};
  for (const [k, v] of Object.entries(q)) {
    if (k === '_t' && Array.isArray(v)) out[k] = { $in: v };
    else if (k === '$and' && Array.isArray(v)) out[k] = v.map((x) => rewriteTypeArrays(x as QueryDoc));
    else out[k] = v;
  }
  return out;
}

/** Picks the most selective indexed predicate of a normalised query. */
export function planQuery(q: QueryDoc, types: string[] | undefined): Plan {
  const cs = conjuncts(q);
  for (const [k, v] of cs) {
    if (k !== 'Key') continue;
    const vals = equalityValues(v);
    if (vals && vals.every((x) => typeof x === 'string')) return { kind: 'keys', keys: vals as string[] };
  }
  for (const [k, v] of cs) {
    if (k !== 'CardAssignments.EncodedCardNumber') continue;
    const vals = equalityValues(v);
    if (vals?.length === 1 && (typeof vals[0] === 'number' || typeof vals[0] === 'bigint' || typeof vals[0] === 'string')) return { kind: 'card', number: String(vals[0]) };
  }
  for (const [k, v] of cs) {
    if (k !== 'CommonName') continue;
    const vals = equalityValues(v);
    if (vals?.length === 1 && typeof vals[0] === 'string') return { kind: 'name', equals: vals[0] };
    const o = v as QueryDoc | null;
    if (o && typeof o === 'object' && typeof o.$regex === 'string' && !o.$options && !o.$regex.includes('|')) {
      const m = /^\^((?:[A-Za-z0-9 _\-@]|\\.)+)/.exec(o.$regex);
      if (m) {
        const prefix = m[1]!.replace(/\\(.)/g, '$1');
        // Only a literal prefix is an index range; `^ab*` is not.
        if (!/[*+?{|(]/.test(o.$regex.slice(m[0].length, m[0].length + 1))) return { kind: 'name', prefix };
      }
    }
  }
  return { kind: 'types', types };
}
