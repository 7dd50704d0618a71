/**
 * How an event's document is stored: without what the item already says or what is the same for
 * every event, so the event item of a usual posting stays within one 1 KB write unit (it is
 * written twice: the table and its timeline index, GSI1, which projects every attribute).
 *
 * Left out of the stored JSON, and put back when the item is read ({@link expandEventDoc}), in
 * the same place, so every reader sees the very document that was written:
 *
 * - `$type` (`EventMessageData`; its absence marks a packed document), `Key`, `InFolderKey`,
 *   `Href` (`/api/f/<folder>/events/<key>`) and `Links` (the standard links): the item's key and
 *   folder give them;
 * - `OccurredOn`: the timeline sort key (`GSI1SK`, `<OccurredOn>#<key>`) holds it;
 * - the fields at their default: `AlarmAcknowledgements`, `Metadata`, `Monikers`, `Tags` empty,
 *   `ClientDeviceId`, `EventDataBsonBase64`, `MessageLong`, `MessageShort` null,
 *   `RequiresAcknowledgement` false;
 * - the `$type`s and field names of `EventTypeMoniker` (`[Namespace, Nickname]`) and of each
 *   ObjectLinkItem (`[Href between /api/f/ and /<key>, LinkedObjectKey, CommonName, Relation]`).
 *
 * A document is packed only when expanding the packed form gives it back exactly (same fields,
 * values and order); any other document (an older event, an unusual link) is stored as it is.
 */
import { stringifyJson } from '../json.ts';
import { STANDARD_LINKS } from '../model/standard-links.ts';

/** `/api/f/<folder>/events/<key>`. */
export const eventHref = (folder: string, key: string): string => `/api/f/${folder}/events/${key}`;

/** The standard links as an event document holds them (bare `$type`s). */
export function storedEventLinks(): Record<string, unknown>[] {
  return STANDARD_LINKS.map((l) => ({ $type: 'Link', Relation: l.relation, Anchor: { $type: 'Anchor', Href: l.href, Text: l.text } }));
}

/** What the event's item says besides its document. */
export interface EventPlace {
  readonly key: string;
  readonly folder: string;
  /** `OccurredOn` as the timeline sort key holds it; undefined: not known (kept in the document). */
  readonly occurredOn: string | undefined;
}

/** The `OccurredOn` an event item's timeline sort key (`<OccurredOn>#<key>`) holds. */
export function occurredOfItem(item: Record<string, unknown>): string | undefined {
  const sk = item.GSI1SK;
  if (typeof sk !== 'string') return undefined;
  const at = sk.indexOf('#');
  return at > 0 ? sk.slice(0, at) : undefined;
}

const DATA_TYPE = 'EventMessageData';

/** Every field of an EventMessageData in the order publishing writes them, and how each is put back. */
const FIELDS: ReadonlyArray<readonly [name: string, fill: ((p: EventPlace) => unknown) | undefined]> = [
  ['$type', () => DATA_TYPE],
  ['AlarmAcknowledgements', () => []],
  ['AppKey', undefined],
  ['ClientDeviceId', () => null],
  ['EventDataBsonBase64', () => null],
  ['EventTypeKey', undefined],
  ['EventTypeMoniker', undefined],
  ['Href', (p) => eventHref(p.folder, p.key)],
  ['InFolderKey', (p) => p.folder],
  ['Key', (p) => p.key],
  ['Links', () => storedEventLinks()],
  ['MessageLong', () => null],
  ['MessageShort', () => null],
  ['Metadata', () => []],
  ['Monikers', () => []],
  ['ObjectLinks', undefined],
  ['OccurredOn', (p) => p.occurredOn],
  ['Priority', undefined],
  ['PublishedOn', undefined],
  ['RequiresAcknowledgement', () => false],
  ['Tags', () => []],
];
const KNOWN = new Set(FIELDS.map(([f]) => f));

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const HREF_PREFIX = '/api/f/';

function packLink(l: unknown): unknown {
  if (!isRecord(l) || typeof l.Href !== 'string' || typeof l.LinkedObjectKey !== 'string') return l;
  const suffix = `/${l.LinkedObjectKey}`;
  if (!l.Href.startsWith(HREF_PREFIX) || !l.Href.endsWith(suffix) || l.Href.length < HREF_PREFIX.length + suffix.length) return l;
  const packed = [l.Href.slice(HREF_PREFIX.length, l.Href.length - suffix.length), l.LinkedObjectKey, l.CommonName ?? null, l.Relation ?? null];
  return stringifyJson(expandLink(packed)) === stringifyJson(l) ? packed : l;
}

function expandLink(l: unknown): unknown {
  if (!Array.isArray(l)) return l;
  const [mid, key, name, relation] = l as [string, string, unknown, unknown];
  return { $type: 'ObjectLinkItem', Href: `${HREF_PREFIX}${mid}/${key}`, LinkedObjectKey: key, CommonName: name, Relation: relation, MetaDataBson: null };
}

function packValue(field: string, v: unknown): unknown {
  if (field === 'EventTypeMoniker' && isRecord(v) && typeof v.Namespace === 'string' && typeof v.Nickname === 'string') return [v.Namespace, v.Nickname];
  if (field === 'ObjectLinks' && Array.isArray(v)) return v.map(packLink);
  return v;
}

function expandValue(field: string, v: unknown): unknown {
  if (field === 'EventTypeMoniker' && Array.isArray(v)) return { $type: 'MonikerItem', Namespace: v[0], Nickname: v[1] };
  if (field === 'ObjectLinks' && Array.isArray(v)) return v.map(expandLink);
  return v;
}

/** The document as stored: {@link packEventDoc}'s form when it expands back to `doc` exactly, else `doc`. */
export function packEventDoc(doc: Readonly<Record<string, unknown>>, place: EventPlace): Record<string, unknown> {
  if (doc.$type !== DATA_TYPE) return { ...doc };
  const packed: Record<string, unknown> = {};
  for (const [field, fill] of FIELDS) {
    if (!(field in doc) || field === '$type') continue;
    const v = doc[field];
    const filled = fill?.(place);
    if (fill && filled !== undefined && stringifyJson(v) === stringifyJson(filled)) continue;
    packed[field] = packValue(field, v);
  }
  for (const [field, v] of Object.entries(doc)) if (!KNOWN.has(field)) packed[field] = v;
  return stringifyJson(expandEventDoc(packed, place)) === stringifyJson(doc) ? packed : { ...doc };
}

/** The document a stored one stands for (a document with a `$type` was stored as it is). */
export function expandEventDoc(stored: Readonly<Record<string, unknown>>, place: EventPlace): Record<string, unknown> {
  if ('$type' in stored) return stored as Record<string, unknown>;
  const doc: Record<string, unknown> = {};
  for (const [field, fill] of FIELDS) {
    if (field in stored) doc[field] = expandValue(field, stored[field]);
    else if (fill) {
      const v = fill(place);
      if (v !== undefined) doc[field] = v;
    }
  }
  for (const [field, v] of Object.entries(stored)) if (!KNOWN.has(field)) doc[field] = v;
  return doc;
}
