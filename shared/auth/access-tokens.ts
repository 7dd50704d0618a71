/**
 * Access tokens (ES256 JWT signed with the key store's key, `kid` in the header) and opaque
 * refresh tokens (256 random bits, stored only as their SHA-256).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose/jwt/sign';
import type { Config } from '../config.ts';
import type { Role } from './principal.ts';
import type { AccessClaims } from './authenticator.ts';
import { JWT_ALG, type KeyStore } from './keys.ts';

export interface TokenSubject {
  readonly userKey: string;
  readonly userName: string;
  readonly instanceKey: string;
  readonly instanceName: string;
  readonly role: Role;
  /** The user's session generation at issue (the `gen` claim; see `shared/objects/accounts.ts`); default 0. */
  readonly sessionGeneration?: number;
}

export interface IssuedAccessToken {
  readonly token: string;
  readonly jti: string;
  readonly issuedAt: Date;
  readonly expiresAt: Date;
  readonly expiresIn: number;
}

/** Signs an access token for `subject`, valid `accessTokenTtl` seconds from `now`. */
export async function issueAccessToken(
  keys: KeyStore,
  cfg: Pick<Config, 'issuer' | 'audience' | 'accessTokenTtl'>,
  subject: TokenSubject,
  now: Date,
): Promise<IssuedAccessToken> {
  // The key that signs at the token's own issue time (see shared/auth/key-ring.ts).
  const { kid, key } = await keys.signingKey(now);
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + cfg.accessTokenTtl;
  const jti = randomUUID();
  const claims: Pick<AccessClaims, 'ins' | 'inm' | 'unm' | 'role' | 'gen'> = {
    ins: subject.instanceKey,
    inm: subject.instanceName,
    unm: subject.userName,
    role: subject.role,
    gen: subject.sessionGeneration ?? 0,
  };
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: JWT_ALG, kid, typ: 'JWT' })
    .setSubject(subject.userKey)
    .setIssuer(cfg.issuer)
    .setAudience(cfg.audience)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(key);
  return { token, jti, issuedAt: new Date(iat * 1000), expiresAt: new Date(exp * 1000), expiresIn: cfg.accessTokenTtl };
}

/** A new opaque refresh token: 32 random bytes, base64url. */
export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a refresh token. */
export function refreshTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new refresh-token family id (one per password login). */
export function newFamilyId(): string {
  return randomBytes(16).toString('hex');
}
