/**
 * Renders a stored object for output: `$type` with the configured namespace on the object and on
 * every nested element that has one (elements the spec types get theirs), and the read-only
 * fields the server owns: Key, Href, InFolderKey, InFolderHref, ConcurrencyVersion, Links.
 * Documents keep bare type names; only output carries the namespace.
 *
 * Every Href emitted here resolves: objects at `/api/f/<folder>/<collection>/<key>`, folders and
 * instances at `/api/f/<key>`; link anchors are relative to the object's Href.
 */
import type { StoredObject } from './stored-object.ts';
import { docWithCardKeys } from './card-assignments.ts';
import { COLLECTIONS } from './collections.ts';
import { ELEMENT_TYPES } from './limits.ts';
import { typeNameOf, typeTag } from './type-tags.ts';
import { STANDARD_LINKS, type LinkDef } from './standard-links.ts';

/** Collections whose objects are folders (an instance is a folder too): their Href is `/api/f/<key>`. */
const FOLDER_COLLECTIONS: readonly string[] = ['folders', 'instances'];

export const isFolderLike = (o: Pick<StoredObject, 'collection'>): boolean => FOLDER_COLLECTIONS.includes(o.collection);

/** Href of a folder or an instance. */
export const folderHref = (key: string): string => `/api/f/${key}`;

/** Href of any stored object. */
export function objectHref(o: Pick<StoredObject, 'key' | 'collection' | 'folder'>): string {
  return isFolderLike(o) ? folderHref(o.key) : `/api/f/${o.folder}/${o.collection}/${o.key}`;
}

/** Fields the server sets whatever the client sends; never stored in the document. */
export const READ_ONLY_FIELDS: readonly string[] = ['Key', 'Href', 'Links', 'ConcurrencyVersion', 'InFolderKey', 'InFolderHref'];

/**
 * Fields accepted on input and never stored in the document nor returned: a user's `Password`
 * (hashed), an identity provider's `ClientSecret` (sealed in an item of its own).
 */
export const WRITE_ONLY_FIELDS: readonly string[] = ['Password', 'ClientSecret'];

/**
 * Fields of nested elements that are stored but never returned, by element type: a card's
 * `PinCode` (the decision engine reads it; no answer, search match, event or webhook shows it).
 * Every element of a typed array is rendered by {@link renderElement}, so this is the one filter.
 */
const UNREAD_ELEMENT_FIELDS: Readonly<Record<string, readonly string[]>> = { CardAssignmentInfo: ['PinCode'] };

export { type LinkDef } from './standard-links.ts';

/** Display names of the collections (link Relation and Anchor Text). */
const COLLECTION_LABELS: Readonly<Record<string, readonly [relation: string, text: string]>> = {
  people: ['People', 'People'],
  inputs: ['Inputs', 'Inputs'],
  outputs: ['Outputs', 'Outputs'],
  readers: ['Readers', 'Readers'],
  controllers: ['Controllers', 'Controllers'],
  inputscanners: ['InputScanners', 'Input Scanners'],
  doors: ['Doors', 'Doors'],
  servicecontainers: ['ServiceContainers', 'Service Containers'],
  schedules: ['Schedules', 'Schedules'],
  holidays: ['Holidays', 'Holidays'],
  accesslevels: ['AccessLevels', 'Access Levels'],
  badgetypes: ['BadgeTypes', 'Badge Types'],
  cardformats: ['CardFormats', 'Card Formats'],
  apps: ['Apps', 'Apps'],
  alarmdefinitions: ['AlarmDefinitions', 'Alarm Definitions'],
  folders: ['Folders', 'Folders'],
  instances: ['Instances', 'Child Instances'],
  users: ['Users', 'Users'],
  identityproviders: ['IdentityProviders', 'Identity Providers'],
};

/** Collections that only an instance holds (users log in to an instance; instances nest in instances). */
const INSTANCE_ONLY_COLLECTIONS: readonly string[] = ['instances', 'users', 'identityproviders'];

/** The collection links of a folder-like object: an instance links to every collection, a folder to those it can hold. */
export function collectionLinkDefs(o: Pick<StoredObject, 'collection'>): LinkDef[] {
  if (!isFolderLike(o)) return [];
  return COLLECTIONS.filter((c) => o.collection === 'instances' || !INSTANCE_ONLY_COLLECTIONS.includes(c.name)).map((c) => {
    const [relation, text] = COLLECTION_LABELS[c.name] ?? [c.name, c.name];
    return { relation, href: c.name, text };
  });
}

/**
 * Further links by collection: the events of a folder or an instance, the event types of an app
 * and those an alarm definition references (served by the events issue's routes).
 */
const EXTRA_LINKS: Readonly<Record<string, readonly LinkDef[]>> = {
  instances: [
    { relation: 'Events', href: 'events', text: 'Events' },
    // A Gatehouse extension: the instance's webhook subscriptions.
    { relation: 'Webhooks', href: 'webhooks', text: 'Webhooks' },
  ],
  folders: [{ relation: 'Events', href: 'events', text: 'Events' }],
  apps: [{ relation: 'EventTypes', href: 'eventtypes', text: 'Event Types' }],
  alarmdefinitions: [{ relation: 'EventTypes', href: 'collections/eventtypes', text: 'Event Types' }],
};

function renderLink(l: LinkDef, ns: string): Record<string, unknown> {
  return {
    $type: typeTag(ns, 'Link'),
    Relation: l.relation,
    Anchor: { $type: typeTag(ns, 'Anchor'), Href: l.href, Text: l.text },
  };
}

/** The Links of an object. */
export function linksOf(o: Pick<StoredObject, 'collection'>, ns: string): Record<string, unknown>[] {
  return [...STANDARD_LINKS, ...collectionLinkDefs(o), ...(EXTRA_LINKS[o.collection] ?? [])].map((l) => renderLink(l, ns));
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Namespaces every `$type` in a value (bare or foreign-namespaced names alike). */
export function renderValue(v: unknown, ns: string): unknown {
  if (Array.isArray(v)) return v.map((x) => renderValue(x, ns));
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$type') {
      const name = typeNameOf(x);
      out.$type = name ? typeTag(ns, name) : x;
    } else {
      out[k] = renderValue(x, ns);
    }
  }
  return out;
}

/** Renders an element of a typed array (`Monikers`, `Notes`, ...), giving it its `$type` when it has none. */
export function renderElement(typeName: string, v: unknown, ns: string): unknown {
  if (!isPlainObject(v)) return renderValue(v, ns);
  const unread = UNREAD_ELEMENT_FIELDS[typeName];
  const shown = unread ? Object.fromEntries(Object.entries(v).filter(([k]) => !unread.includes(k))) : v;
  const rendered = renderValue(shown, ns) as Record<string, unknown>;
  return rendered.$type === undefined ? { $type: typeTag(ns, typeName), ...rendered } : rendered;
}

/** Renders a typed array field of a document (`[]` when absent). */
export function renderElements(field: string, value: unknown, ns: string): unknown[] {
  const typeName = ELEMENT_TYPES[field];
  const list = Array.isArray(value) ? value : [];
  return list.map((x) => (typeName ? renderElement(typeName, x, ns) : renderValue(x, ns)));
}

/**
 * The standard links served from an object's own document (`meta`, `monikers`, `commonname`,
 * `notes`), the same for objects, events and event types; undefined for any other link.
 */
export function documentLink(doc: Readonly<Record<string, unknown>>, link: string, ns: string): unknown {
  switch (link) {
    case 'meta':
      return renderElements('Metadata', doc.Metadata, ns);
    case 'monikers':
      return renderElements('Monikers', doc.Monikers, ns);
    case 'commonname':
      return typeof doc.CommonName === 'string' ? doc.CommonName : '';
    case 'notes':
      return renderElements('Notes', doc.Notes, ns);
    default:
      return undefined;
  }
}

/** Renders a stored object as the API returns it. */
export function renderObject(o: StoredObject, ns: string): Record<string, unknown> {
  const out: Record<string, unknown> = { $type: typeTag(ns, o.type || typeNameOf(o.doc.$type) || 'BaseInfo') };
  // A person stored before cards had keys reads with the keys its next write stores (see card-assignments.ts).
  const doc = o.collection === 'people' ? docWithCardKeys(o.key, o.doc) : o.doc;
  for (const [k, v] of Object.entries(doc)) {
    if (k === '$type' || READ_ONLY_FIELDS.includes(k) || WRITE_ONLY_FIELDS.includes(k)) continue;
    out[k] = k in ELEMENT_TYPES ? renderElements(k, v, ns) : renderValue(v, ns);
  }
  out.Key = o.key;
  out.Href = objectHref(o);
  out.InFolderKey = o.folder || null;
  out.InFolderHref = o.folder ? folderHref(o.folder) : null;
  out.ConcurrencyVersion = o.version;
  out.Links = linksOf(o, ns);
  if (!('Notes' in out)) out.Notes = [];
  return out;
}

/**
 * Hides the folder of an object whose folder the caller cannot see: the caller's own instance
 * is held by a parent outside the caller's scope, and its key must not be shown.
 */
export function hideOuterFolder(out: Record<string, unknown>, o: Pick<StoredObject, 'folder' | 'path'>, callerInstance: string): Record<string, unknown> {
  const folderPath = o.path.slice(0, -1);
  if (o.folder && o.folder !== callerInstance && !folderPath.includes(callerInstance)) {
    out.InFolderKey = null;
    out.InFolderHref = null;
  }
  return out;
}
