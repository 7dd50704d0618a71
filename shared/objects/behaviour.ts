/**
 * What differs between collections, as data: one generic implementation of the collection calls
 * (`collection.ts`) is configured per collection by a {@link Behaviour}. Most collections use the
 * defaults; people (cards), inputs (status), folders, instances and users override a few hooks.
 */
import type { ApiError } from '../errors.ts';
import type { Role } from '../auth/principal.ts';
import type { ExtraWrite } from '../db/objects-repo.ts';
import type { Claim, StoredObject } from '../model/stored-object.ts';
import { commonNameClaim } from '../model/claims.ts';
import type { CollectionDef } from '../model/collections.ts';
import { placeIn, type Placement } from '../model/placement.ts';
import type { Ctx } from './domain-context.ts';
import { duplicateName } from './object-errors.ts';
import type { Doc, ObjectInput } from './validate.ts';

export interface Behaviour {
  readonly def: CollectionDef;
  /** The least role that may create, replace or delete objects of the collection (and add notes to them). */
  readonly writeRole: Role;
  /** `instance`: objects of the collection live directly in an instance (users, child instances). */
  readonly container: 'folder' | 'instance';
  /** Where a new object `key` goes when created in `target`. */
  place(key: string, target: StoredObject): Placement;
  /** The unique values an object owns, written in the same transaction as the object. */
  claims(o: StoredObject): Claim[];
  /** The 409 for a claim another object owns. */
  claimError(c: Claim): ApiError;
  /** The document to store from a validated body (defaults, rules comparing with `current` on a replace). */
  complete(ctx: Ctx, input: ObjectInput, current: StoredObject | undefined): Doc;
  /**
   * Work done once per write, before any attempt (hashing a password): returns the extra items of
   * the write transaction for the object's key. `instance` reads the object's instance lazily.
   */
  prepareWrite(ctx: Ctx, input: ObjectInput, instance: () => Promise<StoredObject | undefined>): Promise<(key: string) => ExtraWrite[]>;
  /**
   * True when a replace revokes the object's sessions (users: a new password, or disabling): its
   * session generation goes up in the same write, so its tokens and refresh tokens stop working.
   */
  revokesSessions(input: ObjectInput, current: StoredObject, doc: Doc): boolean;
  /** Checks before a delete (a folder must be empty). */
  beforeDelete(ctx: Ctx, o: StoredObject): Promise<void>;
  /** Extra items of the delete transaction (status, AUTH item, tombstone). */
  deleteExtra(ctx: Ctx, o: StoredObject): ExtraWrite[];
}

/** A configuration object's CommonName claim, when the collection keeps names unique and the object has one. */
function nameClaims(def: CollectionDef, o: StoredObject): Claim[] {
  const name = o.doc.CommonName;
  return def.uniqueName && typeof name === 'string' && name !== '' ? [commonNameClaim(o.folder, def.name, name)] : [];
}

/** How a collection differs from the defaults. */
export type Override = (base: Behaviour) => Behaviour;

/** The behaviour every collection starts from. */
export function defaultBehaviour(def: CollectionDef): Behaviour {
  return {
    def,
    writeRole: 'Operator',
    container: 'folder',
    place: (_key, target) => placeIn(target),
    claims: (o) => nameClaims(def, o),
    claimError: (c) => duplicateName(c.value),
    complete: (_ctx, input) => ({ ...input.doc }),
    prepareWrite: async () => () => [],
    revokesSessions: () => false,
    beforeDelete: async () => {},
    deleteExtra: () => [],
  };
}
