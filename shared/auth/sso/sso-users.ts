/**
 * Who a validated ID token signs in: the user linked to the provider's subject; else the user of
 * that provider with the token's email (whom the sign-in then links to the subject); else, when
 * the provider provisions just in time and the email's domain is one of its EmailDomains, a new
 * user. The provider's RoleMapping then sets the user's role. Every write goes through the object
 * items and claims as an administrator's would (audited from the stream like any change).
 */
import type { JWTPayload } from 'jose';
import type { CoreDeps } from '../../core-deps.ts';
import { ConditionFailed } from '../../errors.ts';
import { claimOwner, getObject } from '../../db/objects-repo.ts';
import { createObject, failedClaim, replaceObjectWith } from '../../db/object-writes.ts';
import { ssoEmailClaim, ssoSubjectClaim, userNameClaim, userSsoClaims } from '../../model/claims.ts';
import { newKey, placeIn } from '../../model/placement.ts';
import type { Claim, StoredObject } from '../../model/stored-object.ts';
import type { Role } from '../principal.ts';
import { isDisabled, isUser, USER_COLLECTION, USER_TYPE } from '../directory.ts';

/** A sign-in refused after the provider answered: why (for the log), never shown to the client. */
export class SignInRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SignInRefused';
  }
}

/** The roles a person signing in may be mapped to (never `Controller`: a door controller's, not a person's). */
type PersonRole = Exclude<Role, 'Controller'>;
const RANK: Readonly<Record<PersonRole, number>> = { ReadOnly: 0, Operator: 1, Administrator: 2 };
const isRole = (v: unknown): v is PersonRole => typeof v === 'string' && Object.hasOwn(RANK, v);

/**
 * The role the provider's RoleMapping gives the token's `RoleClaim` values (a string or an array
 * of strings): the most privileged one mapped, else `DefaultRole`; undefined when the provider
 * maps no roles (RoleClaim or RoleMapping unset).
 */
export function mappedRole(provider: StoredObject, claims: JWTPayload): Role | undefined {
  const claimName = provider.doc.RoleClaim;
  const mapping = provider.doc.RoleMapping as Record<string, unknown> | undefined | null;
  if (typeof claimName !== 'string' || claimName === '' || !mapping || typeof mapping !== 'object') return undefined;
  const raw = claims[claimName];
  const values = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.filter((v): v is string => typeof v === 'string') : [];
  let best: PersonRole | undefined;
  for (const v of values) {
    const r = mapping[v];
    if (isRole(r) && (best === undefined || RANK[r] > RANK[best])) best = r;
  }
  return best ?? defaultRole(provider);
}

const defaultRole = (provider: StoredObject): Role => (isRole(provider.doc.DefaultRole) ? provider.doc.DefaultRole : 'ReadOnly');

/** The domain of an email address, lower-case ('' when it has none). */
export const emailDomain = (email: string): string => {
  const at = email.lastIndexOf('@');
  return at > 0 ? email.slice(at + 1).trim().toLowerCase() : '';
};

const providerDomains = (provider: StoredObject): string[] =>
  Array.isArray(provider.doc.EmailDomains) ? (provider.doc.EmailDomains as unknown[]).filter((d): d is string => typeof d === 'string').map((d) => d.toLowerCase()) : [];

/** True when `email`'s domain is one the provider lists. */
export const domainAllowed = (provider: StoredObject, email: string): boolean => providerDomains(provider).includes(emailDomain(email));

/** A user of `instance` linked to `provider`, read strongly consistent. */
async function linkedUser(deps: CoreDeps, key: string | undefined, instance: StoredObject, provider: StoredObject): Promise<StoredObject | undefined> {
  if (!key) return undefined;
  const user = await getObject(deps.db, key, true);
  return isUser(user) && user.folder === instance.key && user.doc.IdentityProviderKey === provider.key ? user : undefined;
}

const claimKey = (c: Claim): string => `${c.scope}\u0000${c.kind}\u0000${c.value}`;
const minus = (a: readonly Claim[], b: readonly Claim[]): Claim[] => {
  const ids = new Set(b.map(claimKey));
  return a.filter((c) => !ids.has(claimKey(c)));
};

/** Writes `doc` over `user` (its version checked), with the single sign-on claims it adds and releases. */
async function update(deps: CoreDeps, user: StoredObject, doc: Record<string, unknown>): Promise<StoredObject> {
  const next: StoredObject = { ...user, doc, version: user.version + 1 };
  const before = userSsoClaims(user);
  const after = userSsoClaims(next);
  try {
    await replaceObjectWith(deps.db, next, user, minus(after, before), minus(before, after));
  } catch (err) {
    // Another writer got in (an administrator, a parallel first sign-in): the next sign-in retries.
    if (err instanceof ConditionFailed) throw new SignInRefused('the user changed during the sign-in');
    throw err;
  }
  return next;
}

/** Creates the user of a first sign-in (just-in-time provisioning). */
async function provision(deps: CoreDeps, instance: StoredObject, provider: StoredObject, subject: string, email: string, role: Role): Promise<StoredObject> {
  const key = newKey();
  const doc = {
    $type: USER_TYPE,
    CommonName: email,
    Email: email,
    Role: role,
    IsDisabled: false,
    TwoFactorEnabled: false,
    MustChangePassword: false,
    IdentityProviderKey: provider.key,
    IdentityProviderSubject: subject,
  };
  const user: StoredObject = { key, collection: USER_COLLECTION, type: USER_TYPE, ...placeIn(instance), version: 1, doc };
  const claims = [userNameClaim(instance.key, email), ...userSsoClaims(user)];
  try {
    await createObject(deps.db, user, claims);
  } catch (err) {
    const taken = failedClaim(err, claims, 1);
    if (taken) throw new SignInRefused(`cannot provision: its ${taken.kind} claim is taken`);
    throw err;
  }
  return user;
}

/**
 * The user the validated `claims` sign in to `instance` through `provider`, linked, created or
 * with its role mapped as the provider says; throws {@link SignInRefused}.
 */
export async function signInUser(deps: CoreDeps, instance: StoredObject, provider: StoredObject, claims: JWTPayload): Promise<StoredObject> {
  const subject = claims.sub;
  if (typeof subject !== 'string' || subject === '') throw new SignInRefused('the ID token has no subject');
  const email = typeof claims.email === 'string' ? claims.email.trim() : '';
  const requireVerified = provider.doc.RequireEmailVerified !== false;
  if (requireVerified && claims.email_verified !== true) throw new SignInRefused('the email address is not verified');

  let user = await linkedUser(deps, await claimOwner(deps.db, ssoSubjectClaim(instance.key, provider.key, subject), true), instance, provider);
  if (!user && email) {
    user = await linkedUser(deps, await claimOwner(deps.db, ssoEmailClaim(instance.key, provider.key, email), true), instance, provider);
    // A user already linked to another subject of this provider is not taken over by an email.
    if (user && typeof user.doc.IdentityProviderSubject === 'string' && user.doc.IdentityProviderSubject !== '' && user.doc.IdentityProviderSubject !== subject) {
      throw new SignInRefused('the email belongs to a user linked to another subject');
    }
  }
  const role = mappedRole(provider, claims);
  if (!user) {
    if (provider.doc.JitProvisioning !== true) throw new SignInRefused('no user for this account and provisioning is off');
    if (!email) throw new SignInRefused('no email to provision a user with');
    if (!domainAllowed(provider, email)) throw new SignInRefused('the email domain is not one of the provider\'s');
    return provision(deps, instance, provider, subject, email, role ?? defaultRole(provider));
  }
  if (isDisabled(user)) throw new SignInRefused('the user is disabled');
  const doc: Record<string, unknown> = { ...user.doc };
  if (doc.IdentityProviderSubject !== subject) doc.IdentityProviderSubject = subject;
  if (role !== undefined && doc.Role !== role) doc.Role = role;
  return doc.IdentityProviderSubject === user.doc.IdentityProviderSubject && doc.Role === user.doc.Role ? user : update(deps, user, doc);
}
