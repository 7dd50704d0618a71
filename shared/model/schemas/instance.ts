/** InstanceInfo: a customer (the top folder of its scope) and UserInfo, a login of an instance. */
import * as z from 'zod/mini';
import { LIMITS, builtOnce, commonSchemas, nameString, optionalBoolean, optionalDateTime, optionalString, optionalTimeZone } from './common.ts';

export const SECURITY_LEVELS = ['Low', 'Medium', 'High'] as const;
export type SecurityLevel = (typeof SECURITY_LEVELS)[number];

/** A login name: non-empty, without leading or trailing blanks. */
const loginName = () =>
  nameString().check(z.refine((s) => s.trim() === s && s.trim() !== '', { message: 'must be non-empty without leading or trailing blanks' }));

export const ROLES = ['Administrator', 'Operator', 'ReadOnly', 'Controller'] as const;

/** The instance and user schemas, built on first use (see `builtOnce`). */
export const accountSchemas = builtOnce(() => {
  const { baseInfoShape } = commonSchemas();
  const instanceInfoSchema = z.looseObject({
    ...baseInfoShape,
    /** Login is by instance name (`Instance\\user`): required, unique in the deployment, no backslash. */
    CommonName: loginName().check(z.refine((s) => !s.includes('\\'), { message: 'cannot contain a backslash (logins use Instance\\user)' })),
    SecurityLevel: z.nullish(z.enum(SECURITY_LEVELS)),
    IsDisabled: optionalBoolean(),
    MinimumPasswordLength: z.nullish(z.number().check(z.int()).check(z.gte(1)).check(z.lte(128))),
    /** A licence JWS, checked at login (not when set). */
    License: optionalString(16_384),
    /** The IANA zone of the instance's readers that have no controller zone (and of the instances below it that set none). */
    TimeZone: optionalTimeZone(),
  });

  const userInfoSchema = z.looseObject({
    ...baseInfoShape,
    /** The login name: required and unique within the instance. */
    CommonName: loginName(),
    Role: z.nullish(z.enum(ROLES)),
    IsDisabled: optionalBoolean(),
    TwoFactorEnabled: optionalBoolean(),
    Email: optionalString(LIMITS.code),
    /** Single sign-on: the key of the instance's identity provider this user signs in through (no password login then). */
    IdentityProviderKey: optionalString(LIMITS.code),
    /** Single sign-on: the provider's `sub` for this user, set at the first sign-in (unique per provider). */
    IdentityProviderSubject: optionalString(LIMITS.code),
    MustChangePassword: optionalBoolean(),
    PasswordExpiresOn: optionalDateTime(),
    /** Write-only: hashed into the user's AUTH item, never stored in the document nor returned. */
    Password: z.nullish(z.string().check(z.maxLength(1024))),
  });
  return { instanceInfoSchema, userInfoSchema };
});

type Accounts = ReturnType<typeof accountSchemas>;
export type InstanceInfo = z.infer<Accounts['instanceInfoSchema']>;
export type UserInfo = z.infer<Accounts['userInfoSchema']>;
