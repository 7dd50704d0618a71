/**
 * Verifies the bearer token of a protected call inside every family (no separate authorizer:
 * the same code path runs locally and in AWS). Only ES256 is accepted: `alg: none`, HS256 and
 * every other algorithm fail verification.
 */
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../config.ts';
import { unauthorized } from '../errors.ts';
import type { Authenticator, Principal, Role } from '../http/types.ts';
import { JWT_ALG, type KeyStore } from './keys.ts';

/** Claims Gatehouse puts in an access token beside the registered ones. */
export interface AccessClaims extends JWTPayload {
  /** instance key */
  ins: string;
  /** instance name */
  inm: string;
  /** user name */
  unm: string;
  role: Role;
}

const ROLES: readonly Role[] = ['Administrator', 'Operator', 'ReadOnly'];

/** Turns verified claims into a principal; rejects tokens missing Gatehouse's claims. */
export function principalFromClaims(p: JWTPayload): Principal {
  const c = p as Partial<AccessClaims>;
  if (
    typeof c.sub !== 'string' ||
    typeof c.ins !== 'string' ||
    typeof c.inm !== 'string' ||
    typeof c.unm !== 'string' ||
    typeof c.jti !== 'string' ||
    !ROLES.includes(c.role as Role)
  ) {
    throw unauthorized('The access token is missing required claims.');
  }
  return { userKey: c.sub, userName: c.unm, instanceKey: c.ins, instanceName: c.inm, role: c.role as Role, tokenId: c.jti };
}

export interface AuthenticatorOptions {
  readonly config: Pick<Config, 'issuer' | 'audience'>;
  readonly keys: KeyStore;
  /**
   * Refuses principals whose user or instance was disabled after the token was issued. Called on
   * every verified token; implementations cache per execution environment (at most a minute).
   */
  readonly checkStatus?: (principal: Principal) => Promise<void>;
}

export function createAuthenticator(opts: AuthenticatorOptions): Authenticator {
  let keySet: ReturnType<typeof createLocalJWKSet> | undefined;
  const getKeySet = async () => (keySet ??= createLocalJWKSet(await opts.keys.publicKeys()));
  return {
    async authenticate(authorization) {
      if (!authorization) throw unauthorized('Authorization: Bearer <token> is required.');
      const m = /^Bearer\s+([A-Za-z0-9_\-.]+)\s*$/i.exec(authorization);
      if (!m) throw unauthorized('The Authorization header must be "Bearer <token>".');
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(m[1]!, await getKeySet(), {
          algorithms: [JWT_ALG],
          issuer: opts.config.issuer,
          audience: opts.config.audience,
          requiredClaims: ['exp', 'iat', 'sub', 'jti'],
        }));
      } catch (err) {
        const code = (err as { code?: string }).code;
        throw unauthorized(code === 'ERR_JWT_EXPIRED' ? 'The access token has expired.' : 'The access token is not valid.');
      }
      const principal = principalFromClaims(payload);
      await opts.checkStatus?.(principal);
      return principal;
    },
  };
}
