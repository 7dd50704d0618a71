/**
 * The events list's query parameters, parsed once into a filter. Ranges include their start and
 * exclude their end; the time-of-day window is UTC and wraps over midnight when start > end.
 */
import { badRequest } from '../errors.ts';
import { boolParam, dateParam, intParam, listParam, parsePaging, stringParam, type Paging } from '../http/params.ts';
import type { ApiRequest } from '../http/operation-contract.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { loadMatcher, normalizeQuery, parseQueryBody, reviveDates } from '../query/query.ts';
import type { Matcher } from '../query/shape.ts';

export interface EventListQuery extends Paging {
  readonly includeSubFolders: boolean;
  readonly spanScope: boolean;
  /** Accepted for compatibility; instances are not shared in Gatehouse, so it changes nothing. */
  readonly includeSharedInstances: boolean;
  readonly requiresAck: boolean;
  readonly startingOn: Date | undefined;
  readonly endingOn: Date | undefined;
  /** Seconds of the UTC day. */
  readonly window: { readonly start: number; readonly end: number } | undefined;
  readonly priorityThreshold: number;
  readonly forKeys: readonly string[];
  readonly forAllKeys: readonly string[];
  readonly sinceKey: string | undefined;
  readonly matcher: Matcher | undefined;
  readonly forPeopleInAccessLevels: readonly string[];
  /** Every parameter but `page`, canonical: identifies a listing across its pages. */
  readonly signature: string;
}

type Query = Pick<ApiRequest, 'query'>;

function timeOfDay(req: Query, name: string): number | undefined {
  const raw = stringParam(req, name);
  if (raw === undefined) return undefined;
  // .NET TimeSpan form: [d.]hh:mm[:ss[.fff]]
  const m = /^(?:(\d+)\.)?(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(raw.trim());
  if (!m) throw badRequest('InvalidParameter', `Query parameter ${name} must be a time of day hh:mm:ss.`);
  const [h, mi, s] = [Number(m[2]), Number(m[3]), Number(m[4] ?? 0)];
  if (m[1] && Number(m[1]) > 0) throw badRequest('InvalidParameter', `Query parameter ${name} must be within one day.`);
  if (h > 23 || mi > 59 || s > 59) throw badRequest('InvalidParameter', `Query parameter ${name} is not a time of day.`);
  return h * 3600 + mi * 60 + s;
}

function keys(req: Query, name: string): string[] {
  const list = listParam(req, name);
  for (const k of list) {
    if (!isObjectKey(k.toLowerCase())) throw badRequest('InvalidParameter', `Query parameter ${name} must hold object keys.`);
  }
  return list.map((k) => k.toLowerCase());
}

/** The parameter names of the events list, as the spec spells them (the OpenAPI document lists each). */
export const EVENT_LIST_PARAMETERS: readonly string[] = [
  'page',
  'pageSize',
  'includeSubFolders',
  'includeSharedInstances',
  'spanScope',
  'requiresAck',
  'startingOn',
  'endingOn',
  'timeWindowStarting',
  'timeWindowEnding',
  'priorityThreshold',
  'forKeys',
  'forAllKeys',
  'sinceKey',
  'query',
  'forPeopleInAccessLevels',
];
const BY_LOWER = new Map(EVENT_LIST_PARAMETERS.map((p) => [p.toLowerCase(), p]));

/** The query with parameter names matched case-insensitively (`pagesize` is `pageSize`). */
export function canonicalQuery(req: Query): Query {
  const query: Record<string, string[]> = Object.create(null);
  for (const [k, v] of Object.entries(req.query)) (query[BY_LOWER.get(k.toLowerCase()) ?? k] ??= []).push(...v);
  return { query };
}

/** The list's parameters; a `query` loads the query engine (the rest never needs it). */
export async function parseEventListQuery(request: ApiRequest): Promise<EventListQuery> {
  const req = canonicalQuery(request);
  const start = timeOfDay(req, 'timeWindowStarting');
  const end = timeOfDay(req, 'timeWindowEnding');
  const sinceKey = stringParam(req, 'sinceKey');
  if (sinceKey !== undefined && !isObjectKey(sinceKey.toLowerCase())) {
    throw badRequest('InvalidParameter', 'Query parameter sinceKey must be an event key.');
  }
  const query = stringParam(req, 'query');
  let matcher: Matcher | undefined;
  if (query !== undefined) {
    const normalized = normalizeQuery(parseQueryBody(query));
    const { compileQuery, regexFor } = await loadMatcher();
    await regexFor(normalized);
    matcher = compileQuery(normalized);
  }
  return {
    ...parsePaging(req),
    includeSubFolders: boolParam(req, 'includeSubFolders'),
    spanScope: boolParam(req, 'spanScope'),
    includeSharedInstances: boolParam(req, 'includeSharedInstances'),
    requiresAck: boolParam(req, 'requiresAck'),
    startingOn: dateParam(req, 'startingOn'),
    endingOn: dateParam(req, 'endingOn'),
    window: start !== undefined || end !== undefined ? { start: start ?? 0, end: end ?? 86400 } : undefined,
    priorityThreshold: intParam(req, 'priorityThreshold', 0, 0, 2 ** 31 - 1),
    forKeys: keys(req, 'forKeys'),
    forAllKeys: keys(req, 'forAllKeys'),
    sinceKey: sinceKey?.toLowerCase(),
    matcher,
    forPeopleInAccessLevels: keys(req, 'forPeopleInAccessLevels'),
    signature: signatureOf(req),
  };
}

/** The query without `page`, names and values sorted. */
function signatureOf(req: Query): string {
  return Object.entries(req.query)
    .filter(([k]) => k !== 'page')
    .map(([k, v]) => `${k}=${[...v].sort().join(',')}`)
    .sort()
    .join('&');
}

/** An event document as stored (the fields the filter reads). */
export interface EventDocView {
  readonly Key: string;
  readonly OccurredOn: string;
  readonly Priority?: number;
  readonly RequiresAcknowledgement?: boolean;
  readonly AlarmAcknowledgements?: readonly unknown[];
  readonly ObjectLinks?: ReadonlyArray<{ readonly LinkedObjectKey?: string }>;
  readonly [field: string]: unknown;
}

/** The `_t` values an event answers to in a `query`. */
const EVENT_DISCRIMINATORS = ['EventMessageData', 'EventMessage'];

/** Seconds of the UTC day of an instant. */
const secondsOfDay = (d: Date): number => d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds();

/**
 * The filter the events list applies after its key-range Query. `peopleKeys` are the people
 * connected to `forPeopleInAccessLevels` (resolved by the caller).
 */
export function eventFilter(q: EventListQuery, peopleKeys: ReadonlySet<string> | undefined): (e: EventDocView) => boolean {
  return (e) => {
    const related = new Set(
      (e.ObjectLinks ?? []).map((l) => (typeof l.LinkedObjectKey === 'string' ? l.LinkedObjectKey.toLowerCase() : '')).filter(Boolean),
    );
    if (q.requiresAck && (!e.RequiresAcknowledgement || (e.AlarmAcknowledgements?.length ?? 0) > 0)) return false;
    if (q.priorityThreshold > 0 && (e.Priority ?? 0) < q.priorityThreshold) return false;
    if (q.window) {
      const s = secondsOfDay(new Date(e.OccurredOn));
      const { start, end } = q.window;
      const inside = start <= end ? s >= start && s < end : s >= start || s < end;
      if (!inside) return false;
    }
    if (q.forKeys.length > 0 && !q.forKeys.some((k) => related.has(k))) return false;
    if (q.forAllKeys.length > 0 && !q.forAllKeys.every((k) => related.has(k))) return false;
    if (q.sinceKey && !(e.Key > q.sinceKey)) return false;
    if (peopleKeys && ![...related].some((k) => peopleKeys.has(k))) return false;
    if (q.matcher && !q.matcher.test({ ...(reviveDates(e) as Record<string, unknown>), _t: EVENT_DISCRIMINATORS })) return false;
    return true;
  };
}
