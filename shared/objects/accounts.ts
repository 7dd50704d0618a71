/**
 * Instances and users, on the conventions the token function shares:
 *
 * - Instance: collection `instances`, type `InstanceInfo`, folder = its parent ('' for the root),
 *   doc {CommonName, SecurityLevel (default Medium), IsDisabled (default false),
 *   MinimumPasswordLength?, License?, ...}; its name is claimed deployment-wide (409 DuplicateName).
 *   Created under a parent instance by an Administrator whose scope holds the parent. Only an
 *   ancestor's Administrator may set an instance's License: an administrator of the instance itself
 *   may not change it (403); leaving License out of a PUT of one's own instance keeps it.
 * - User: collection `users`, type `UserInfo`, folder = its instance, doc {CommonName (unique in the
 *   instance, 409 DuplicateName), Role (default Operator), IsDisabled, TwoFactorEnabled, Email,
 *   MustChangePassword (default false), PasswordExpiresOn}. `Password` is write-only: it must meet
 *   the password rules (400 ValidationFailed naming the rule), is hashed into the user's AUTH item
 *   in the same transaction, and is never stored in the document nor returned.
 * - Sessions: a user's tokens and refresh tokens carry the user's session generation (kept on the
 *   user item beside the document, never shown). A new password, disabling the user and
 *   `POST <user Href>/revokesessions` raise it in the user's own version-checked write: a refresh
 *   of an older generation is refused at once (the refresh reads the user, strongly consistent),
 *   and an access token of an older generation within the status check's cache time (30 s).
 */
import { describeViolation, hashPassword, passwordRuleViolation } from '../auth/passwords.ts';
import { authItemDelete, authItemPut } from '../db/auth-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { putTombstoneItem } from '../db/object-writes.ts';
import { instanceNameClaim, userNameClaim, userSsoClaims } from '../model/claims.ts';
import { conflict, forbidden } from '../errors.ts';
import { getObject } from '../db/objects-repo.ts';
import { placeIn, placeInstance } from '../model/placement.ts';
import type { Override } from './behaviour.ts';
import { invalidField } from './object-errors.ts';
import { requireEmpty } from './folder-behaviour.ts';
import type { Doc } from './validate.ts';

const nameOf = (o: StoredObject): string | undefined =>
  typeof o.doc.CommonName === 'string' && o.doc.CommonName !== '' ? o.doc.CommonName : undefined;

/** Fills in defaults the client left out, after the client's own fields. */
const withDefaults = (doc: Doc, defaults: Doc): Doc => {
  const out = { ...doc };
  for (const [k, v] of Object.entries(defaults)) if (out[k] === undefined || out[k] === null) out[k] = v;
  return out;
};

export const instanceBehaviour: Override = (base) => ({
  ...base,
  writeRole: 'Administrator',
  container: 'instance',
  place: (key, parent) => placeInstance(key, parent),
  claims: (o) => {
    const name = nameOf(o);
    return name ? [instanceNameClaim(name)] : [];
  },
  complete: (ctx, input, current) => {
    const doc = withDefaults(input.doc, { SecurityLevel: 'Medium', IsDisabled: false });
    if (current && current.key === ctx.principal.instanceKey) {
      // An instance's own administrators may not change its licence; leaving it out keeps it.
      if (!('License' in input.doc)) {
        if (current.doc.License !== undefined) doc.License = current.doc.License;
      } else if ((input.doc.License ?? null) !== (current.doc.License ?? null)) {
        throw forbidden('Only an administrator of a parent instance may change the License of an instance.');
      }
    }
    return doc;
  },
  beforeDelete: async (ctx, o) => {
    if (o.key === ctx.principal.instanceKey) throw forbidden('You cannot delete the instance you are signed in to.');
    await requireEmpty(ctx, o);
  },
  deleteExtra: (ctx, o) => [putTombstoneItem(ctx.db, o, ctx.now.getTime())],
});

export const userBehaviour: Override = (base) => ({
  ...base,
  writeRole: 'Administrator',
  container: 'instance',
  place: (_key, instance) => placeIn(instance),
  claims: (o) => {
    const name = nameOf(o);
    return [...(name ? [userNameClaim(o.folder, name)] : []), ...userSsoClaims(o)];
  },
  claimError: (c) =>
    c.kind === 'ssoemail'
      ? conflict('DuplicateEmail', 'Another user of this identity provider has this Email.')
      : c.kind === 'ssosub'
        ? conflict('DuplicateSubject', 'Another user is linked to this IdentityProviderSubject.')
        : base.claimError(c),
  complete: (_ctx, input) =>
    withDefaults(input.doc, { Role: 'Operator', IsDisabled: false, TwoFactorEnabled: false, MustChangePassword: false }),
  prepareWrite: async (ctx, input, instance) => {
    const providerKey = input.doc.IdentityProviderKey;
    if (typeof providerKey === 'string' && providerKey !== '') {
      // A user signs in through a provider of its own instance only.
      const [provider, inst] = await Promise.all([getObject(ctx.db, providerKey), instance()]);
      if (provider?.collection !== 'identityproviders' || provider.folder !== inst?.key) {
        throw invalidField('IdentityProviderKey', 'names no identity provider of this instance');
      }
    }
    const password = input.writeOnly.Password;
    if (typeof password !== 'string' || password === '') return () => [];
    const inst = await instance();
    const min = typeof inst?.doc.MinimumPasswordLength === 'number' ? inst.doc.MinimumPasswordLength : undefined;
    const violation = passwordRuleViolation(password, min);
    if (violation) throw invalidField('Password', `${violation}: ${describeViolation(violation, min)}`);
    const hash = await hashPassword(password);
    return (key) => [authItemPut(ctx.db, key, hash)];
  },
  // A new password or disabling signs the user out everywhere (see revokeSessionsAt).
  revokesSessions: (input, current, doc) =>
    (typeof input.writeOnly.Password === 'string' && input.writeOnly.Password !== '') ||
    (doc.IsDisabled === true && current.doc.IsDisabled !== true),
  beforeDelete: async (ctx, o) => {
    if (o.key === ctx.principal.userKey) throw forbidden('You cannot delete the user you are signed in as.');
  },
  deleteExtra: (ctx, o) => [authItemDelete(ctx.db, o.key)],
});

