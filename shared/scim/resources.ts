/**
 * What the Users and Groups calls share: their answers (labelled for the instance's usage), the
 * paging parameters, the objects of the instance they read by key, and the one way they write an
 * object: a replace through the object layer (`replaceAt`), so a SCIM change is the same change
 * as a `PUT` of the object (its claims in its transaction, audited from the stream, live, in
 * webhooks), made on the version read and read again when another writer got in between.
 */
import { ApiError } from '../errors.ts';
import { getObject, ownInstance } from '../db/objects-repo.ts';
import { isObjectKey } from '../db/item-keys.ts';
import type { ApiRequest, ApiResponse } from '../http/operation-contract.ts';
import type { StoredObject } from '../model/stored-object.ts';
import type { Locator } from '../objects/tenant-scope.ts';
import { replaceAt } from '../objects/collection.ts';
import type { Ctx } from '../objects/domain-context.ts';
import type { Doc } from '../objects/validate.ts';
import type { ScimCall } from './call.ts';
import { MAX_SCIM_COUNT } from './discovery.ts';
import { invalidValue, scimNotFound } from './scim-errors.ts';

/** A SCIM answer, metered as a call of the token's instance. */
export const answer = (call: ScimCall, status: number, body?: unknown, headers?: Record<string, string>): ApiResponse => ({
  status,
  ...(body !== undefined ? { body } : {}),
  ...(headers ? { headers } : {}),
  tenant: call.instance.key,
});

/** `startIndex` (1-based; below 1 is 1, RFC 7644 §3.4.2.4) and `count` (default and most {@link MAX_SCIM_COUNT}). */
export function scimPaging(req: ApiRequest): { startIndex: number; count: number } {
  const int = (name: string, def: number): number => {
    const v = req.query[name]?.[0];
    if (v === undefined || v === '') return def;
    if (!/^-?\d+$/.test(v)) throw invalidValue(`${name} is an integer.`);
    return Number(v);
  };
  return { startIndex: Math.max(1, int('startIndex', 1)), count: Math.min(MAX_SCIM_COUNT, Math.max(0, int('count', MAX_SCIM_COUNT))) };
}

/** When the object was created: its key is an ObjectId, whose first 4 bytes are the creation's seconds. */
const createdOn = (o: StoredObject): string => new Date(parseInt(o.key.slice(0, 8), 16) * 1000).toISOString();

/** The object of `collection` with key `id` in the call's instance (any folder of it), or undefined. */
export async function objectOf(call: ScimCall, collection: string, id: string): Promise<StoredObject | undefined> {
  if (!isObjectKey(id)) return undefined;
  const o = await getObject(call.ctx.db, id, true);
  return o && o.collection === collection && ownInstance(o) === call.instance.key ? o : undefined;
}

/** {@link objectOf}, or a SCIM 404 naming `what`. */
export async function requireObject(call: ScimCall, collection: string, id: string, what: string): Promise<StoredObject> {
  const o = await objectOf(call, collection, id);
  if (!o) throw scimNotFound(`${what} ${id}`);
  return o;
}

const locatorOf = (o: StoredObject): Locator => ({ kind: 'member', collection: o.collection, folderKey: o.folder, key: o.key });

const ATTEMPTS = 5;

/**
 * Writes the document `change` makes of the object (undefined: nothing to write) as a replace of
 * the object on the version read; when another writer got in first, reads it again and retries.
 */
export async function rewriteObject(ctx: Ctx, read: StoredObject, change: (cur: StoredObject) => Doc | undefined): Promise<StoredObject> {
  for (let attempt = 1; ; attempt++) {
    const cur = attempt === 1 ? read : await getObject(ctx.db, read.key, true);
    if (!cur) throw scimNotFound(`Resource ${read.key}`);
    const next = change(cur);
    if (next === undefined) return cur;
    // Notes are kept by a replace whatever it carries.
    const { Notes: _notes, ...doc } = next;
    try {
      return (await replaceAt(ctx, locatorOf(cur), { ...doc, ConcurrencyVersion: cur.version })).object;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'ConcurrencyConflict' && attempt < ATTEMPTS) continue;
      throw err;
    }
  }
}

/** The resource's location and version (meta) as RFC 7643 §3.1 shows them. */
export const metaOf = (o: StoredObject, resourceType: 'User' | 'Group', location: string) => ({
  resourceType,
  created: createdOn(o),
  location,
  version: `W/"${o.version}"`,
});
