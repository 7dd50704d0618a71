/**
 * Instances and users as the token service sees them: found by name (through their unique
 * claims), read as stored objects, and created by the admin command and the first-start seeding.
 * The documents follow the object conventions of the `instances` and `users` collections (bare
 * `$type`, no Key/Href/Links in `Doc`; the password lives only in the user's AUTH item).
 */
import { conflict, validationFailed, ConditionFailed } from '../errors.ts';
import type { Db } from '../db/client.ts';
import { authItemPut } from '../db/auth-repo.ts';
import { claimOwner, createObject, failedClaim, getObject, getObjects, ownInstance, replaceObject, type StoredObject } from '../db/objects-repo.ts';
import type { Role } from '../http/types.ts';
import { instanceNameClaim, userNameClaim } from '../model/claims.ts';
import { newKey, placeIn, placeInstance } from '../model/placement.ts';
import { hashPassword } from './passwords.ts';

export type SecurityLevel = 'Low' | 'Medium' | 'High';
export const SECURITY_LEVELS: readonly SecurityLevel[] = ['Low', 'Medium', 'High'];
export const ROLES: readonly Role[] = ['Administrator', 'Operator', 'ReadOnly'];

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

/** Instance names are how users log in (`Instance\user`): no backslash, no surrounding blanks. */
export function instanceNameProblem(name: string): string | undefined {
  if (!name || name.trim() !== name) return 'An instance name must be non-empty without leading or trailing blanks.';
  if (name.includes('\\')) return 'An instance name cannot contain a backslash (logins use Instance\\user).';
  return undefined;
}

export interface NewInstance {
  /** A key chosen beforehand (to issue its licence first); a new one otherwise. */
  readonly key?: string;
  readonly name: string;
  /** Undefined for a root instance. */
  readonly parent?: StoredObject;
  readonly securityLevel?: SecurityLevel;
  readonly minimumPasswordLength?: number;
  readonly license?: string;
}

/** Creates an instance and claims its name; 409 `DuplicateName` when the name is taken. */
export async function createInstance(db: Db, spec: NewInstance): Promise<StoredObject> {
  const problem = instanceNameProblem(spec.name);
  if (problem) throw validationFailed(problem);
  const key = spec.key ?? newKey();
  const placement = placeInstance(key, spec.parent);
  const obj: StoredObject = {
    key,
    collection: INSTANCE_COLLECTION,
    type: INSTANCE_TYPE,
    ...placement,
    version: 1,
    doc: {
      $type: INSTANCE_TYPE,
      CommonName: spec.name,
      SecurityLevel: spec.securityLevel ?? 'Medium',
      IsDisabled: false,
      ...(spec.minimumPasswordLength !== undefined ? { MinimumPasswordLength: spec.minimumPasswordLength } : {}),
      ...(spec.license !== undefined ? { License: spec.license } : {}),
    },
  };
  const claims = [instanceNameClaim(spec.name)];
  try {
    await createObject(db, obj, claims);
  } catch (err) {
    if (failedClaim(err, claims, 1)) throw conflict('DuplicateName', `An instance named "${spec.name}" already exists.`);
    throw err;
  }
  return obj;
}

export interface NewUser {
  readonly instance: StoredObject;
  readonly name: string;
  readonly password: string;
  readonly role?: Role;
  readonly twoFactorEnabled?: boolean;
  readonly email?: string;
  readonly mustChangePassword?: boolean;
  /** ISO date-time. */
  readonly passwordExpiresOn?: string;
  readonly isDisabled?: boolean;
}

/**
 * Creates a user in an instance with its AUTH item (hashed password) in one transaction; 409
 * `DuplicateName` when the name is taken in that instance. Password rules are the caller's
 * business (the admin command and the seeding accept what the operator chose).
 */
export async function createUser(db: Db, spec: NewUser): Promise<StoredObject> {
  if (!spec.name || spec.name.trim() !== spec.name) throw validationFailed('A user name must be non-empty without leading or trailing blanks.');
  const key = newKey();
  const obj: StoredObject = {
    key,
    collection: USER_COLLECTION,
    type: USER_TYPE,
    ...placeIn(spec.instance),
    version: 1,
    doc: {
      $type: USER_TYPE,
      CommonName: spec.name,
      Role: spec.role ?? 'Operator',
      IsDisabled: spec.isDisabled ?? false,
      TwoFactorEnabled: spec.twoFactorEnabled ?? false,
      ...(spec.email !== undefined ? { Email: spec.email } : {}),
      MustChangePassword: spec.mustChangePassword ?? false,
      ...(spec.passwordExpiresOn !== undefined ? { PasswordExpiresOn: spec.passwordExpiresOn } : {}),
    },
  };
  const claims = [userNameClaim(spec.instance.key, spec.name)];
  const hash = await hashPassword(spec.password);
  try {
    await createObject(db, obj, claims, [authItemPut(db, key, hash)]);
  } catch (err) {
    if (failedClaim(err, claims, 1)) throw conflict('DuplicateName', `A user named "${spec.name}" already exists in this instance.`);
    if (err instanceof ConditionFailed) throw conflict('Conflict', 'The user could not be created; retry.');
    throw err;
  }
  return obj;
}

/** Stores a licence on an instance (version-checked; re-read and retried if an edit came in between). */
export async function setInstanceLicense(db: Db, instanceKey: string, license: string): Promise<StoredObject> {
  for (let attempt = 0; ; attempt++) {
    const current = await getObject(db, instanceKey, true);
    if (!isInstance(current)) throw validationFailed(`There is no instance with key ${instanceKey}.`);
    const next: StoredObject = { ...current, version: current.version + 1, doc: { ...current.doc, License: license } };
    try {
      await replaceObject(db, next, current.version);
      return next;
    } catch (err) {
      if (!(err instanceof ConditionFailed) || attempt >= 3) throw err;
    }
  }
}
