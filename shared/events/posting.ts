/**
 * Publishing input: an EventMessagePosting checked and decoded, and the message templates of an
 * event type filled from the event's data and related objects.
 */
import type { Document } from 'bson';
import { badRequest } from '../errors.ts';
import { typeNameOf } from '../model/type-tags.ts';
import { onFirstUse } from '../first-use.ts';

export interface RelatedObject {
  readonly Relation?: string;
  readonly LinkedObjectKey?: string;
  readonly CommonName?: string;
  readonly Href?: string | null;
  readonly MetaDataBson?: unknown;
  readonly [field: string]: unknown;
}

export interface Posting {
  readonly occurredOn: Date;
  readonly appKey: string;
  readonly eventTypeMoniker: { readonly Namespace: string; readonly Nickname: string };
  readonly relatedObjects: readonly RelatedObject[];
  readonly eventDataBsonBase64: string | null;
  readonly eventData: Document;
  /** Fields the client sent beyond the spec's (ClientDeviceId, Tags, Metadata, ...). */
  readonly extra: Readonly<Record<string, unknown>>;
}

export const MAX_RELATED_OBJECTS = 90;

/** ISO 8601 date-time with a `Z` or an offset. */
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

export function parseInstant(value: unknown, field: string): Date {
  if (typeof value !== 'string' || !ISO_WITH_ZONE.test(value)) {
    throw badRequest('ValidationFailed', `${field} must be an ISO 8601 date-time with Z or an offset.`);
  }
  const d = new Date(value);
  // `new Date` rolls 2024-02-30 over to March; a date that does not exist is refused.
  const [y, m, day, h] = value.split(/[-T:]/).map(Number) as [number, number, number, number];
  const calendar = new Date(Date.UTC(y, m - 1, day));
  if (Number.isNaN(d.getTime()) || calendar.getUTCMonth() !== m - 1 || calendar.getUTCDate() !== day || h > 23) {
    throw badRequest('ValidationFailed', `${field} is not a valid date.`);
  }
  return d;
}

const SPEC_FIELDS = new Set(['$type', 'OccurredOn', 'AppKey', 'EventTypeMoniker', 'RelatedObjects', 'EventDataBsonBase64']);

const eventDataCodec = onFirstUse(() => import('./event-data.ts'));

/** A posting whose fields are checked, its event data not decoded yet (see {@link withEventData}). */
export type CheckedPosting = Omit<Posting, 'eventData'>;

/**
 * Validates an EventMessagePosting body. The BSON codec is loaded only for a posting that carries
 * event data: a cold function publishing a swipe without data, or listing, never runs it.
 */
export async function parsePosting(body: unknown): Promise<Posting> {
  return withEventData(checkPosting(body));
}

/** Decodes a checked posting's event data (400 InvalidEventData when it is not a BSON document). */
export async function withEventData(p: CheckedPosting): Promise<Posting> {
  const data = p.eventDataBsonBase64;
  return { ...p, eventData: data === null ? {} : (await eventDataCodec()).decodeEventData(data) };
}

/**
 * How far ahead of the server's clock an `OccurredOn` may be: clients' clocks drift, but an event
 * dated further ahead would stay the newest of its objects (`lastevent`) until that date.
 */
const MAX_OCCURRED_AHEAD_MS = 24 * 60 * 60 * 1000;

/**
 * Checks every field of an EventMessagePosting but its event data's content (synchronous);
 * with `now`, an `OccurredOn` more than {@link MAX_OCCURRED_AHEAD_MS} after it is refused too.
 */
export function checkPosting(body: unknown, now?: Date): CheckedPosting {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('ValidationFailed', 'The body must be an EventMessagePosting object.');
  }
  const b = body as Record<string, unknown>;
  // Without `$type` the body is the EventMessagePosting the endpoint declares.
  if (b.$type !== undefined && b.$type !== null && typeNameOf(b.$type) !== 'EventMessagePosting') {
    throw badRequest('WrongType', 'The body must be an EventMessagePosting.');
  }
  const occurredOn = parseInstant(b.OccurredOn, 'OccurredOn');
  if (now && occurredOn.getTime() > now.getTime() + MAX_OCCURRED_AHEAD_MS) {
    throw badRequest('ValidationFailed', 'OccurredOn may be at most one day after the server\'s time.');
  }
  if (typeof b.AppKey !== 'string' || b.AppKey.trim() === '' || b.AppKey.length > 200) {
    throw badRequest('ValidationFailed', 'AppKey must name the app (its Key or a moniker Nickname).');
  }
  const m = b.EventTypeMoniker as Record<string, unknown> | undefined;
  if (!m || typeof m !== 'object' || typeof m.Nickname !== 'string' || (m.Namespace !== undefined && m.Namespace !== null && typeof m.Namespace !== 'string')) {
    throw badRequest('ValidationFailed', 'EventTypeMoniker must have a Nickname (and a Namespace).');
  }
  const related = b.RelatedObjects ?? [];
  if (!Array.isArray(related) || related.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
    throw badRequest('ValidationFailed', 'RelatedObjects must be an array of ObjectLinkItem.');
  }
  if (related.length > MAX_RELATED_OBJECTS) {
    throw badRequest('ValidationFailed', `At most ${MAX_RELATED_OBJECTS} related objects may be posted with one event.`);
  }
  for (const r of related as Record<string, unknown>[]) {
    for (const f of ['Relation', 'LinkedObjectKey', 'CommonName'] as const) {
      if (r[f] !== undefined && r[f] !== null && typeof r[f] !== 'string') throw badRequest('ValidationFailed', `RelatedObjects.${f} must be a string.`);
    }
  }
  const data = b.EventDataBsonBase64;
  // Its content is decoded later (withEventData); anything but text is refused here, as then.
  if (data !== undefined && data !== null && typeof data !== 'string') throw badRequest('InvalidEventData', 'EventDataBsonBase64 is not base64.');
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) if (!SPEC_FIELDS.has(k)) extra[k] = v;
  return {
    occurredOn,
    appKey: b.AppKey,
    eventTypeMoniker: { Namespace: (m.Namespace as string | undefined) ?? '', Nickname: m.Nickname },
    relatedObjects: related as RelatedObject[],
    eventDataBsonBase64: typeof data === 'string' && data !== '' ? data : null,
    extra,
  };
}

function lookup(data: Document, path: string): unknown {
  let v: unknown = data;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function show(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === 'object') {
    const s = (v as { toString?: () => string }).toString?.();
    return s && s !== '[object Object]' ? s : JSON.stringify(v);
  }
  return String(v);
}

/**
 * Fills `{Name}` placeholders: the event data's field Name (dotted paths allowed), else the
 * CommonName of the related object whose Relation is Name; unknown placeholders stay as written.
 */
export function fillTemplate(template: unknown, data: Document, related: readonly RelatedObject[]): string | null {
  if (typeof template !== 'string') return null;
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_.]*)\}/g, (whole, name: string) => {
    const v = lookup(data, name);
    if (v !== undefined && v !== null) return show(v);
    const r = related.find((o) => o.Relation === name && typeof o.CommonName === 'string');
    return r ? (r.CommonName as string) : whole;
  });
}
