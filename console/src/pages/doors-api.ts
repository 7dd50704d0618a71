/**
 * What the Doors, Access levels and Schedules pages read from Gatehouse's public API: the shapes of
 * its answers they use (docs/doors.md, docs/access.md) and the calls they share. Objects are found
 * with the instance's search (`_t` a type), which covers a folder and everything below it, where a
 * collection's list would cover one folder only.
 */
import { api } from '../api.ts';
import { hrefOf, navigate } from '../router.ts';

/** A named reference as answers give one (`{ Key, CommonName, Href }`). */
export interface Ref {
  readonly Key: string;
  readonly CommonName?: string | null;
  readonly Href?: string;
}

/** The fields of a stored object every page here reads. */
export interface BaseObject {
  readonly Key: string;
  readonly CommonName?: string | null;
  readonly InFolderKey?: string;
  readonly ConcurrencyVersion?: number;
  readonly [field: string]: unknown;
}

/** A lockdown as answers name it: where it started (null when an instance above started it), when, by whom, why. */
interface Lockdown {
  readonly Folder: Ref | null;
  readonly StartedOn: string;
  readonly StartedBy: string;
  readonly Reason: string;
}

/** `LockdownStatusInfo` of `GET/POST/DELETE /api/f/<folder>/lockdown`. */
export interface LockdownStatus {
  readonly Folder: Ref;
  readonly InEffect: boolean;
  readonly Lockdown: Lockdown | null;
}

/** One reader of a door's status: its normal mode, the mode a decision sees now, and until when a set mode lasts. */
export interface ReaderStatus {
  readonly Reader: Ref;
  readonly AccessMethod: number;
  readonly EffectiveAccessMethod: number;
  readonly Until: string | null;
}

/** `DoorStatusInfo` of `GET …/doors/<key>/status` (and of an unlock or a mode change). */
export interface DoorStatus {
  readonly Door: Ref | null;
  readonly Readers: readonly ReaderStatus[];
  readonly LockedDown: Lockdown | null;
  readonly UnlockedUntil: string | null;
  readonly LastEvent: Ref | null;
}

/** One holder of `GET …/readers/<key>/whocanpass`. */
export interface Passer {
  readonly Person: Ref;
  readonly Card: { readonly Key: string; readonly DisplayCardNumber?: string | null } | null;
  readonly AccessLevel: Ref | null;
  readonly Schedule: Ref | null;
}

/** The reader modes the API sets (`PUT …/readers/<key>/mode`), and how the pages name them. */
export const ACCESS_METHODS: ReadonlyArray<{ readonly value: number; readonly label: string }> = [
  { value: 0, label: 'Card only' },
  { value: 2, label: 'Card and PIN' },
  { value: 5, label: 'Unlocked (free passage)' },
  { value: 6, label: 'Locked down' },
];

/** The name of an `AccessMethod`. */
export function accessMethodName(method: number): string {
  return ACCESS_METHODS.find((m) => m.value === method)?.label ?? `Access method ${method}`;
}

/** The most a search page holds (the API's maximum page size). */
const MAX_PAGE = 1000;

/** One page of the objects of a type in a folder and below it, in creation order. */
export function searchObjects<T extends BaseObject>(folderKey: string, type: string, page = 0, pageSize = MAX_PAGE): Promise<T[]> {
  return api<T[]>(`/api/f/${encodeURIComponent(folderKey)}/search`, { method: 'POST', body: { _t: type }, query: { page, pageSize } });
}

/** A name to show for an object or a reference. */
export const nameOf = (o: { readonly CommonName?: string | null; readonly Key: string } | null | undefined): string => (o ? o.CommonName || o.Key : '');

/** Sorted by name, the way lists and selects show objects. */
export const byName = <T extends { readonly CommonName?: string | null; readonly Key: string }>(list: readonly T[]): T[] =>
  [...list].sort((a, b) => nameOf(a).localeCompare(nameOf(b)));

/** The object of a type and key in a folder or below it (its search by `Key` is one read by key), or undefined. */
export async function findObject<T extends BaseObject>(folderKey: string, type: string, key: string): Promise<T | undefined> {
  const found = await api<T[]>(`/api/f/${encodeURIComponent(folderKey)}/search`, { method: 'POST', body: { _t: type, Key: key.toLowerCase() }, query: { pageSize: 1 } });
  return found[0];
}

/** Where an object is read and replaced: its own `Href`, else its collection in its folder. */
export const hrefOfObject = (o: BaseObject, collection: string, instance: string): string =>
  typeof o.Href === 'string' && o.Href.startsWith('/api/f/') ? o.Href : `/api/f/${encodeURIComponent(o.InFolderKey ?? instance)}/${collection}/${encodeURIComponent(o.Key)}`;

/**
 * Saves an object an editor page holds: a new one is created in the instance (and its page opened
 * in place of the "new" one), an existing one replaced whole, as read with `fields` over it (its
 * `ConcurrencyVersion` goes back with it: someone else's save in between is refused, not lost).
 * Answers whether it replaced an object (the page then reads it again).
 */
export async function saveObject(o: {
  readonly instance: string;
  readonly collection: string;
  readonly typeName: string;
  readonly page: string;
  readonly existing: BaseObject | null | undefined;
  readonly fields: Readonly<Record<string, unknown>>;
}): Promise<boolean> {
  if (!o.existing) {
    const made = await api<BaseObject>(`/api/f/${encodeURIComponent(o.instance)}/${o.collection}`, { method: 'POST', body: { $type: o.typeName, ...o.fields } });
    navigate(hrefOf(o.page, made.Key), true);
    return false;
  }
  await api(hrefOfObject(o.existing, o.collection, o.instance), { method: 'PUT', body: { ...o.existing, ...o.fields } });
  return true;
}
