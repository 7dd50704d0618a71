/**
 * The People pages' reads: a person (and a list of people) read without losing a 64-bit card
 * number's digits, and the names of event types. The conversions they use are in people-data.ts,
 * which needs no browser.
 */
import { api, call, type CallOptions } from '../api.ts';
import { parseLossless, type Person } from './people-data.ts';

/** A GET whose answer may carry 64-bit numbers the page sends back (a person and its cards). */
export async function readExact<T>(path: string, opts: CallOptions = {}): Promise<T> {
  const res = await call(path, opts);
  const text = await res.text();
  return (text ? parseLossless(text) : undefined) as T;
}

export const peoplePath = (instance: string): string => `/api/f/${instance}/people`;

/** A person, exactly as stored. */
export const readPerson = (href: string): Promise<Person> => readExact<Person>(href);

/**
 * The system app's event types (every object change, docs/api.md "Events"): fixed, documented
 * keys that are not stored objects, so no instance below the root can list them.
 */
const SYSTEM_APP = '000000000000000000000001';
const SYSTEM_TYPES: ReadonlyMap<string, string> = new Map([
  ['000000000000000000000002', 'Object created'],
  ['000000000000000000000003', 'Object updated'],
  ['000000000000000000000004', 'Object deleted'],
]);

const appTypeNames = new Map<string, Promise<ReadonlyMap<string, string>>>([[SYSTEM_APP, Promise.resolve(SYSTEM_TYPES)]]);

/**
 * An event type's name, or undefined when it cannot be read. Each app's types are listed once per
 * page load (the built-in apps' types are listed, not stored one by one, so a list reads them all).
 */
export async function eventTypeName(instance: string, appKey: string, typeKey: string): Promise<string | undefined> {
  let names = appTypeNames.get(appKey);
  if (!names) {
    names = api<Array<{ Key?: string; CommonName?: string }>>(`/api/f/${instance}/apps/${encodeURIComponent(appKey)}/eventtypes`, { query: { pageSize: 1000 } }).then(
      (types) => new Map((types ?? []).filter((t) => t.Key && t.CommonName).map((t) => [t.Key!, t.CommonName!])),
      () => new Map(),
    );
    appTypeNames.set(appKey, names);
  }
  return (await names).get(typeKey);
}
