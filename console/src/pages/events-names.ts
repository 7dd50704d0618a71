/**
 * Names the events list shows instead of keys: the instance's event types (its apps' types and the
 * built-in apps' ones, which every instance sees under their fixed keys) and its folders.
 */
import { api } from '../api.ts';

export interface EventTypeName {
  readonly key: string;
  readonly name: string;
}

interface Named {
  readonly Key: string;
  readonly CommonName?: string;
}

/** The built-in apps every instance sees (docs/api.md "Events"): not in the instance's apps list. */
const BUILTIN_APP_KEYS = ['000000000000000000000011', '000000000000000000000021'];

/**
 * The system app's object-change types (docs/api.md "Events"): the audit trail's events. The app is
 * not listed anywhere, so its three types are named here.
 */
const SYSTEM_TYPES: readonly EventTypeName[] = [
  { key: '000000000000000000000002', name: 'Object created' },
  { key: '000000000000000000000003', name: 'Object updated' },
  { key: '000000000000000000000004', name: 'Object deleted' },
];

/** Every page of a list, up to `cap` items (pages of 1000, the API's largest). */
async function allOf<T>(path: string, cap = 5000): Promise<T[]> {
  const out: T[] = [];
  for (let page = 0; out.length < cap; page++) {
    const items = await api<T[]>(path, { query: { page, pageSize: 1000 } });
    out.push(...items);
    if (items.length < 1000) break;
  }
  return out.slice(0, cap);
}

/** The event types an instance's events may name, sorted by name. */
export async function eventTypesOf(instanceKey: string): Promise<EventTypeName[]> {
  const apps = await allOf<Named>(`/api/f/${instanceKey}/apps`);
  const appKeys = [...BUILTIN_APP_KEYS, ...apps.map((a) => a.Key)];
  const lists = await Promise.all(
    appKeys.map((app) =>
      allOf<Named>(`/api/f/${instanceKey}/apps/${app}/eventtypes`).catch(() => [] as Named[]),
    ),
  );
  const types = [...SYSTEM_TYPES, ...lists.flat().map((t) => ({ key: t.Key, name: t.CommonName || t.Key }))];
  return types.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The instance's folders, breadth first, each named by its path of names: at most `cap` of them and
 * `lists` folder listings (a deep tree shows its upper levels; the list is a filter's choices).
 */
export async function foldersOf(instanceKey: string, cap = 500, lists = 50): Promise<EventTypeName[]> {
  const out: EventTypeName[] = [];
  const queue: Array<{ key: string; path: string }> = [{ key: instanceKey, path: '' }];
  for (let n = 0; queue.length > 0 && out.length < cap && n < lists; n++) {
    const { key, path } = queue.shift()!;
    const children = await allOf<Named>(`/api/f/${key}/folders`, cap - out.length);
    for (const f of children) {
      const name = `${path}${f.CommonName || f.Key}`;
      out.push({ key: f.Key, name });
      queue.push({ key: f.Key, path: `${name} / ` });
    }
  }
  return out;
}
