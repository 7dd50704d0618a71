import { describe, expect, it } from 'vitest';
import {
  maintainRing,
  newRing,
  parseRing,
  pendingKey,
  publicJwksOf,
  publishLeadSeconds,
  retireAfterSeconds,
  rolloverWrites,
  scheduleKey,
  serializeRing,
  signingKeyAt,
} from '#shared/auth/key-ring.ts';
import type { KeyRing } from '#shared/auth/key-store.ts';
import { refreshing } from '#shared/auth/keys.ts';
import { generateSigningJwk } from '#shared/auth/key-files.ts';

const policy = { keyCacheSeconds: 300, accessTokenTtl: 86_399, rotationDays: 30 };
const T = 1_800_000_000;

describe('key ring', () => {
  it('reads a single private JWK from before rotation as a ring of one, and refuses anything else', async () => {
    const jwk = await generateSigningJwk();
    expect(parseRing(JSON.stringify(jwk))).toEqual({ keys: [{ jwk, signsFrom: 0 }] });
    expect(parseRing(serializeRing(newRing(jwk, T)))).toEqual({ keys: [{ jwk, signsFrom: T }] });
    for (const bad of [undefined, '', 'p1aceh0lder', '{}', '{"keys":[]}', JSON.stringify({ keys: [{ jwk: { ...jwk, d: undefined }, signsFrom: 1 }] })]) {
      expect(parseRing(bad)).toBeUndefined();
    }
  });

  it('publishes a new key twice the cache lifetime before it signs, and retires the old after the token lifetime', async () => {
    const a = await generateSigningJwk();
    const b = await generateSigningJwk();
    const ring = scheduleKey(newRing(a, T), b, T + 100, policy)!;
    expect(publishLeadSeconds(policy)).toBe(600);
    expect(ring.keys).toEqual([
      { jwk: a, signsFrom: T, dropAfter: T + 100 + 600 + retireAfterSeconds(policy) },
      { jwk: b, signsFrom: T + 700 },
    ]);
    expect(publicJwksOf(ring).keys.map((k) => k.kid)).toEqual([a.kid, b.kid]);
    expect(JSON.stringify(publicJwksOf(ring))).not.toMatch(/"d":/);
    expect(signingKeyAt(ring, T + 699).jwk.kid).toBe(a.kid);
    expect(signingKeyAt(ring, T + 700).jwk.kid).toBe(b.kid);
    expect(pendingKey(ring, T + 699)?.jwk.kid).toBe(b.kid);
    expect(scheduleKey(ring, await generateSigningJwk(), T + 200, policy)).toBeUndefined();
  });

  it('maintains: nothing before the rotation is due, a rollover when it is, a drop once the old tokens expired', async () => {
    const a = await generateSigningJwk();
    const generate = () => generateSigningJwk();
    const ring: KeyRing = newRing(a, T);
    expect(await maintainRing(ring, T + 29 * 86_400, policy, generate)).toEqual({ ring, dropped: [] });
    const rolled = await maintainRing(ring, T + 30 * 86_400, policy, generate);
    expect(rolled.scheduled).toBeDefined();
    const switchAt = T + 30 * 86_400 + 600;
    expect((await maintainRing(rolled.ring, switchAt + retireAfterSeconds(policy) - 1, policy, generate)).dropped).toEqual([]);
    const retired = await maintainRing(rolled.ring, switchAt + retireAfterSeconds(policy), policy, generate);
    expect(retired.dropped).toEqual([a.kid]);
    expect(retired.ring.keys.map((k) => k.jwk.kid)).toEqual([rolled.scheduled]);
    // Rotation off: only on demand.
    expect((await maintainRing(ring, T + 400 * 86_400, { ...policy, rotationDays: 0 }, generate)).scheduled).toBeUndefined();
    expect((await maintainRing(ring, T, { ...policy, rotationDays: 0 }, generate, true)).scheduled).toBeDefined();
  });

  it('orders the writes so that every key that may sign is published: JWKS, ring, then the smaller JWKS', async () => {
    const a = await generateSigningJwk();
    const b = await generateSigningJwk();
    const one = newRing(a, T);
    const two = scheduleKey(one, b, T, policy)!;
    expect(rolloverWrites(undefined, one, []).map((w) => w.target)).toEqual(['jwks', 'ring']);
    expect(rolloverWrites(one, one, [a.kid!])).toEqual([]);
    const add = rolloverWrites(one, two, [a.kid!]);
    expect(add.map((w) => w.target)).toEqual(['jwks', 'ring']);
    const dropped: KeyRing = { keys: [two.keys[1]!] };
    const drop = rolloverWrites(two, dropped, [a.kid!, b.kid!]);
    expect(drop.map((w) => w.target)).toEqual(['ring', 'jwks']);
    // A JWKS missing a ring key (a crash between writes) is completed without touching the ring.
    expect(rolloverWrites(two, two, [a.kid!]).map((w) => w.target)).toEqual(['jwks']);
  });
});

describe('refreshing', () => {
  it('reuses a value for its lifetime, reads again after it, and answers the last value for one more lifetime on a failed read', async () => {
    let clock = 0;
    let reads = 0;
    let fail = false;
    const get = refreshing(
      async () => {
        reads++;
        if (fail) throw new Error('unavailable');
        return reads;
      },
      1000,
      () => clock,
    );
    expect(await get()).toBe(1);
    clock = 999;
    expect(await get()).toBe(1);
    expect(await get(true)).toBe(2);
    clock = 2000;
    expect(await get()).toBe(3);
    fail = true;
    clock = 3500;
    expect(await get()).toBe(3);
    clock = 5000;
    await expect(get()).rejects.toThrow('unavailable');
  });
});
