/**
 * Creating instances and users, and storing an instance's licence: the admin command and the
 * first-start seeding (see `directory.ts` for how the token service finds and reads them).
 */
import { conflict, validationFailed, ConditionFailed } from '../errors.ts';
import type { Db } from '../db/client.ts';
import { authItemPut } from '../db/auth-repo.ts';
import { getObject } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { createObject, failedClaim, replaceObject } from '../db/object-writes.ts';
import type { Role } from './principal.ts';
import { instanceNameClaim, userNameClaim } from '../model/claims.ts';
import { newKey, placeIn, placeInstance } from '../model/placement.ts';
import { INSTANCE_COLLECTION, INSTANCE_TYPE, USER_COLLECTION, USER_TYPE, isInstance, type SecurityLevel } from './directory.ts';
import { hashPassword } from './passwords.ts';

/** Instance names are how users log in (`Instance\user`): no backslash, no surrounding blanks. */
function instanceNameProblem(name: string): string | undefined {
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
