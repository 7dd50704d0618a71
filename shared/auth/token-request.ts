/**
 * The `POST /token` request: form parsing as clients in the field send it, client checks, and
 * the token error type.
 *
 * Field clients build the form by hand (unencoded, with a stray `undefined=` field), sometimes
 * send only `instance`, `username` and `password`, and sometimes label the form
 * `application/json`. Unknown fields are ignored; a JSON object body is accepted as well.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.ts';
import { OAuthError } from '../errors.ts';

/** Token endpoint errors never end up in a cache, like the token responses. */
export const NO_STORE: Readonly<Record<string, string>> = Object.freeze({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });

/** An error of the spec's token error table (status 400). */
export class TokenError extends OAuthError {
  override readonly headers = NO_STORE;
  constructor(code: TokenErrorCode, description: string) {
    super(code, description, 400);
    this.name = 'TokenError';
  }
}

export type TokenErrorCode =
  | 'invalid_grant'
  | 'incorrect_password'
  | 'incorrect_tfacode'
  | 'user_notfound'
  | 'user_disabled'
  | 'user_lockedout'
  | 'password_expired'
  | 'new_password_required'
  | 'one_time_password_required'
  | 'password_doesnot_meet_complexity_rule'
  | 'password_doesnot_meet_minimum_length_rule'
  | 'instance_not_found'
  | 'instance_disabled'
  | 'instance_missing_license'
  | 'instance_license_tampered'
  | 'instance_license_expired'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'RefreshTokenTicketNotValid';

export const tokenError = (code: TokenErrorCode, description: string): TokenError => new TokenError(code, description);

export const DEFAULT_CLIENT_ID = 'consoleApp';

/** The console's public client of the authorization code flow (single sign-on). */
export const CONSOLE_OAUTH_CLIENT_ID = 'gatehouseConsole';

/** True for a public client of the authorization code flow: the console's, or one of GATEHOUSE_OAUTH_CLIENTS. */
export const isOAuthClient = (cfg: Pick<Config, 'oauthClients'>, clientId: string): boolean =>
  clientId === CONSOLE_OAUTH_CLIENT_ID || cfg.oauthClients.some((c) => c.clientId === clientId);

type GrantType = 'password' | 'refresh_token' | 'authorization_code';

export interface TokenRequest {
  readonly grantType: GrantType;
  readonly clientId: string;
  readonly clientSecret: string | undefined;
  readonly username: string;
  readonly password: string;
  readonly instance: string | undefined;
  readonly sendOneTimePassword: boolean;
  readonly oneTimePassword: string | undefined;
  readonly newPassword: string | undefined;
  readonly refreshToken: string | undefined;
  /** The authorization_code grant (single sign-on): the one-time code, the PKCE verifier and the redirect URI it was issued for. */
  readonly code: string | undefined;
  readonly codeVerifier: string | undefined;
  readonly redirectUri: string | undefined;
}

/** The fields of a token request body: form-encoded (as sent in the field) or a JSON object. */
export function parseTokenFields(text: string | undefined): Map<string, string> {
  const fields = new Map<string, string>();
  if (!text) return fields;
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const obj = JSON.parse(trimmed) as unknown;
      if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
        for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
          if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') fields.set(k.toLowerCase(), String(v));
        }
        return fields;
      }
    } catch {
      // Not JSON after all: read it as a form.
    }
  }
  // The first value of a repeated field wins; names are matched case-insensitively.
  for (const [k, v] of new URLSearchParams(trimmed)) {
    const name = k.trim().toLowerCase();
    if (!fields.has(name)) fields.set(name, v);
  }
  return fields;
}

const TRUE = new Set(['true', '1', 'yes', 'on']);

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

/**
 * Reads a token request from its fields. A missing `grant_type` means `password` when any
 * password-login field is present (field clients omit it) and `refresh_token` when only a
 * refresh token is; any other value is `unsupported_grant_type`.
 */
export function readTokenRequest(fields: ReadonlyMap<string, string>): TokenRequest {
  const get = (n: string) => nonEmpty(fields.get(n));
  let grant = get('grant_type');
  if (grant === undefined) {
    if (get('username') !== undefined || get('password') !== undefined || get('instance') !== undefined) grant = 'password';
    else if (get('refresh_token') !== undefined) grant = 'refresh_token';
  }
  if (grant !== 'password' && grant !== 'refresh_token' && grant !== 'authorization_code') {
    throw tokenError('unsupported_grant_type', 'grant_type must be "password", "refresh_token" or "authorization_code".');
  }
  return {
    grantType: grant,
    clientId: get('client_id') ?? DEFAULT_CLIENT_ID,
    clientSecret: get('client_secret'),
    username: fields.get('username') ?? '',
    password: fields.get('password') ?? '',
    instance: get('instance'),
    sendOneTimePassword: TRUE.has((fields.get('sendonetimepassword') ?? '').trim().toLowerCase()),
    oneTimePassword: nonEmpty(fields.get('onetimepassword')?.trim()),
    newPassword: get('newpassword'),
    refreshToken: get('refresh_token'),
    code: get('code'),
    codeVerifier: get('code_verifier'),
    redirectUri: get('redirect_uri'),
  };
}

function secretsEqual(a: string, b: string): boolean {
  // Digests first: timingSafeEqual needs equal lengths, and lengths must not leak either.
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

/**
 * Checks the client: `consoleApp` is public (a secret may be omitted, a wrong one is refused), as
 * are the authorization code flow's clients sending none; every other client (GATEHOUSE_CLIENTS)
 * must send its secret.
 */
export function checkClient(cfg: Pick<Config, 'clientSecret' | 'clients' | 'oauthClients'>, clientId: string, secret: string | undefined): void {
  // The public clients of single sign-on (PKCE) refresh the tokens their code bought without a secret.
  if (secret === undefined && isOAuthClient(cfg, clientId)) return;
  if (clientId === DEFAULT_CLIENT_ID) {
    if (secret === undefined) return;
    const expected = cfg.clients.get(DEFAULT_CLIENT_ID) ?? cfg.clientSecret;
    if (secretsEqual(secret, expected)) return;
    throw tokenError('invalid_client', 'The client secret is not valid.');
  }
  const expected = cfg.clients.get(clientId);
  if (expected === undefined) throw tokenError('invalid_client', 'The client is not known.');
  if (secret === undefined || !secretsEqual(secret, expected)) throw tokenError('invalid_client', 'The client secret is not valid.');
}

/**
 * Splits the login name: `Instance\user`, or the bare user name with the `instance` field.
 * With both, the name in `username` wins.
 */
export function splitLoginName(username: string, instance: string | undefined): { instanceName: string | undefined; userName: string } {
  const at = username.indexOf('\\');
  if (at >= 0) {
    const prefix = username.slice(0, at);
    if (prefix !== '') return { instanceName: prefix, userName: username.slice(at + 1) };
    return { instanceName: instance, userName: username.slice(at + 1) };
  }
  return { instanceName: instance, userName: username };
}
