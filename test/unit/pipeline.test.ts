import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createHandler as createServiceHandler } from '#functions/service/handler.ts';
import { fileKeyStore } from '#shared/auth/key-files.ts';
import { loadConfig } from '#shared/config.ts';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { StoreUnavailable, notFound, unauthorized } from '#shared/errors.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { ok, type Operation } from '#shared/http/operation-contract.ts';
import { httpEvent, lambdaContext } from '../support/api.ts';

function makeDeps(env: Record<string, string> = {}): CoreDeps {
  const config = loadConfig({ GATEHOUSE_LOG_LEVEL: 'SILENT', GATEHOUSE_DATA_DIR: mkdtempSync(join(tmpdir(), 'gh-')), ...env });
  return createCoreDeps({ config, keys: fileKeyStore(config.dataDir), checkStatus: false });
}

const echo: Operation = async (req) => ok({ body: req.body, query: req.query, params: req.params, user: req.principal?.userName });

async function run(handler: ReturnType<typeof makeHandler>, method: string, path: string, opts: Parameters<typeof httpEvent>[2] = {}) {
  const res = await handler(httpEvent(method, path, opts), lambdaContext());
  return { status: res.statusCode, headers: res.headers ?? {}, text: res.body ?? '', body: res.body ? JSON.parse(res.body) : undefined };
}

const K = '0123456789abcdef01234567';

describe('function pipeline', () => {
  const deps = makeDeps();
  const service = createServiceHandler(() => deps);
  const events = makeHandler({ family: 'events', operations: { lastEvent: echo }, deps: () => deps });

  it('answers a complete SysInfo without authentication', async () => {
    const res = await run(service, 'GET', '/api/sysinfo');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.$type).toBe('Gatehouse.Model.SysInfo, Gatehouse.Model');
    expect(res.body.Version).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(typeof res.body.ServerId).toBe('string');
    expect(new Date(res.body.ServerTime).toISOString()).toBe(res.body.ServerTime);
    for (const f of ['EventPublisherUrl', 'FitScriptEngineUrl', 'LicenseServerUrl', 'UapBrokerUrl', 'PrinterConnectApiUrl', 'AacClientUrl', 'GalleryIsEnabled']) {
      expect(res.body).toHaveProperty(f);
    }
    expect(res.body.ReleaseNotes[0]).toMatchObject({ $type: 'Gatehouse.Model.ReleaseNote, Gatehouse.Model', Url: expect.stringContaining('CHANGELOG') });
  });

  it('uses the configured model namespace', async () => {
    const d = makeDeps({ GATEHOUSE_MODEL_NAMESPACE: 'Acme.Cloud' });
    const res = await run(createServiceHandler(() => d), 'GET', '/api/sysinfo');
    expect(res.body.$type).toBe('Acme.Cloud.SysInfo, Acme.Cloud');
  });

  it('rejects an unknown route with a JSON 404', async () => {
    const res = await run(service, 'GET', '/no/such/thing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ Error: 'NotFound', Message: expect.any(String) });
  });

  it('rejects malformed JSON with 400 InvalidJson before authentication', async () => {
    const res = await run(events, 'POST', `/api/f/${K}/lastevent`, { body: '{"a":', contentType: 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.Error).toBe('InvalidJson');
  });

  it('rejects a body over the limit with 413 PayloadTooLarge', async () => {
    const res = await run(events, 'POST', `/api/f/${K}/lastevent`, { body: JSON.stringify({ s: 'x'.repeat(1_048_577) }) });
    expect(res.status).toBe(413);
    expect(res.body.Error).toBe('PayloadTooLarge');
  });

  it('rejects a protected call without a valid token with 401 unauthorized', async () => {
    const missing = await run(events, 'GET', `/api/f/${K}/lastevent`);
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });

    const none = new UnsecuredJWT({ sub: 'u', ins: K, inm: 'x', unm: 'u', role: 'Administrator', jti: 'j' })
      .setIssuer(deps.config.issuer).setAudience(deps.config.audience).setIssuedAt().setExpirationTime('1h').encode();
    expect((await run(events, 'GET', `/api/f/${K}/lastevent`, { token: none })).status).toBe(401);

    const other = await new SignJWT({ ins: K, inm: 'x', unm: 'u', role: 'Administrator' })
      .setProtectedHeader({ alg: 'HS256' }).setSubject('u').setJti('j').setIssuer(deps.config.issuer)
      .setAudience(deps.config.audience).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode('k'.repeat(32)));
    expect((await run(events, 'GET', `/api/f/${K}/lastevent`, { token: other })).status).toBe(401);
    expect((await run(events, 'GET', `/api/f/${K}/lastevent`, { headers: { authorization: 'Basic abc' } })).status).toBe(401);
  });

  it('passes a GET body, repeated query values and path parameters to the operation', async () => {
    const { key, kid } = await deps.keys.signingKey();
    const token = await new SignJWT({ ins: K, inm: 'Acme', unm: 'ann', role: 'Operator' })
      .setProtectedHeader({ alg: 'ES256', kid }).setSubject(K).setJti('j1').setIssuer(deps.config.issuer)
      .setAudience(deps.config.audience).setIssuedAt().setExpirationTime('1h').sign(key);
    const res = await run(events, 'GET', `/api/f/${K}/lastevent`, { token, body: [K], query: { forKeys: ['a', 'b'] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ body: [K], query: { forKeys: ['a', 'b'] }, params: { folderKey: K }, user: 'ann' });
  });

  it("runs a GET (or a route marked as reading) beside the caller's status check and answers only once both are done", async () => {
    const order: string[] = [];
    let refuse = false;
    const d = makeDeps();
    const slow = createCoreDeps({
      config: d.config,
      keys: d.keys,
      checkStatus: async () => {
        order.push('status started');
        await new Promise((r) => setTimeout(r, 30));
        order.push('status done');
        if (refuse) throw unauthorized('The user of this token is disabled or no longer exists.');
      },
    });
    const traced: Operation = async (req) => {
      order.push('operation');
      if (req.method === 'GET' && req.query.missing) throw notFound('No such thing.');
      return ok({ user: req.principal?.userName });
    };
    const h = makeHandler({ family: 'events', operations: { lastEvent: traced, publish: traced }, deps: () => slow });
    const { key, kid } = await d.keys.signingKey();
    const token = await new SignJWT({ ins: K, inm: 'Acme', unm: 'ann', role: 'Operator' })
      .setProtectedHeader({ alg: 'ES256', kid }).setSubject(K).setJti('j2').setIssuer(d.config.issuer)
      .setAudience(d.config.audience).setIssuedAt().setExpirationTime('1h').sign(key);

    expect((await run(h, 'GET', `/api/f/${K}/lastevent`, { token })).body).toEqual({ user: 'ann' });
    expect(order).toEqual(['status started', 'operation', 'status done']);

    // So does a route marked as reading whatever its method: lastevent with its keys in a body.
    order.length = 0;
    expect((await run(h, 'POST', `/api/f/${K}/lastevent`, { token, body: [K] })).body).toEqual({ user: 'ann' });
    expect(order).toEqual(['status started', 'operation', 'status done']);

    // A refused caller gets the 401, whatever the operation answered or threw.
    refuse = true;
    expect((await run(h, 'GET', `/api/f/${K}/lastevent`, { token })).status).toBe(401);
    expect((await run(h, 'GET', `/api/f/${K}/lastevent`, { token, query: { missing: ['1'] } })).status).toBe(401);
    expect((await run(h, 'POST', `/api/f/${K}/lastevent`, { token, body: [K] })).status).toBe(401);

    // A write starts only once the status is known: a refused caller never reaches it.
    const people = makeHandler({ family: 'people', operations: { create: traced }, deps: () => slow });
    order.length = 0;
    expect((await run(people, 'POST', `/api/f/${K}/people`, { token, body: {} })).status).toBe(401);
    expect(order).toEqual(['status started', 'status done']);

    // Except a route marked `readsFirst` (a publish): it runs beside the check, as a read does, and
    // waits for the verdict itself before it writes (shared/events/publish.ts); refused, it is a 401.
    order.length = 0;
    expect((await run(h, 'POST', `/api/f/${K}/eventmessagesink`, { token, body: {} })).status).toBe(401);
    expect(order).toEqual(['status started', 'operation', 'status done']);

    // So does a GET with a body on a route not marked as reading (the spec's event type update).
    const apps = makeHandler({ family: 'apps', operations: { getEventType: traced }, deps: () => slow });
    order.length = 0;
    expect((await run(apps, 'GET', `/api/f/${K}/apps/${K}/eventtypes/${K}`, { token, body: { CommonName: 'x' } })).status).toBe(401);
    expect(order).toEqual(['status started', 'status done']);
  });

  it('answers unexpected failures with a generic 500 and no stack trace', async () => {
    const boom = makeHandler({ family: 'service', operations: { sysinfo: async () => { throw new Error('secret detail at /srv/x.ts:1'); } }, deps: () => deps });
    const res = await run(boom, 'GET', '/api/sysinfo');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ Error: 'InternalError', Message: 'An unexpected error occurred.' });
    expect(res.text).not.toMatch(/secret detail|\.ts:|at /);
  });

  it('answers an unavailable store with 503 and Retry-After', async () => {
    const busy = makeHandler({ family: 'service', operations: { sysinfo: async () => { throw new StoreUnavailable(new Error('throttled')); } }, deps: () => deps });
    const res = await run(busy, 'GET', '/api/sysinfo');
    expect(res.status).toBe(503);
    expect(res.headers['Retry-After'] ?? res.headers['retry-after']).toBe('1');
    expect(res.body.Error).toBe('ServiceUnavailable');
  });

  it('keeps CORS closed unless an origin is configured', async () => {
    const closed = await run(service, 'GET', '/api/sysinfo', { headers: { origin: 'https://evil.example' } });
    expect(closed.headers['access-control-allow-origin']).toBeUndefined();
    const d = makeDeps({ GATEHOUSE_CORS_ORIGINS: 'https://app.example' });
    const open = await run(createServiceHandler(() => d), 'GET', '/api/sysinfo', { headers: { origin: 'https://app.example' } });
    expect(open.headers['access-control-allow-origin']).toBe('https://app.example');
  });
});
