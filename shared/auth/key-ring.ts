/**
 * Signing-key rollover, as data: the private keys of a deployment form a ring, each key with the
 * time it starts signing and, once a newer key is scheduled to take over, the time its public key
 * stops being published. Every step is a pure function of the ring and the clock, so the
 * scheduled key manager (functions/keygen in AWS, the local runtime's timer), the admin command
 * and the signers agree without talking to each other:
 *
 * 1. **Publish.** A new key is added with `signsFrom` = now + {@link publishLeadSeconds}: its
 *    public key is in the JWKS at once, and every execution environment re-reads the JWKS within
 *    one key-cache lifetime, so every verifier knows it before any token carries its `kid`.
 * 2. **Sign.** Signers keep the whole ring (re-read on the same cache lifetime) and sign with the
 *    newest key whose `signsFrom` has passed, by their own clock: they switch at that instant
 *    without any further write. A signer that read the ring before the new key was added has
 *    re-read it before `signsFrom` (the lead is longer than the cache lifetime).
 * 3. **Retire.** The key it replaces gets `dropAfter` = the new key's `signsFrom` + the access
 *    token lifetime + one cache lifetime (clock skew, a late read): by then every token it signed
 *    has expired, and the next maintenance run takes it out of the ring and the JWKS.
 *
 * Refresh tokens are opaque random strings kept as hashes in the table: they do not depend on the
 * signing key, so the overlap only has to cover access tokens.
 */
import type { JSONWebKeySet, JWK } from 'jose';
import { signingKeyAt, type KeyRing, type RingKey } from './key-store.ts';

/** The key that signs at a time (in key-store.ts: the table store signs with it without loading the rest of the ring's code). */
export { signingKeyAt };

export interface RotationPolicy {
  /** How long an execution environment reuses the keys it read (`GATEHOUSE_KEY_CACHE_SECONDS`). */
  readonly keyCacheSeconds: number;
  /** The access-token lifetime in seconds (`GATEHOUSE_ACCESS_TOKEN_TTL`). */
  readonly accessTokenTtl: number;
  /** Days a key signs before the maintenance schedules the next one; 0: only on demand. */
  readonly rotationDays: number;
}

/** How long before it signs a new key is published: twice the key-cache lifetime. */
export const publishLeadSeconds = (p: Pick<RotationPolicy, 'keyCacheSeconds'>): number => 2 * p.keyCacheSeconds;

/** How long after its successor starts signing a replaced key is still published. */
export const retireAfterSeconds = (p: Pick<RotationPolicy, 'keyCacheSeconds' | 'accessTokenTtl'>): number =>
  p.accessTokenTtl + p.keyCacheSeconds;

/** The public half of a private JWK. */
export function publicJwk(jwk: JWK): JWK {
  const { d: _d, ...pub } = jwk;
  void _d;
  return pub;
}

const isPrivateJwk = (v: unknown): v is JWK =>
  typeof v === 'object' && v !== null && typeof (v as JWK).d === 'string' && typeof (v as JWK).kid === 'string' && (v as JWK).kid !== '';

/**
 * Reads a stored ring. A single private JWK (what deployments stored before rotation existed) is
 * a ring of that one key, signing since ever. Undefined when the text is neither (a new secret's
 * random placeholder, a damaged file).
 */
export function parseRing(text: string | undefined): KeyRing | undefined {
  if (!text) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (isPrivateJwk(v)) return { keys: [{ jwk: v, signsFrom: 0 }] };
  const keys = (v as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) return undefined;
  const out: RingKey[] = [];
  for (const k of keys as Array<Partial<RingKey>>) {
    if (!isPrivateJwk(k?.jwk) || typeof k.signsFrom !== 'number') return undefined;
    if (k.dropAfter !== undefined && typeof k.dropAfter !== 'number') return undefined;
    out.push({ jwk: k.jwk, signsFrom: k.signsFrom, ...(k.dropAfter !== undefined ? { dropAfter: k.dropAfter } : {}) });
  }
  return { keys: out };
}

export const serializeRing = (ring: KeyRing): string => JSON.stringify({ keys: ring.keys });

/** The kids of a ring (or of a JWKS), oldest first. */
export const kidsOf = (x: KeyRing | JSONWebKeySet): string[] =>
  'keys' in x ? (x.keys as ReadonlyArray<RingKey | JWK>).map((k) => ('jwk' in k ? (k.jwk.kid ?? '') : (k.kid ?? ''))) : [];

/** The public JWKS of a ring: every key in it (scheduled, signing, and retiring). */
export function publicJwksOf(ring: KeyRing): JSONWebKeySet {
  return { keys: ring.keys.map((k) => publicJwk(k.jwk)) };
}

/** A key scheduled to sign later than `nowS`, if any. */
export const pendingKey = (ring: KeyRing, nowS: number): RingKey | undefined => ring.keys.find((k) => k.signsFrom > nowS);

/** A new ring of one key that signs at once (a new deployment, or a ring that could not be read). */
export const newRing = (jwk: JWK, nowS: number): KeyRing => ({ keys: [{ jwk, signsFrom: nowS }] });

/**
 * Schedules `jwk` to sign from `nowS` + the publish lead and sets the retirement of every key it
 * replaces. Refused (undefined) while another key is still waiting to sign: one rollover at a time.
 */
export function scheduleKey(ring: KeyRing, jwk: JWK, nowS: number, policy: RotationPolicy): KeyRing | undefined {
  if (pendingKey(ring, nowS)) return undefined;
  const signsFrom = nowS + publishLeadSeconds(policy);
  const dropAfter = signsFrom + retireAfterSeconds(policy);
  return {
    keys: [...ring.keys.map((k) => (k.dropAfter === undefined ? { ...k, dropAfter } : k)), { jwk, signsFrom }],
  };
}

/** What one maintenance step did. */
export interface Maintenance {
  readonly ring: KeyRing;
  /** The kid of a key scheduled by this step. */
  readonly scheduled?: string;
  /** Kids dropped by this step. */
  readonly dropped: readonly string[];
}

/**
 * One maintenance step at `nowS`: drops the keys whose `dropAfter` has passed (never the key that
 * signs), then, with `rotate` or when the signing key is `rotationDays` old and nothing is
 * pending, schedules a new key (`generate` is called only then).
 */
export async function maintainRing(
  ring: KeyRing,
  nowS: number,
  policy: RotationPolicy,
  generate: () => Promise<JWK>,
  rotate = false,
): Promise<Maintenance> {
  const signing = signingKeyAt(ring, nowS);
  const kept = ring.keys.filter((k) => k === signing || k.dropAfter === undefined || k.dropAfter > nowS);
  const dropped = ring.keys.filter((k) => !kept.includes(k)).map((k) => k.jwk.kid!);
  let next: KeyRing = { keys: kept };
  const due = policy.rotationDays > 0 && signing.signsFrom + policy.rotationDays * 86_400 <= nowS;
  if ((rotate || due) && !pendingKey(next, nowS)) {
    const jwk = await generate();
    next = scheduleKey(next, jwk, nowS, policy)!;
    return { ring: next, scheduled: jwk.kid!, dropped };
  }
  return { ring: next, dropped };
}

/**
 * The writes that move the stored ring and JWKS from `before` to `after` without a moment where a
 * signer's key is unpublished: first a JWKS listing both rings' keys (when `after` adds one), then
 * the ring, then the JWKS of `after` alone (when `after` dropped one). Empty when nothing changes.
 */
export function rolloverWrites(
  before: KeyRing | undefined,
  after: KeyRing,
  publishedKids: readonly string[],
): Array<{ readonly target: 'jwks'; readonly value: JSONWebKeySet } | { readonly target: 'ring'; readonly value: KeyRing }> {
  const writes: ReturnType<typeof rolloverWrites> = [];
  const afterKids = kidsOf(after);
  const beforeKids = before ? kidsOf(before) : [];
  const union: JWK[] = [...(before?.keys ?? []), ...after.keys.filter((k) => !beforeKids.includes(k.jwk.kid!))].map((k) => publicJwk(k.jwk));
  const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((k) => b.includes(k));
  // 1. Every key of `after` published (beside the ones still signing before).
  if (afterKids.some((k) => !publishedKids.includes(k))) {
    writes.push({ target: 'jwks', value: { keys: before ? union : publicJwksOf(after).keys } });
  }
  // 2. The ring.
  if (!before || serializeRing(before) !== serializeRing(after)) writes.push({ target: 'ring', value: after });
  // 3. The JWKS of `after` alone.
  const last = writes.filter((w) => w.target === 'jwks').at(-1);
  const publishedNow = last ? kidsOf(last.value as JSONWebKeySet) : publishedKids;
  if (!sameSet(publishedNow, afterKids)) writes.push({ target: 'jwks', value: publicJwksOf(after) });
  return writes;
}
