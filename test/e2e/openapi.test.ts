/**
 * The OpenAPI document and the reference page, as a client without a token gets them from the
 * local runtime: the checked-in document with the runtime as its server, cacheable; the page and
 * its script (gzip-encoded for clients that take it) from the package files.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { describe, expect, inject, it } from 'vitest';
import { packagedReferenceBundle } from '#shared/docs/page.ts';
import { DOCUMENT_PATH } from '../../openapi/paths.ts';
import { assertDocumented } from '../support/openapi-validator.ts';

const url = inject('url');

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/**
 * `node:http`: fetch would decode gzip itself, and the test checks the encoding. The answer,
 * decoded, is checked against the document.
 */
async function get(path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const res = await new Promise<RawResponse>((resolve, reject) => {
    const req = request(`${url}${path}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(res.body) : res.body).toString('utf8');
  assertDocumented({ method: 'GET', path, status: res.status, contentType: String(res.headers['content-type'] ?? ''), text });
  return res;
}

describe('GET /api/openapi.json', () => {
  it('answers the checked-in document without a token, with this runtime as its server, cacheable by the browser only', async () => {
    const res = await get('/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    // No GATEHOUSE_PUBLIC_URL here: the server named is the Host the request called, not for shared caches.
    expect(res.headers['cache-control']).toMatch(/^private, max-age=\d+/);
    expect(String(res.headers.vary)).toMatch(/\bHost\b/);
    const served = JSON.parse(res.body.toString('utf8'));
    const { servers: _local, ...checkedIn } = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8'));
    const { servers, ...rest } = served;
    expect(rest).toEqual(checkedIn);
    expect(servers).toEqual([{ url, description: expect.any(String) }]);
    expect(served.openapi).toBe('3.1.0');
  });
});

describe('GET /docs', () => {
  it('answers the reference page, which loads its script and the document from this runtime only', async () => {
    const res = await get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const html = res.body.toString('utf8');
    expect(html).toContain('<script src="/docs/api-reference.js"></script>');
    expect(html).toContain('"url":"/api/openapi.json"');
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('serves the package\'s standalone script, gzip-encoded when the client accepts it', async () => {
    const packaged = readFileSync(packagedReferenceBundle());
    const gz = await get('/docs/api-reference.js', { 'accept-encoding': 'gzip, deflate, br' });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['content-type']).toMatch(/^text\/javascript/);
    expect(gz.body.length).toBeLessThan(packaged.length / 2);
    expect(gunzipSync(gz.body).equals(packaged)).toBe(true);

    const plain = await get('/docs/api-reference.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(packaged)).toBe(true);
  });
});
