/**
 * The paging parameters of list calls (see params.ts for the other query parameters): a module of
 * its own because every object family's list reads them at start, and the other parameters only
 * its relationship calls, loaded with the first of them.
 */
import { badRequest } from '../errors.ts';
import type { ApiRequest } from './operation-contract.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 1000;

export interface Paging {
  readonly page: number;
  readonly pageSize: number;
}

/**
 * `page` (zero-based, default 0) and `pageSize` (1..1000, default 20); anything else is 400
 * `InvalidPaging` (clients send `pagesize` too).
 */
export function parsePaging(req: Pick<ApiRequest, 'query'>): Paging {
  const read = (name: string): number | undefined => {
    const raw = req.query[name]?.[0] ?? req.query[name.toLowerCase()]?.[0];
    if (raw === undefined || raw === '') return undefined;
    if (!/^[+-]?\d{1,15}$/.test(raw.trim())) throw badRequest('InvalidPaging', `${name} must be an integer.`);
    return Number(raw);
  };
  const page = read('page') ?? 0;
  const pageSize = read('pageSize') ?? DEFAULT_PAGE_SIZE;
  if (page < 0) throw badRequest('InvalidPaging', 'page must be 0 or more.');
  if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) throw badRequest('InvalidPaging', `pageSize must be from 1 to ${MAX_PAGE_SIZE}.`);
  return { page, pageSize };
}
