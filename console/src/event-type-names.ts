/**
 * Event type names for display. Events carry only `EventTypeKey` (and the type's moniker), so the
 * console reads the instance's event types once per instance (its apps' and the built-in apps'),
 * and an app's types again when an event names a type it does not know yet (a type added since).
 */
import { computed, signal, effect } from '@preact/signals';
import { api } from './api.ts';
import { instanceKey, session } from './session.ts';

/**
 * The built-in apps every installation has whose types the API lists (docs/access.md): the card
 * read and door commands, and the Mercury driver's results.
 */
const BUILTIN_APPS = ['000000000000000000000011', '000000000000000000000021'];
/** The system app's (object changes, docs/api.md): no stored app, its types are not listed. */
const SYSTEM_APP = '000000000000000000000001';
const SYSTEM_TYPES: ReadonlyArray<readonly [string, string]> = [
  ['000000000000000000000002', 'Object Created'],
  ['000000000000000000000003', 'Object Updated'],
  ['000000000000000000000004', 'Object Deleted'],
];

interface EventTypeInfo {
  readonly Key: string;
  readonly CommonName?: string | null;
  readonly Priority?: number;
  readonly RequiresAcknowledgement?: boolean;
}

/** Event type key → name, for the current instance; a new map on every change (components re-render). */
export const eventTypeNames = signal<ReadonlyMap<string, string>>(new Map());

/** The same, as choices for a filter, sorted by name. */
export const eventTypeChoices = computed(() =>
  [...eventTypeNames.value].map(([key, name]) => ({ key, name })).sort((a, b) => a.name.localeCompare(b.name) || a.key.localeCompare(b.key)),
);

let loadedFor = '';
/** Reads of an app's types under way, by app key (one at a time per app). */
let reading = new Map<string, Promise<void>>();
/** Type keys an app was read again for: an unknown key costs one read, not one per event. */
let tried = new Set<string>();

/**
 * Reads an app's types. `href` is the app's own (an app listed in a child instance may live in an
 * instance above it, where its types are); the built-in apps answer under any instance.
 */
function readApp(instance: string, appKey: string, href = `/api/f/${instance}/apps/${appKey}`): Promise<void> {
  const now = reading.get(appKey);
  if (now) return now;
  const p = readTypes(instance, href).finally(() => reading.delete(appKey));
  reading.set(appKey, p);
  return p;
}

async function readTypes(instance: string, appHref: string): Promise<void> {
  const types = await api<EventTypeInfo[]>(`${appHref}/eventtypes`, { query: { pageSize: 1000 } }).catch(() => []);
  if (instance !== loadedFor || types.length === 0) return;
  const next = new Map(eventTypeNames.value);
  for (const t of types) if (t.Key && t.CommonName) next.set(t.Key.toLowerCase(), t.CommonName);
  eventTypeNames.value = next;
}

/**
 * An app an event names that the instance's list did not hold: an app in a folder, or in an
 * instance above (the events of a child instance may come from its parent's apps). It is found by
 * its key in everything the user may see (the search from their own instance); one they may not
 * see keeps the moniker's name.
 */
async function readUnknownApp(instance: string, appKey: string): Promise<void> {
  if (BUILTIN_APPS.includes(appKey)) return readApp(instance, appKey);
  const scope = session.value?.instanceKey;
  if (!scope) return;
  const found = await api<Array<{ Href?: string }>>(`/api/f/${scope}/search`, { method: 'POST', body: { _t: 'App', Key: appKey }, query: { pageSize: 1 } }).catch(() => []);
  const href = found[0]?.Href;
  if (href) await readApp(instance, appKey, href);
}

async function readAll(instance: string): Promise<void> {
  const apps = await api<Array<{ Key: string; Href?: string }>>(`/api/f/${instance}/apps`, { query: { pageSize: 1000 } }).catch(() => []);
  await Promise.all([...BUILTIN_APPS.map((k) => readApp(instance, k)), ...apps.map((a) => readApp(instance, a.Key.toLowerCase(), a.Href))]);
}

/** Reads the current instance's event types whenever someone signs in or the instance changes. */
export function startEventTypeNames(): void {
  effect(() => {
    const instance = session.value ? instanceKey.value : '';
    if (instance === loadedFor) return;
    loadedFor = instance;
    reading = new Map();
    tried = new Set();
    eventTypeNames.value = new Map(SYSTEM_TYPES);
    if (instance) void readAll(instance);
  });
}

/**
 * The name of an event's type: the type's CommonName when known, else (while it is being read)
 * the moniker's Nickname or the short message.
 */
export function eventTypeName(e: { readonly EventTypeKey?: unknown; readonly AppKey?: unknown; readonly EventTypeMoniker?: unknown; readonly MessageShort?: unknown }): string {
  const key = typeof e.EventTypeKey === 'string' ? e.EventTypeKey.toLowerCase() : '';
  const known = eventTypeNames.value.get(key);
  if (known) return known;
  if (key && loadedFor && typeof e.AppKey === 'string' && e.AppKey.toLowerCase() !== SYSTEM_APP && !tried.has(key)) {
    tried.add(key);
    const instance = loadedFor;
    const app = e.AppKey.toLowerCase();
    // Not during the render that asked: the answer changes a signal.
    queueMicrotask(() => void readUnknownApp(instance, app));
  }
  const m = e.EventTypeMoniker as { Nickname?: unknown } | null | undefined;
  if (m && typeof m.Nickname === 'string' && m.Nickname) return m.Nickname;
  return typeof e.MessageShort === 'string' && e.MessageShort ? e.MessageShort : key || 'Event';
}
