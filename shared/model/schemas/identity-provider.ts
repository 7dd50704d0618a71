/**
 * IdentityProviderInfo: an OpenID Connect provider an instance's users sign in through (single
 * sign-on). `ClientSecret` is write-only: sealed at rest in an item of its own, never returned.
 * Whether `Issuer` may be http on loopback is a deployment setting, checked by the collection's
 * behaviour (shared/objects/identity-providers.ts), not here.
 */
import * as z from 'zod/mini';
import { LIMITS, builtOnce, commonSchemas, nameString, optionalBoolean, optionalString } from './common.ts';
import { ROLES } from './instance.ts';

/** The roles a person signing in may get: every role but a door controller's. */
const PERSON_ROLES = ROLES.filter((r) => r !== 'Controller') as ['Administrator', 'Operator', 'ReadOnly'];

export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

/** A domain name as an email address ends (`example.com`), compared lower-case. */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/i;

export const identityProviderSchemas = builtOnce(() => {
  const { baseInfoShape } = commonSchemas();
  const identityProviderInfoSchema = z.looseObject({
    ...baseInfoShape,
    /** Shown on the console's "Sign in with <CommonName>" button. */
    CommonName: nameString(),
    /** The provider's issuer identifier: its discovery document is `<Issuer>/.well-known/openid-configuration`. */
    Issuer: z.string().check(
      z.maxLength(2048),
      z.refine((s) => URL.canParse(s) && ['https:', 'http:'].includes(new URL(s).protocol) && !s.includes('#') && !s.includes('?'), {
        message: 'must be an absolute https URL without query or fragment',
      }),
    ),
    ClientId: z.string().check(z.minLength(1), z.maxLength(LIMITS.code)),
    /** Write-only (sealed at rest): required when the provider is created, kept by a replace that leaves it out. */
    ClientSecret: z.nullish(z.string().check(z.minLength(1), z.maxLength(4096))),
    Scopes: optionalString(1024),
    EmailDomains: z.nullish(z.array(z.string().check(z.refine((s) => DOMAIN.test(s), { message: 'must be a domain name such as example.com' })))),
    JitProvisioning: optionalBoolean(),
    DefaultRole: z.nullish(z.enum(PERSON_ROLES)),
    /** The ID token claim RoleMapping reads (`groups`, `roles`): a string or an array of strings. */
    RoleClaim: optionalString(LIMITS.code),
    /** Claim value → role; the most privileged role any value maps to wins, else DefaultRole. */
    RoleMapping: z.nullish(z.record(z.string(), z.enum(PERSON_ROLES))),
    TokenEndpointAuthMethod: z.nullish(z.enum(TOKEN_ENDPOINT_AUTH_METHODS)),
    Enabled: optionalBoolean(),
    /** Refuse an ID token whose `email_verified` is not true (default true). */
    RequireEmailVerified: optionalBoolean(),
  });
  return { identityProviderInfoSchema };
});

export type IdentityProviderInfo = z.infer<ReturnType<typeof identityProviderSchemas>['identityProviderInfoSchema']>;
