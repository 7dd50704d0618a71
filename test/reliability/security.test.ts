/**
 * Security posture: JWT algorithms are an allow-list (ES256 only), CORS is closed by default and
 * opened only to configured origins, and the logger redacts secrets wherever they are nested.
 */
import { generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '#shared/logger.ts';
import { createApi } from '../support/api.ts';
import { createTestDb } from '../support/db.ts';
import { setupApi, testDeps, type Tenant } from '../support/tokens.ts';

let api: ReturnType<typeof createApi>;
let openApi: ReturnType<typeof createApi>;
let root: Tenant;

beforeAll(async () => {
  const t = await createTestDb();
  ({ api, root } = await setupApi(t));
  const open = await createTestDb({ GATEHOUSE_CORS_ORIGINS: 'https://console.example, https://ops.example' });
  openApi = createApi(testDeps(open));
}, 60_000);

afterEach(() => {
  vi.restoreAllMocks();
});

/** The claims of a valid token, re-signed with another algorithm. */
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe('JWT algorithm allow-list', () => {
  it('accepts the ES256 token it issued', async () => {
    expect((await api.get('/api', { token: root.tokens.ReadOnly })).status).toBe(200);
  });

  it.each([
    ['HS256', async (c: Record<string, unknown>) => new SignJWT(c).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(32)))],
    ['RS256', async (c: Record<string, unknown>) => new SignJWT(c).setProtectedHeader({ alg: 'RS256' }).sign((await generateKeyPair('RS256')).privateKey)],
    ['ES384', async (c: Record<string, unknown>) => new SignJWT(c).setProtectedHeader({ alg: 'ES384' }).sign((await generateKeyPair('ES384')).privateKey)],
    ['none', async (c: Record<string, unknown>) => new UnsecuredJWT(c).encode()],
    ['none with an empty signature and kid', async (c: Record<string, unknown>) => `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(c)).toString('base64url')}.`],
  ])('rejects a token signed with %s', async (_alg, sign) => {
    const token = await sign(claimsOf(root.tokens.Administrator));
    const r = await api.get('/api', { token });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
  });
});

describe('CORS', () => {
  it('rejects a foreign origin by default: no Access-Control-Allow-Origin', async () => {
    const r = await api.get('/api/sysinfo', { headers: { origin: 'https://evil.example' } });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    const err = await api.get('/api', { headers: { origin: 'https://evil.example' } });
    expect(err.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('allows exactly the configured origins', async () => {
    const ok = await openApi.get('/api/sysinfo', { headers: { origin: 'https://ops.example' } });
    expect(ok.headers['access-control-allow-origin']).toBe('https://ops.example');
    // A page may read where a created object is, when to retry and the rate limits left.
    expect(ok.headers['access-control-expose-headers']).toBe('Location, Retry-After, RateLimit, RateLimit-Policy');
    const evil = await openApi.get('/api/sysinfo', { headers: { origin: 'https://evil.example' } });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    expect(evil.headers['access-control-allow-origin']).not.toBe('*');
  });
});

describe('log redaction', () => {
  it('redacts passwords, tokens, codes and secrets wherever they are nested', () => {
    const lines: string[] = [];
    const capture = (chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(capture as typeof process.stdout.write);
    vi.spyOn(console, 'info').mockImplementation((...a: unknown[]) => void lines.push(a.map(String).join(' ')));
    vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.map(String).join(' ')));
    const logger = createLogger({ logLevel: 'INFO' });
    const secrets = ['hunter2-password', 'refresh-abc-123', 'client-secret-xyz', '492817', root.tokens.Administrator];
    logger.info('token request', {
      form: { grant_type: 'password', username: 'admin', password: secrets[0], client_secret: secrets[2] },
      refresh_token: secrets[1],
      one_time_code: secrets[3],
      headers: { authorization: `Bearer ${secrets[4]}` },
      nested: [{ deeper: { access_token: secrets[4], oneTimeCode: secrets[3] } }],
    });
    const out = lines.join('\n');
    expect(out).toContain('token request');
    expect(out).toContain('admin');
    for (const s of secrets) expect(out).not.toContain(s);
  });
});
