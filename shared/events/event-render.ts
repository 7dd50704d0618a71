/**
 * How events and event types look on the wire. Stored documents keep bare `$type` names; output
 * carries the configured namespace. An EventMessageData has exactly the spec's fields and `$type`;
 * an event type is rendered like any object, with its Href under its app.
 */
import type { EventPointer } from '../db/event-reads.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { eventHref } from '../db/event-doc.ts';
import { linksOf, objectHref, renderObject, renderValue } from '../model/object-render.ts';
import { typeTag } from '../model/type-tags.ts';

export const EVENT_DATA_TYPE = 'EventMessageData';
const SUMMARY_TYPE = 'EventMessageSummaryItem';
export const ACK_TYPE = 'AlarmAcknowledgementItem';

export { eventHref } from '../db/event-doc.ts';

/** The app an event type belongs to, and the folder that holds the app (from the type's path). */
export function appOf(eventType: Pick<StoredObject, 'folder' | 'path'>): { appKey: string; appFolder: string } {
  return { appKey: eventType.folder, appFolder: eventType.path[eventType.path.length - 2] ?? '' };
}

/** `/api/f/<app folder>/apps/<app key>/eventtypes/<key>`. */
export function eventTypeHref(o: Pick<StoredObject, 'key' | 'folder' | 'path'>): string {
  const { appKey, appFolder } = appOf(o);
  return `/api/f/${appFolder}/apps/${appKey}/eventtypes/${o.key}`;
}

/**
 * The Href an event's ObjectLinkItem gives a stored object: the object's own Href, the one its
 * GET answers (a reader posted as `/api/f/<folder>/peripherals/<key>` is stored as
 * `/api/f/<folder>/readers/<key>`, so clients can match the two); event types under their app.
 */
export function canonicalHref(o: Pick<StoredObject, 'key' | 'collection' | 'folder' | 'path'>): string {
  return o.collection === 'eventtypes' ? eventTypeHref(o) : objectHref(o);
}

/** The standard links as stored in an event document (bare `$type`s). */
export { storedEventLinks as storedLinks } from '../db/event-doc.ts';

/**
 * An event as the API returns it: the stored EventMessageData with namespaced `$type`s, and the
 * posting's names integrations read back: `EventTypeMoniker` (null on events stored before it was
 * kept) and `RelatedObjects` (the same items as `ObjectLinks`; derived, not stored twice).
 */
export function renderEvent(o: StoredObject, ns: string): Record<string, unknown> {
  const out = renderValue(o.doc, ns) as Record<string, unknown>;
  out.$type = typeTag(ns, EVENT_DATA_TYPE);
  out.Key = o.key;
  out.Href = eventHref(o.folder, o.key);
  out.InFolderKey = o.folder;
  out.Links = linksOf(o, ns);
  out.EventTypeMoniker ??= null;
  out.RelatedObjects = Array.isArray(out.ObjectLinks) ? out.ObjectLinks.map((l) => ({ ...(l as Record<string, unknown>) })) : [];
  return out;
}

/** The fields {@link renderEvent} sets or derives rather than renders from the stored document. */
const DERIVED_FIELDS = ['$type', 'Key', 'Href', 'InFolderKey', 'Links', 'EventTypeMoniker', 'RelatedObjects'];

/**
 * The fields `fields` of {@link renderEvent}'s answer (those the event has), rendering only them
 * when none is derived: aggregations read a few fields of many events.
 */
export function renderEventFields(o: StoredObject, ns: string, fields: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (DERIVED_FIELDS.some((f) => fields.has(f))) {
    const full = renderEvent(o, ns);
    for (const f of fields) if (f in full) out[f] = full[f];
    return out;
  }
  for (const f of fields) if (f in o.doc) out[f] = renderValue(o.doc[f], ns);
  return out;
}

/** An event type as the API returns it. */
export function renderEventType(o: StoredObject, ns: string): Record<string, unknown> {
  const out = renderObject(o, ns);
  const { appKey, appFolder } = appOf(o);
  out.Href = eventTypeHref(o);
  out.InFolderKey = appKey;
  out.InFolderHref = `/api/f/${appFolder}/apps/${appKey}`;
  return out;
}

/** Any related object as the API returns it. */
export function renderAny(o: StoredObject, ns: string): Record<string, unknown> {
  if (o.collection === 'events') return renderEvent(o, ns);
  if (o.collection === 'eventtypes') return renderEventType(o, ns);
  return renderObject(o, ns);
}

/** The EventMessageSummaryItem of an object's last event. */
export function renderSummary(p: EventPointer, ns: string): Record<string, unknown> {
  return {
    $type: typeTag(ns, SUMMARY_TYPE),
    ObjectKey: p.ObjectKey,
    EventKey: p.EventKey,
    EventTypeKey: p.EventTypeKey,
    AppKey: p.AppKey,
    OccurredOn: p.OccurredOn,
    PublishedOn: p.PublishedOn,
    Priority: p.Priority,
    MessageShort: p.MessageShort ?? null,
  };
}
