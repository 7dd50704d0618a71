/**
 * Query-string parameters shared by list calls, search and events: strict parsing, a 400 naming
 * the parameter for anything malformed (never a silent clamp: a client that stops on a short
 * page would lose data). The paging parameters are in paging-params.ts (re-exported here).
 */
import { badRequest } from '../errors.ts';
import type { ApiRequest } from './operation-contract.ts';

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, parsePaging, type Paging } from './paging-params.ts';

const invalid = (name: string, what: string) => badRequest('InvalidParameter', `Query parameter ${name} ${what}.`);

function single(req: Pick<ApiRequest, 'query'>, name: string): string | undefined {
  const v = req.query[name];
  if (!v || v.length === 0) return undefined;
  return v[v.length - 1];
}

/** An integer parameter within [min, max], or the default when absent. */
export function intParam(req: Pick<ApiRequest, 'query'>, name: string, def: number, min: number, max: number): number {
  const raw = single(req, name);
  if (raw === undefined || raw === '') return def;
  if (!/^-?\d+$/.test(raw.trim())) throw invalid(name, 'must be a whole number');
  const n = Number(raw);
  if (n < min || n > max) throw invalid(name, `must be between ${min} and ${max}`);
  return n;
}

/** A boolean parameter (`true`/`false`, any case; `1`/`0`). */
export function boolParam(req: Pick<ApiRequest, 'query'>, name: string, def = false): boolean {
  const raw = single(req, name);
  if (raw === undefined || raw === '') return def;
  const v = raw.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalid(name, 'must be true or false');
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date or date-time; one without a zone is UTC (the spec's date-times are UTC), and a
 * date that does not exist (2024-02-30) is refused. Undefined when `raw` is not such a date.
 */
export function parseIsoDateTime(input: string): Date | undefined {
  // An unencoded `+` of an offset arrives as a space.
  const raw = input.trim().replace(/(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?) (\d{2}:?\d{2})$/i, '$1+$2');
  const m = ISO_DATE_TIME.exec(raw);
  if (!m) return undefined;
  const [y, mo, d, h = '0', mi = '0', sec = '0'] = m.slice(1, 7) as string[];
  const calendar = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (calendar.getUTCMonth() !== Number(mo) - 1 || calendar.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) {
    return undefined;
  }
  const text = raw.replace(' ', 'T');
  const date = new Date(m[4] === undefined ? `${text}T00:00:00Z` : m[7] === undefined ? `${text}Z` : text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** An ISO 8601 date or date-time parameter (see {@link parseIsoDateTime}). */
export function dateParam(req: Pick<ApiRequest, 'query'>, name: string): Date | undefined {
  const raw = stringParam(req, name);
  if (raw === undefined) return undefined;
  const date = parseIsoDateTime(raw);
  if (!date) throw badRequest('InvalidParameter', `Query parameter ${name} must be an ISO 8601 date-time.`);
  return date;
}

/** A list parameter: repeated, comma-separated, or both. */
export function listParam(req: Pick<ApiRequest, 'query'>, name: string): string[] {
  return (req.query[name] ?? []).flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
}

/** A string parameter. */
export function stringParam(req: Pick<ApiRequest, 'query'>, name: string): string | undefined {
  const raw = single(req, name);
  return raw === undefined || raw === '' ? undefined : raw;
}
