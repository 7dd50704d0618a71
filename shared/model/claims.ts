/**
 * How unique values are spelled as claims (see `Claim` in the object repository). Every writer of
 * an instance, user, card, configuration name or moniker uses these, so a race between two
 * writers of the same value always meets on the same claim item.
 */
import type { Claim, StoredObject } from './stored-object.ts';

/** Instance names are unique in a deployment (login is by name) and case-sensitive. */
export const instanceNameClaim = (name: string): Claim => ({ scope: 'global', kind: 'instance', value: name });

/** User names are unique within their instance, case-sensitive like the instance name. */
export const userNameClaim = (instanceKey: string, name: string): Claim => ({ scope: instanceKey, kind: 'user', value: name });

/** A card is its encoded number together with its facility code (when given), within an instance. */
export const cardClaim = (instanceKey: string, encodedCardNumber: string | number | bigint, facilityCode?: string | number | bigint | null): Claim => ({
  scope: instanceKey,
  kind: 'card',
  value: `${facilityCode ?? ''}:${encodedCardNumber}`,
});

/** CommonName of a configuration object, unique within its folder and collection. */
export const commonNameClaim = (folderKey: string, collection: string, name: string): Claim => ({
  scope: folderKey,
  kind: `name:${collection}`,
  value: name,
});

/** An event type's moniker, unique within its app. */
export const monikerClaim = (appKey: string, namespace: string, nickname: string): Claim => ({
  scope: appKey,
  kind: 'moniker',
  value: `${namespace}\u0000${nickname}`,
});

/**
 * A SCIM user name (RFC 7643 `userName`), unique within the person's instance. SCIM compares it
 * without regard to case (`caseExact: false`), so the claim holds it in lower case.
 */
export const scimUserNameClaim = (instanceKey: string, userName: string): Claim => ({ scope: instanceKey, kind: 'scim-user', value: userName.toLowerCase() });

/** A SCIM `externalId` of a person (the directory's own id), unique within the person's instance: the lookup by it is this claim. */
export const scimExternalIdClaim = (instanceKey: string, externalId: string): Claim => ({ scope: instanceKey, kind: 'scim-external', value: externalId });

/**
 * Single sign-on: a provider's subject (`sub`) links to one user of the instance. Provider keys
 * are unique, so the instance scope only keeps the claim beside the instance's other claims.
 */
export const ssoSubjectClaim = (instanceKey: string, providerKey: string, subject: string): Claim => ({
  scope: instanceKey,
  kind: 'ssosub',
  value: `${providerKey}\u0000${subject}`,
});

/**
 * Single sign-on: an email address (compared lower-case) names one user among the users of a
 * provider, so a first sign-in (before the subject is linked) finds at most one.
 */
export const ssoEmailClaim = (instanceKey: string, providerKey: string, email: string): Claim => ({
  scope: instanceKey,
  kind: 'ssoemail',
  value: `${providerKey}\u0000${email.trim().toLowerCase()}`,
});

/**
 * The single sign-on claims of a user linked to a provider: its subject there (once known) and
 * its Email among that provider's users. Every writer of a user (the users collection, a sign-in
 * that links or creates one) claims these.
 */
export function userSsoClaims(o: Pick<StoredObject, 'folder' | 'doc'>): Claim[] {
  const provider = o.doc.IdentityProviderKey;
  if (typeof provider !== 'string' || provider === '') return [];
  const out: Claim[] = [];
  const subject = o.doc.IdentityProviderSubject;
  if (typeof subject === 'string' && subject !== '') out.push(ssoSubjectClaim(o.folder, provider, subject));
  const email = o.doc.Email;
  if (typeof email === 'string' && email.trim() !== '') out.push(ssoEmailClaim(o.folder, provider, email));
  return out;
}
