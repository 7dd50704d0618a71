/**
 * The authenticator's verified-token cache: a token is verified once per execution environment
 * and reused until its `exp`, never past it, never for another token string, and the status hook
 * still runs on every call.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rejection } from '../support/oauth.ts';

const verifications = vi.hoisted(() => ({ count: 0 }));
vi.mock('jose/jwt/verify', async (importOriginal) => {
  const jose = await importOriginal<typeof import('jose/jwt/verify')>();
  return {
    ...jose,
    jwtVerify: (...args: Parameters<typeof jose.jwtVerify>) => {
      verifications.count++;
      return jose.jwtVerify(...args);
    },
  };
});

const { issueAccessToken } = await import('#shared/auth/access-tokens.ts');
const { createAuthenticator } = await import('#shared/auth/authenticator.ts');
const { fileKeyStore } = await import('#shared/auth/key-files.ts');
const { loadConfig } = await import('#shared/config.ts');

const config = loadConfig({ GATEHOUSE_ISSUER: 'gh-test', GATEHOUSE_AUDIENCE: 'gh-api' });
const keys = fileKeyStore(mkdtempSync(join(tmpdir(), 'gh-keys-')));
const subject = { userKey: 'a'.repeat(24), userName: 'alice', instanceKey: 'b'.repeat(24), instanceName: 'Acme', role: 'Operator' as const };

afterEach(() => {
  vi.useRealTimers();
});

describe('verified tokens', () => {
  it('are verified once and reused, with the status hook asked every time', async () => {
    const seen: string[] = [];
    const auth = createAuthenticator({ config, keys, checkStatus: async (p) => void seen.push(p.userKey) });
    const t = await issueAccessToken(keys, config, subject, new Date());
    const before = verifications.count;
    for (let i = 0; i < 3; i++) expect(await auth.authenticate(`Bearer ${t.token}`)).toMatchObject({ userKey: subject.userKey, role: 'Operator' });
    expect(verifications.count - before).toBe(1);
    expect(seen).toEqual([subject.userKey, subject.userKey, subject.userKey]);
  });

  it('rejects a token once its exp is reached, even when it was verified before', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2030-01-01T00:00:00Z') });
    const auth = createAuthenticator({ config, keys });
    const t = await issueAccessToken(keys, config, subject, new Date());
    await auth.authenticate(`Bearer ${t.token}`);
    vi.setSystemTime(t.expiresAt.getTime() - 1);
    expect(await auth.authenticate(`Bearer ${t.token}`)).toMatchObject({ userKey: subject.userKey });
    vi.setSystemTime(t.expiresAt.getTime());
    expect(await rejection(auth.authenticate(`Bearer ${t.token}`))).toMatchObject({ status: 401, description: expect.stringMatching(/expired/) });
  });

  it('rejects a tampered copy of a verified token', async () => {
    const auth = createAuthenticator({ config, keys });
    const t = await issueAccessToken(keys, config, subject, new Date());
    await auth.authenticate(`Bearer ${t.token}`);
    const [h, , sig] = t.token.split('.');
    // A character in the middle of the signature (the last one carries padding bits jose ignores).
    const at = t.token.length - 20;
    const flipped = `${t.token.slice(0, at)}${t.token[at] === 'A' ? 'B' : 'A'}${t.token.slice(at + 1)}`;
    expect((await rejection(auth.authenticate(`Bearer ${flipped}`))).code).toBe('unauthorized');
    const payload = Buffer.from(JSON.stringify({ sub: subject.userKey, ins: subject.instanceKey, role: 'Administrator' })).toString('base64url');
    expect((await rejection(auth.authenticate(`Bearer ${h}.${payload}.${sig}`))).code).toBe('unauthorized');
  });

  it('keeps at most the configured number, and verifies again what it let go', async () => {
    const auth = createAuthenticator({ config, keys, verifiedTokens: 1 });
    const a = await issueAccessToken(keys, config, subject, new Date());
    const b = await issueAccessToken(keys, config, { ...subject, userName: 'bob' }, new Date());
    const before = verifications.count;
    for (const t of [a, b, a, b]) await auth.authenticate(`Bearer ${t.token}`);
    expect(verifications.count - before).toBe(4);
    const off = createAuthenticator({ config, keys, verifiedTokens: 0 });
    const start = verifications.count;
    for (let i = 0; i < 2; i++) await off.authenticate(`Bearer ${a.token}`);
    expect(verifications.count - start).toBe(2);
  });
});
