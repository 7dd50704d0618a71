/**
 * The signed-in operator: the access token in memory only (never in storage a script of another
 * page could read later), its claims, and the instance the pages act in. The refresh token is a
 * cookie the page cannot read (`HttpOnly`, sent to `/token` only): a reload restores the session
 * with a refresh, and sign-out revokes it.
 */
import { signal, computed } from '@preact/signals';

const CLIENT_ID = 'gatehouseConsole';
/** Sent on every token call: the service refuses the console's token calls without it (CSRF). */
const CSRF = { 'X-Gatehouse-CSRF': '1' };

export type Role = 'Administrator' | 'Operator' | 'ReadOnly' | 'Controller';

export interface Session {
  readonly accessToken: string;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
  readonly userKey: string;
  readonly userName: string;
  readonly instanceKey: string;
  readonly instanceName: string;
  readonly role: Role;
}

export const session = signal<Session | null>(null);
/** True until the first refresh attempt has answered (the page then knows whether a session exists). */
export const restoring = signal(true);
/** The instance the pages act in: the session's, or a child instance chosen in the switcher. */
export const currentInstance = signal<{ readonly key: string; readonly name: string } | null>(null);
export const instanceKey = computed(() => currentInstance.value?.key ?? session.value?.instanceKey ?? '');

/** A refusal of `/token`: its `error` code (the spec's token error table) and description. */
export class TokenRefusal extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
    this.name = 'TokenRefusal';
  }
}

interface TokenAnswer {
  readonly access_token: string;
  readonly expires_in: number;
}

function claimsOf(token: string): Record<string, unknown> {
  const part = token.split('.')[1] ?? '';
  const bytes = Uint8Array.from(atob(part.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
}

function sessionOf(answer: TokenAnswer): Session {
  const c = claimsOf(answer.access_token);
  return {
    accessToken: answer.access_token,
    expiresAt: Date.now() + answer.expires_in * 1000,
    userKey: String(c.sub ?? ''),
    userName: String(c.unm ?? ''),
    instanceKey: String(c.ins ?? ''),
    instanceName: String(c.inm ?? ''),
    role: String(c.role ?? 'ReadOnly') as Role,
  };
}

async function tokenCall(path: string, fields: Record<string, string>): Promise<Response> {
  return fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...CSRF },
    body: new URLSearchParams({ client_id: CLIENT_ID, ...fields }).toString(),
    credentials: 'same-origin',
  });
}

/**
 * Whether this browser holds a console login's cookie, as far as the page knows: the cookie itself
 * is out of a script's reach, so a flag beside it (no secret in it) spares a page load without a
 * login a refresh call that can only be refused.
 */
const LOGIN_FLAG = 'gatehouse.console.signedIn';

function flagLogin(on: boolean): void {
  try {
    if (on) localStorage.setItem(LOGIN_FLAG, '1');
    else localStorage.removeItem(LOGIN_FLAG);
  } catch {
    // Storage refused (private mode): a reload then tries the refresh anyway.
  }
}

function mayHoldLogin(): boolean {
  try {
    return localStorage.getItem(LOGIN_FLAG) !== null;
  } catch {
    return true;
  }
}

async function tokens(fields: Record<string, string>): Promise<Session> {
  const res = await tokenCall('/token', fields);
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new TokenRefusal(String(body.error ?? 'server_error'), String(body.error_description ?? `The sign-in failed (${res.status}).`));
  const next = sessionOf(body as unknown as TokenAnswer);
  session.value = next;
  flagLogin(true);
  return next;
}

export interface SignIn {
  readonly instance: string;
  readonly userName: string;
  readonly password: string;
  readonly oneTimePassword?: string;
  readonly sendOneTimePassword?: boolean;
  readonly newPassword?: string;
}

/** The password grant, with the two-factor and new-password steps' fields when they apply. */
export function signIn(s: SignIn): Promise<Session> {
  return tokens({
    grant_type: 'password',
    instance: s.instance,
    username: s.userName,
    password: s.password,
    ...(s.oneTimePassword ? { onetimepassword: s.oneTimePassword } : {}),
    ...(s.sendOneTimePassword ? { sendonetimepassword: 'true' } : {}),
    ...(s.newPassword ? { newpassword: s.newPassword } : {}),
  });
}

/** Single sign-on's last leg: the one-time code from `/console/callback`, with this page's PKCE verifier. */
export function redeemCode(code: string, codeVerifier: string, redirectUri: string): Promise<Session> {
  return tokens({ grant_type: 'authorization_code', code, code_verifier: codeVerifier, redirect_uri: redirectUri });
}

let refreshing: Promise<Session | null> | null = null;

/** A new access token from the refresh cookie; null (signed out) when there is none or it is refused. */
export function refresh(): Promise<Session | null> {
  refreshing ??= tokens({ grant_type: 'refresh_token' })
    .catch(() => {
      session.value = null;
      flagLogin(false);
      return null;
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/** At page load: a session from the cookie, if the browser has one. */
export async function restore(): Promise<void> {
  try {
    if (mayHoldLogin()) await refresh();
  } finally {
    restoring.value = false;
  }
}

/** Sign-out: the login is revoked (its refresh cookie cleared) and the token forgotten. */
export async function signOut(): Promise<void> {
  try {
    await tokenCall('/token/revoke', {});
  } finally {
    session.value = null;
    currentInstance.value = null;
    flagLogin(false);
  }
}
