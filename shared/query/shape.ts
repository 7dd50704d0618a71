/**
 * What the query's parser (query.ts), its engine (matcher.ts) and the regular expressions
 * (regex.ts) all share: the document a query is, the one error a bad query gets, the shape a
 * `$regex` must have, and what a compiled query answers. Kept apart so the engine, loaded on the
 * first query, does not import the module that loads it.
 */
import { ApiError } from '../errors.ts';

const MAX_REGEX_LENGTH = 512;

export type QueryDoc = Record<string, unknown>;

export const invalidQuery = (message: string): ApiError => new ApiError(400, 'InvalidQuery', message);

/** Refuses a `$regex` (with its `$options`) that is not a string, too long, or flagged otherwise than `imsx`. */
export function checkRegexShape(pattern: unknown, options: unknown): void {
  if (typeof pattern !== 'string') throw invalidQuery('$regex needs a string pattern.');
  if (pattern.length > MAX_REGEX_LENGTH) throw invalidQuery(`A $regex pattern is limited to ${MAX_REGEX_LENGTH} characters.`);
  if (options !== undefined && (typeof options !== 'string' || !/^[imsx]*$/.test(options))) {
    throw invalidQuery('$options may only hold the flags i, m, s and x.');
  }
}

/** A compiled query. */
export interface Matcher {
  test(doc: Record<string, unknown>): boolean;
}
