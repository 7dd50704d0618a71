import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT, base64url, importJWK, type CryptoKey } from 'jose';
import { describe, expect, it } from 'vitest';
import { rejection } from '../support/oauth.ts';
import { issueAccessToken, newRefreshToken, refreshTokenHash } from '#shared/auth/access-tokens.ts';
import { createAuthenticator, principalFromClaims } from '#shared/auth/authenticator.ts';
import { publicJwk } from '#shared/auth/key-ring.ts';
import { fileKeyStore, generateSigningJwk } from '#shared/auth/key-files.ts';
import { loadConfig } from '#shared/config.ts';
import { OAuthError } from '#shared/errors.ts';
import type { Principal } from '#shared/auth/principal.ts';

const config = loadConfig({ GATEHOUSE_ISSUER: 'gh-test', GATEHOUSE_AUDIENCE: 'gh-api' });
const keys = fileKeyStore(mkdtempSync(join(tmpdir(), 'gh-keys-')));
const subject = { userKey: 'a'.repeat(24), userName: 'alice', instanceKey: 'b'.repeat(24), instanceName: 'Acme', role: 'Operator' as const };

describe('access tokens', () => {
  const auth = createAuthenticator({ config, keys });

  it('are ES256 JWTs with kid, iss, aud, sub, the instance key, iat, exp and jti', async () => {
    const now = new Date();
    const t = await issueAccessToken(keys, config, subject, now);
    const [h, p] = t.token.split('.');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    expect(header).toMatchObject({ alg: 'ES256', kid: (await keys.signingKey()).kid });
    expect(payload).toMatchObject({ iss: 'gh-test', aud: 'gh-api', sub: subject.userKey, ins: subject.instanceKey, inm: 'Acme', unm: 'alice', role: 'Operator' });
    expect(payload.exp - payload.iat).toBe(86399);
    expect(typeof payload.jti).toBe('string');
    expect(t.expiresIn).toBe(86399);
  });

  it('verify into the principal', async () => {
    const t = await issueAccessToken(keys, config, subject, new Date());
    const p = await auth.authenticate(`Bearer ${t.token}`);
    expect(p).toMatchObject({ userKey: subject.userKey, instanceKey: subject.instanceKey, userName: 'alice', instanceName: 'Acme', role: 'Operator' });
  });

  it('rejects a missing or malformed Authorization header with 401 unauthorized', async () => {
    for (const header of [undefined, '', 'Basic abc', 'Bearer', 'Bearer not a token', 'Bearer a.b.c']) {
      const r = await rejection(auth.authenticate(header));
      expect(r).toMatchObject({ status: 401, code: 'unauthorized' });
    }
  });

  it('rejects an expired token', async () => {
    const t = await issueAccessToken(keys, config, subject, new Date(Date.now() - 2 * 86400_000));
    expect(await rejection(auth.authenticate(`Bearer ${t.token}`))).toMatchObject({ status: 401, code: 'unauthorized', description: expect.stringMatching(/expired/) });
  });

  it('rejects a token signed by another key', async () => {
    const other = fileKeyStore(mkdtempSync(join(tmpdir(), 'gh-keys-')));
    const t = await issueAccessToken(other, config, subject, new Date());
    expect((await rejection(auth.authenticate(`Bearer ${t.token}`))).code).toBe('unauthorized');
  });

  it('rejects a token for another audience or issuer', async () => {
    for (const cfg of [{ ...config, audience: 'elsewhere' }, { ...config, issuer: 'someone-else' }]) {
      const t = await issueAccessToken(keys, cfg, subject, new Date());
      expect((await rejection(auth.authenticate(`Bearer ${t.token}`))).code).toBe('unauthorized');
    }
  });

  it('rejects alg none and HS256 signed with the public key', async () => {
    const claims = { ins: subject.instanceKey, inm: 'Acme', unm: 'alice', role: 'Administrator' };
    const none = new UnsecuredJWT(claims).setSubject(subject.userKey).setIssuer('gh-test').setAudience('gh-api').setIssuedAt().setExpirationTime('1h').setJti('x').encode();
    expect((await rejection(auth.authenticate(`Bearer ${none}`))).code).toBe('unauthorized');
    const pub = (await keys.publicKeys()).keys[0]!;
    const secret = new TextEncoder().encode(JSON.stringify(pub));
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: pub.kid! })
      .setSubject(subject.userKey)
      .setIssuer('gh-test')
      .setAudience('gh-api')
      .setIssuedAt()
      .setExpirationTime('1h')
      .setJti('x')
      .sign(secret);
    expect((await rejection(auth.authenticate(`Bearer ${hs}`))).code).toBe('unauthorized');
  });

  it('rejects a validly signed token that lacks the Gatehouse claims', async () => {
    const { key, kid } = await keys.signingKey();
    const t = await new SignJWT({ role: 'Administrator' })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setSubject('x')
      .setIssuer('gh-test')
      .setAudience('gh-api')
      .setIssuedAt()
      .setExpirationTime('1h')
      .setJti('x')
      .sign(key);
    expect((await rejection(auth.authenticate(`Bearer ${t}`))).code).toBe('unauthorized');
  });

  it('asks the status hook about every verified principal', async () => {
    const seen: Principal[] = [];
    const refusing = createAuthenticator({
      config,
      keys,
      checkStatus: async (p) => {
        seen.push(p);
        throw new OAuthError('unauthorized', 'disabled', 401);
      },
    });
    const t = await issueAccessToken(keys, config, subject, new Date());
    expect((await rejection(refusing.authenticate(`Bearer ${t.token}`))).status).toBe(401);
    expect(seen.map((p) => p.userKey)).toEqual([subject.userKey]);
  });
});

describe('the first token of an environment (keys not read yet)', () => {
  /** The store's public keys, answered only when `release` is called: the read a cold environment waits for. */
  function slowKeys() {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reads = 0;
    const store = {
      signingKey: keys.signingKey,
      publicKeys: async () => {
        reads++;
        await gate;
        return keys.publicKeys();
      },
    };
    return { store, release, reads: () => reads };
  }

  it('lets a read-only caller go ahead on the claims while the keys are read, and decides with the verdict', async () => {
    const k = slowKeys();
    const auth = createAuthenticator({ config, keys: k.store });
    const t = await issueAccessToken(keys, config, subject, new Date());
    const { principal, status } = await auth.authenticateDeferred!(`Bearer ${t.token}`);
    // Answered before the keys arrived: the claims, not yet verified.
    expect(principal).toMatchObject({ userKey: subject.userKey, instanceKey: subject.instanceKey, role: 'Operator' });
    expect(k.reads()).toBe(1);
    let settled = false;
    void status.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    k.release();
    await expect(status).resolves.toBeUndefined();
  });

  it('refuses a forged token through its deferred verdict, before its status is reported', async () => {
    const k = slowKeys();
    const statusSeen: string[] = [];
    const auth = createAuthenticator({
      config,
      keys: k.store,
      checkStatus: async (p) => {
        statusSeen.push(p.userKey);
        throw new OAuthError('unauthorized', 'The user is disabled.', 401);
      },
    });
    const other = fileKeyStore(mkdtempSync(join(tmpdir(), 'gh-keys-')));
    const forged = await issueAccessToken(other, config, subject, new Date());
    const { status } = await auth.authenticateDeferred!(`Bearer ${forged.token}`);
    k.release();
    // The token's refusal, not the status of the user it names.
    expect(await rejection(status)).toMatchObject({ status: 401, description: 'The access token is not valid.' });
  });

  it('verifies first once the keys are known: a forged token is refused before anything runs', async () => {
    const k = slowKeys();
    k.release();
    const auth = createAuthenticator({ config, keys: k.store });
    const t = await issueAccessToken(keys, config, subject, new Date());
    await (await auth.authenticateDeferred!(`Bearer ${t.token}`)).status;
    const other = fileKeyStore(mkdtempSync(join(tmpdir(), 'gh-keys-')));
    const forged = await issueAccessToken(other, config, subject, new Date());
    expect(await rejection(auth.authenticateDeferred!(`Bearer ${forged.token}`))).toMatchObject({ status: 401 });
  });

  it('does not defer a token that does not even carry our claims', async () => {
    const k = slowKeys();
    const auth = createAuthenticator({ config, keys: k.store });
    const bare = await new SignJWT({}).setProtectedHeader({ alg: 'ES256' }).sign((await keys.signingKey()).key);
    const pending = auth.authenticateDeferred!(`Bearer ${bare}`);
    k.release();
    expect(await rejection(pending)).toMatchObject({ status: 401 });
  });

  it('starts the key read and the status check together, for a caller that waits for the verdict too', async () => {
    const k = slowKeys();
    const started: string[] = [];
    let inside = false;
    const auth = createAuthenticator({
      config,
      keys: { ...k.store, publicKeys: async () => (started.push(`keys${inside ? ' together' : ''}`), k.store.publicKeys()) },
      checkStatus: async (p) => {
        started.push(`status ${p.userKey}${inside ? ' together' : ''}`);
      },
      together: (fn) => {
        inside = true;
        try {
          return fn();
        } finally {
          inside = false;
        }
      },
    });
    const t = await issueAccessToken(keys, config, subject, new Date());
    const pending = auth.authenticate(`Bearer ${t.token}`);
    await new Promise((r) => setTimeout(r, 20));
    // Both reads started in the same gathering, before the keys arrived; nothing answered yet.
    expect(started.sort()).toEqual(['keys together', `status ${subject.userKey} together`]);
    k.release();
    await expect(pending).resolves.toMatchObject({ userKey: subject.userKey, role: 'Operator' });
    // A forged token on another new environment: the token's refusal, whatever the status says.
    const k2 = slowKeys();
    const refusing = createAuthenticator({
      config,
      keys: k2.store,
      checkStatus: async () => {
        throw new OAuthError('unauthorized', 'The user is disabled.', 401);
      },
    });
    const forged = await issueAccessToken(fileKeyStore(mkdtempSync(join(tmpdir(), 'gh-keys-'))), config, subject, new Date());
    const refused = refusing.authenticate(`Bearer ${forged.token}`);
    k2.release();
    expect(await rejection(refused)).toMatchObject({ status: 401, description: 'The access token is not valid.' });
  });

  it('answers a key store failure as the service\'s, not as a bad token', async () => {
    const failing = { signingKey: keys.signingKey, publicKeys: async () => Promise.reject(new Error('table unreachable')) };
    const auth = createAuthenticator({ config, keys: failing });
    const t = await issueAccessToken(keys, config, subject, new Date());
    await expect(auth.authenticate(`Bearer ${t.token}`)).rejects.toThrow('table unreachable');
    await expect((await auth.authenticateDeferred!(`Bearer ${t.token}`)).status).rejects.toThrow('table unreachable');
  });
});

describe('claim parsing', () => {
  it('maps the claims to a principal', () => {
    expect(principalFromClaims({ sub: 'u', ins: 'i', inm: 'I', unm: 'U', role: 'ReadOnly', jti: 'j' })).toEqual({
      userKey: 'u',
      instanceKey: 'i',
      instanceName: 'I',
      userName: 'U',
      role: 'ReadOnly',
      tokenId: 'j',
    });
  });

  it.each([{ ins: 'i', inm: 'I', unm: 'U', role: 'ReadOnly', jti: 'j' }, { sub: 'u', ins: 'i', inm: 'I', unm: 'U', role: 'Root', jti: 'j' }, { sub: 'u', inm: 'I', unm: 'U', role: 'Operator', jti: 'j' }])(
    'rejects incomplete claims %j',
    (claims) => {
      expect(() => principalFromClaims(claims)).toThrow(OAuthError);
    },
  );
});

describe('refresh tokens', () => {
  it('are 256 random bits, stored as their SHA-256', () => {
    const a = newRefreshToken();
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(a).not.toBe(newRefreshToken());
    expect(refreshTokenHash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(refreshTokenHash(a)).not.toContain(a);
  });
});

// Keep the imports honest: the private JWK never leaks its `d` through publicJwk.
describe('key material', () => {
  it('publishes only the public half', async () => {
    const jwk = await generateSigningJwk();
    expect(publicJwk(jwk)).not.toHaveProperty('d');
    const key = (await importJWK(publicJwk(jwk), 'ES256')) as CryptoKey;
    expect(key.type).toBe('public');
    expect(base64url.decode(jwk.x!)).toHaveLength(32);
  });
});
