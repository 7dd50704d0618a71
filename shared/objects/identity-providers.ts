/**
 * Identity providers (single sign-on): collection `identityproviders`, type `IdentityProviderInfo`,
 * folder = its instance, managed by Administrators. The rules beyond the schema:
 *
 * - `ClientSecret` is write-only: required on create, kept by a replace that leaves it out. It is
 *   sealed (shared/auth/secret-box.ts, bound to the provider's key) into the provider's own
 *   `IDPSECRET` item in the same transaction as the object, so it never reaches the document,
 *   an answer, the stream, an event or a log.
 * - `Issuer` is https and not a literal private address (Gatehouse fetches from it); http only on
 *   a loopback address and only where the deployment allows it (`GATEHOUSE_IDP_ALLOW_LOOPBACK`,
 *   the local runtime's default).
 * - Defaults: `Scopes` "openid email profile", `JitProvisioning` false, `DefaultRole` ReadOnly,
 *   `TokenEndpointAuthMethod` client_secret_basic, `Enabled` true, `RequireEmailVerified` true;
 *   `EmailDomains` are stored lower-case.
 * - A provider that users are linked to (`IdentityProviderKey`) is not deleted (409
 *   `IdentityProviderInUse`): they sign in through it only, so its deletion would leave them
 *   unable to sign in at all, with nothing in an answer to say why. An administrator links them
 *   to another provider or clears their link (and gives them a password) first, or sets
 *   `Enabled` false, which keeps the links for when it comes back.
 */
import { config } from '../config.ts';
import { IDENTITY_PROVIDER_DEFAULTS, issuerProblem, providerSecretContext } from '../auth/sso/provider-rules.ts';
import { providerSecretDelete, providerSecretPut } from '../db/sso-repo.ts';
import { listCollection } from '../db/objects-repo.ts';
import type { Db } from '../db/client.ts';
import { conflict } from '../errors.ts';
import { placeIn } from '../model/placement.ts';
import type { Override } from './behaviour.ts';
import { invalidField } from './object-errors.ts';
import type { Doc } from './validate.ts';

/**
 * The family a function's bundle is built for (infra/bundling.ts; undefined outside a bundle): only
 * the folders function writes identity providers, so only its bundle carries the sealing (and the
 * Secrets Manager client its key may come from). Every family's bundle holds this behaviour.
 */
declare const __GATEHOUSE_FAMILY__: string | undefined;
const loadSecretBox =
  typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'folders' ? () => import('../auth/secret-box.ts') : undefined;

/** Users of an instance read per page while looking for one linked to a provider. */
const USERS_PAGE = 200;

/** True when a user of `instanceKey` signs in through the provider `providerKey` (read page by page, stopping at the first). */
async function hasLinkedUser(db: Db, instanceKey: string, providerKey: string): Promise<boolean> {
  let after: string | undefined;
  do {
    const page = await listCollection(db, instanceKey, 'users', USERS_PAGE, after);
    if (page.items.some((u) => u.doc.IdentityProviderKey === providerKey)) return true;
    after = page.nextStart;
  } while (after);
  return false;
}

export const identityProviderBehaviour: Override = (base) => ({
  ...base,
  writeRole: 'Administrator',
  container: 'instance',
  place: (_key, instance) => placeIn(instance),
  complete: (ctx, input, current) => {
    const doc: Doc = { ...input.doc };
    for (const [k, v] of Object.entries(IDENTITY_PROVIDER_DEFAULTS)) if (doc[k] === undefined || doc[k] === null) doc[k] = Array.isArray(v) ? [...v] : v;
    if (Array.isArray(doc.EmailDomains)) doc.EmailDomains = [...new Set((doc.EmailDomains as string[]).map((d) => d.toLowerCase()))];
    const problem = issuerProblem(String(doc.Issuer), (ctx.config ?? config()).idpAllowLoopback);
    if (problem) throw invalidField('Issuer', problem);
    const secret = input.writeOnly.ClientSecret;
    if (!current && (typeof secret !== 'string' || secret === '')) throw invalidField('ClientSecret', 'required when a provider is created');
    return doc;
  },
  prepareWrite: async (ctx, input) => {
    const secret = input.writeOnly.ClientSecret;
    if (typeof secret !== 'string' || secret === '') return () => [];
    if (!loadSecretBox) throw new Error('identity providers are written by the folders function only');
    const seal = await (await loadSecretBox()).secretSealer(ctx.config ?? config());
    return (key) => [providerSecretPut(ctx.db, key, seal(secret, providerSecretContext(key)))];
  },
  beforeDelete: async (ctx, o) => {
    if (await hasLinkedUser(ctx.db, o.folder, o.key)) {
      throw conflict(
        'IdentityProviderInUse',
        'Users sign in through this identity provider. Link them to another provider, or clear their IdentityProviderKey and give them a password, before deleting it; or set Enabled to false.',
      );
    }
  },
  deleteExtra: (ctx, o) => [providerSecretDelete(ctx.db, o.key)],
});
