/**
 * RE2's linear-time regular expressions (re2js) for `$regex`: no pattern can backtrack
 * catastrophically. Its own module, loaded by matcher.ts only for a query that holds a `$regex`.
 */
import { RE2JS } from 're2js';
import { invalidQuery } from './shape.ts';

const regexCache = new Map<string, RE2JS>();

/** Compiles with RE2 semantics (linear time, no backreferences or lookaround). */
export function compileRegex(pattern: string, options: string): RE2JS {
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
