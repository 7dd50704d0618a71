/**
 * Instances and users as the token service sees them: found by name (through their unique
 * claims) and read as stored objects; the admin command and the first-start seeding create them
 * (`provisioning.ts`).
 * The documents follow the object conventions of the `instances` and `users` collections (bare
 * `$type`, no Key/Href/Links in `Doc`; the password lives only in the user's AUTH item).
 */
import type { Db } from '../db/client.ts';
import { claimOwner, getObject, getObjects, ownInstance } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import type { Role } from './principal.ts';
import { instanceNameClaim, userNameClaim } from '../model/claims.ts';

export type SecurityLevel = 'Low' | 'Medium' | 'High';
export const SECURITY_LEVELS: readonly SecurityLevel[] = ['Low', 'Medium', 'High'];
export const ROLES: readonly Role[] = ['Administrator', 'Operator', 'ReadOnly', 'Controller'];

export const INSTANCE_COLLECTION = 'instances';
export const INSTANCE_TYPE = 'InstanceInfo';
export const USER_COLLECTION = 'users';
export const USER_TYPE = 'UserInfo';

export const isInstance = (o: StoredObject | undefined): o is StoredObject => o?.type === INSTANCE_TYPE;
export const isUser = (o: StoredObject | undefined): o is StoredObject => o?.type === USER_TYPE;

/** An instance's security level; `Medium` when unset or unknown. */
export function securityLevelOf(instance: StoredObject): SecurityLevel {
  const v = instance.doc.SecurityLevel;
  return SECURITY_LEVELS.includes(v as SecurityLevel) ? (v as SecurityLevel) : 'Medium';
}

/** A user's role; `Operator` when unset, `ReadOnly` when the stored value is not a role. */
export function roleOf(user: StoredObject): Role {
  const v = user.doc.Role;
  if (v === undefined || v === null || v === '') return 'Operator';
  return ROLES.includes(v as Role) ? (v as Role) : 'ReadOnly';
}

export const isDisabled = (o: StoredObject): boolean => o.doc.IsDisabled === true;
export const nameOf = (o: StoredObject): string => (typeof o.doc.CommonName === 'string' ? o.doc.CommonName : '');

/** `o` when it is the instance named `name` (case-sensitive: the name claim is). */
export const instanceNamed = (o: StoredObject | undefined, name: string): StoredObject | undefined =>
  isInstance(o) && nameOf(o) === name ? o : undefined;

/** `o` when it is the user named `name` of the instance `instanceKey`. */
export const userNamed = (o: StoredObject | undefined, instanceKey: string, name: string): StoredObject | undefined =>
  isUser(o) && ownInstance(o) === instanceKey && nameOf(o) === name ? o : undefined;

/** The instance named `name` (case-sensitive), or undefined. */
export async function findInstanceByName(db: Db, name: string): Promise<StoredObject | undefined> {
  if (!name) return undefined;
  const key = await claimOwner(db, instanceNameClaim(name), true);
  if (!key) return undefined;
  return instanceNamed(await getObject(db, key, true), name);
}

/** The user named `name` in the instance `instanceKey` (case-sensitive), or undefined. */
export async function findUserByName(db: Db, instanceKey: string, name: string): Promise<StoredObject | undefined> {
  if (!name) return undefined;
  const key = await claimOwner(db, userNameClaim(instanceKey, name), true);
  if (!key) return undefined;
  return userNamed(await getObject(db, key, true), instanceKey, name);
}

/** The keys of the instances above `instance`, root first. */
export const ancestorKeys = (instance: StoredObject): string[] => instance.instances.filter((k) => k !== instance.key);

/** The instances above `instance`, nearest first, from objects already read. */
export function ancestorsIn(instance: StoredObject, read: (key: string) => StoredObject | undefined): StoredObject[] {
  return ancestorKeys(instance)
    .map(read)
    .filter(isInstance)
    .reverse();
}

/** The instances above `instance`, nearest first (one BatchGetItem). */
export async function ancestorsOf(db: Db, instance: StoredObject): Promise<StoredObject[]> {
  const above = ancestorKeys(instance);
  if (above.length === 0) return [];
  const found = new Map((await getObjects(db, above)).map((o) => [o.key, o]));
  return ancestorsIn(instance, (k) => found.get(k));
}
