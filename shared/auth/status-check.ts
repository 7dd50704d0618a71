/**
 * The authenticator's status hook: a token whose user or instance (or an instance above it) was
 * disabled or deleted after the token was issued is refused, and so is a token of an older
 * session generation than its user's (the user's sessions were revoked: new password, disabled,
 * or "sign out everywhere"), and a token whose role grants more than the user's stored role (the
 * user was demoted: refused like a revoked session, 401, so the client signs in again or
 * refreshes, and gets a token of the current role). A token of a lower role than the stored one
 * (a promotion, or a token deliberately issued for less) is let through: it can do no more than
 * the user may. The answer is cached per execution environment for
 * {@link STATUS_CACHE_MS} (so a change takes effect within a minute) to keep a protected call at
 * no extra reads most of the time: a miss costs one or two BatchGetItem. The session generation
 * is an attribute of the user item that read already returns: it costs nothing more.
 */
import type { Db } from '../db/client.ts';
import { getObjects, ownInstance } from '../db/objects-repo.ts';
import { unauthorized } from '../errors.ts';
import type { Principal, Role } from './principal.ts';
import { ancestorsOf, isDisabled, isInstance, isUser, roleOf } from './directory.ts';

/** How long a status answer is reused: well inside the promised minute. */
export const STATUS_CACHE_MS = 30_000;
const MAX_ENTRIES = 10_000;

export interface StatusCheckOptions {
  readonly db: Db;
  /** The server clock (tests move it past the cache time). */
  readonly now: () => Date;
  readonly cacheMs?: number;
}

/** Why a principal is refused, or 'ok' with the user's current session generation and role. */
export type Verdict = { readonly state: 'ok'; readonly sessionGeneration: number; readonly role: Role } | { readonly state: 'user' | 'instance' };

/** How much a role may do: a token may claim at most its user's stored role. */
const ROLE_RANK: Readonly<Record<Role, number>> = { Controller: 0, ReadOnly: 0, Operator: 1, Administrator: 2 };

/** Why a principal is refused, or 'ok' (reads the user, its instance and the instances above). */
export async function principalStatus(db: Db, p: Pick<Principal, 'userKey' | 'instanceKey'>): Promise<Verdict> {
  const [a, b] = await getObjects(db, [p.userKey, p.instanceKey]);
  const user = [a, b].find((o) => o?.key === p.userKey);
  const instance = [a, b].find((o) => o?.key === p.instanceKey);
  if (!isUser(user) || ownInstance(user) !== p.instanceKey || isDisabled(user)) return { state: 'user' };
  if (!isInstance(instance) || isDisabled(instance)) return { state: 'instance' };
  const above = await ancestorsOf(db, instance);
  return above.some(isDisabled) ? { state: 'instance' } : { state: 'ok', sessionGeneration: user.sessionGeneration ?? 0, role: roleOf(user) };
}

/** Throws 401 when `v` refuses the principal `p` (see the module's comment). */
export function enforceVerdict(p: Pick<Principal, 'role' | 'sessionGeneration'>, v: Verdict): void {
  if (v.state !== 'ok') throw unauthorized(`The ${v.state} of this token is disabled or no longer exists.`);
  if ((p.sessionGeneration ?? 0) < v.sessionGeneration) throw unauthorized('The sessions of this user were revoked; sign in again.');
  // A Controller's rights are not a rank below the others' (it may record reads, not read objects):
  // a token of that role and a user of another (or the reverse) is a changed role.
  if (ROLE_RANK[p.role] > ROLE_RANK[v.role] || (p.role !== v.role && (p.role === 'Controller' || v.role === 'Controller'))) {
    throw unauthorized('The role of this user changed; sign in again.');
  }
}

/**
 * The status check without a cache: what the live channels ask when a connection opens, subscribes
 * or is checked again, so a revoked user's feed ends within their own bound, not the cache's.
 */
export async function checkPrincipalNow(db: Db, p: Principal): Promise<void> {
  enforceVerdict(p, await principalStatus(db, p));
}

export function createStatusCheck(opts: StatusCheckOptions): (p: Principal) => Promise<void> {
  const ttl = opts.cacheMs ?? STATUS_CACHE_MS;
  const cache = new Map<string, { until: number; verdict: Promise<Verdict> }>();
  return async (p) => {
    const now = opts.now().getTime();
    const id = `${p.userKey}|${p.instanceKey}`;
    let hit = cache.get(id);
    if (!hit || hit.until <= now) {
      if (cache.size >= MAX_ENTRIES) {
        for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
        if (cache.size >= MAX_ENTRIES) cache.clear();
      }
      const verdict = principalStatus(opts.db, p);
      hit = { until: now + ttl, verdict };
      cache.set(id, hit);
      // A failed read is not an answer: do not keep it.
      verdict.catch(() => cache.delete(id));
    }
    enforceVerdict(p, await hit.verdict);
  };
}
