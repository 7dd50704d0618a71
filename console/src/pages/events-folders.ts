/**
 * The folders the events list filters by and names its events' folders with (event types are named
 * by ../event-type-names.ts).
 */
import { api } from '../api.ts';

export interface FolderName {
  readonly key: string;
  readonly name: string;
}

interface Named {
  readonly Key: string;
  readonly CommonName?: string;
}

/** Every page of a list, up to `cap` items (pages of 1000, the API's largest). */
async function allOf<T>(path: string, cap: number): Promise<T[]> {
  const out: T[] = [];
  for (let page = 0; out.length < cap; page++) {
    const items = await api<T[]>(path, { query: { page, pageSize: 1000 } });
    out.push(...items);
    if (items.length < 1000) break;
  }
  return out.slice(0, cap);
}

/**
 * The instance's folders, breadth first, each named by its path of names: at most `cap` of them and
 * `lists` folder listings (a deep tree shows its upper levels; the list is a filter's choices).
 */
export async function foldersOf(instanceKey: string, cap = 500, lists = 50): Promise<FolderName[]> {
  const out: FolderName[] = [];
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
