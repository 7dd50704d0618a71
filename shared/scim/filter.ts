/**
 * The filters a SCIM listing answers (RFC 7644 §3.4.2.2), parsed by `scim2-parse-filter`: one
 * equality on an attribute the service can look up by key or index, which is what provisioning
 * clients send (Entra ID: `userName eq`, `externalId eq`, `displayName eq` for groups; Okta:
 * `userName eq`). Any other filter is a 400 `invalidFilter`: answering it would mean reading
 * every object of the instance, which no call here does.
 */
import { parse, type Filter } from 'scim2-parse-filter';
import { invalidFilter } from './scim-errors.ts';

/** The attributes a filter may compare, per resource type (lower case: attribute names are case-insensitive). */
const FILTERABLE = {
  User: ['id', 'username', 'externalid', 'displayname'],
  Group: ['id', 'displayname'],
} as const;

type Filterable = 'id' | 'userName' | 'externalId' | 'displayName';

const CANONICAL: Readonly<Record<string, Filterable>> = { id: 'id', username: 'userName', externalid: 'externalId', displayname: 'displayName' };

export interface Equality {
  readonly attribute: Filterable;
  readonly value: string;
}

/** The equality a filter asks for; a 400 invalidFilter for a filter that is malformed or not one of those answered. */
export function parseScimFilter(text: string, resource: keyof typeof FILTERABLE): Equality {
  let f: Filter;
  try {
    f = parse(text);
  } catch {
    throw invalidFilter('The filter is not a valid SCIM filter expression.');
  }
  // The resource's schema may prefix the attribute (`urn:...:User:userName`).
  const path = 'attrPath' in f && typeof f.attrPath === 'string' ? f.attrPath.replace(/^urn:.*:/i, '').toLowerCase() : '';
  if (f.op !== 'eq' || !(FILTERABLE[resource] as readonly string[]).includes(path)) {
    throw invalidFilter(`Filters on ${resource}s are one equality on ${FILTERABLE[resource].map((a) => CANONICAL[a]).join(', ')}.`);
  }
  const value = (f as { compValue: unknown }).compValue;
  if (typeof value !== 'string') throw invalidFilter('The filter compares with a string.');
  return { attribute: CANONICAL[path]!, value };
}
