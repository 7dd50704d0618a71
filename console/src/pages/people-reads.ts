/**
 * The People pages' reads: a person (and a list of people) read without losing a 64-bit card
 * number's digits. The conversions they use are in people-data.ts,
 * which needs no browser.
 */
import { call, type CallOptions } from '../api.ts';
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
