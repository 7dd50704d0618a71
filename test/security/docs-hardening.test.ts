/**
 * Issue #34, finding 9 (a) and (c): the API's documentation routes.
 *
 * (a) `/api/openapi.json` wrote the request's `Host` into `servers` and let shared caches keep it
 * (`public, max-age=300`): one forged request could hand every reader of the reference page a
 * document whose "try it" sends their token to another host. Configured, the public base URL is
 * the server whatever the Host says; unconfigured, the Host-derived answer is `private` and
 * varies by Host.
 *
 * (c) `/docs` had no Content-Security-Policy: it is now strict (no inline script but its own,
 * by hash; no other origin; no framing). test/e2e/docs-page.test.ts renders it in Chromium.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi } from '../support/tokens.ts';

const FORGED = { host: 'evil.example', 'x-forwarded-proto': 'https' };

describe('GET /api/openapi.json', () => {
  let configured: TestDb;
  let unconfigured: TestDb;

  beforeAll(async () => {
    configured = await createTestDb({ GATEHOUSE_PUBLIC_URL: 'https://api.gatehouse.example/' });
    unconfigured = await createTestDb();
  });

  afterAll(() => {
    configured?.db.raw.destroy();
    unconfigured?.db.raw.destroy();
  });

  it('names the configured public base URL whatever Host the request carries, and may be cached by anyone', async () => {
    const { api } = await setupApi(configured);
    const res = await api.get('/api/openapi.json', { headers: FORGED });
    expect(res.status).toBe(200);
    expect(res.body.servers).toEqual([{ url: 'https://api.gatehouse.example', description: expect.any(String) }]);
    expect(res.text).not.toContain('evil.example');
    expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
  });

  it('without a configured URL, keeps a Host-derived answer out of shared caches', async () => {
    const { api } = await setupApi(unconfigured);
    const res = await api.get('/api/openapi.json', { headers: FORGED });
    expect(res.status).toBe(200);
    expect(res.body.servers).toEqual([{ url: 'https://evil.example', description: expect.any(String) }]);
    expect(res.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
    expect(res.headers.vary?.split(',').map((v) => v.trim().toLowerCase())).toContain('host');
  });
});

describe('GET /docs', () => {
  let t: TestDb;

  beforeAll(async () => {
    t = await createTestDb();
  });

  afterAll(() => t?.db.raw.destroy());

  it('is served with a strict Content-Security-Policy that allows only its own script and origin', async () => {
    const { api } = await setupApi(t);
    const res = await api.get('/docs');
    expect(res.status).toBe(200);
    const csp = res.headers['content-security-policy'];
    expect(csp).toBeDefined();
    const directives = new Map(
      csp!.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name!, values] as const;
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(directives.get('form-action')).toEqual(["'none'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    // Scripts: this origin and the page's one inline script, by its hash; never any inline script or eval.
    const scripts = directives.get('script-src')!;
    expect(scripts).not.toContain("'unsafe-inline'");
    expect(scripts).not.toContain("'unsafe-eval'");
    const inline = [...res.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(inline).toHaveLength(1);
    const hash = `'sha256-${createHash('sha256').update(inline[0]!).digest('base64')}'`;
    expect(scripts.sort()).toEqual(["'self'", hash].sort());
    // Nothing from another origin in any directive.
    expect(csp).not.toMatch(/https?:|\*/);
  });
});
