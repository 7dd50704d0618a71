/**
 * The OpenAPI document: current (docs/openapi.json is what the generator writes now), complete
 * (every route-table row is an operation, every operation has its own description), and saying
 * what the handlers do (bounds, parameters, bodies, statuses, security).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { baseUrlOf } from '#shared/docs/openapi.ts';
import { EVENT_LIST_PARAMETERS } from '#shared/events/list-query.ts';
import { MAX_PAGE_SIZE } from '#shared/http/params.ts';
import { ROUTES } from '#shared/routes.ts';
import { clientTypes } from '../../openapi/client-types.ts';
import { buildOpenApiDocument, documentedRoutes, formatDocument } from '../../openapi/document.ts';
import { isDescribed } from '../../openapi/operation-docs.ts';
import { CLIENT_TYPES_PATH, DOCUMENT_PATH, packageVersion } from '../../openapi/paths.ts';

type Json = Record<string, any>;

const doc = buildOpenApiDocument({ version: packageVersion() }) as Json;

const operation = (method: string, path: string): Json => doc.paths[path]?.[method.toLowerCase()];

/** A `$ref` resolved inside the document. */
function resolve(x: Json): Json {
  if (!x?.$ref) return x;
  return (x.$ref as string).slice(2).split('/').reduce((o: Json, k) => o[k], doc);
}

describe('openapi document', () => {
  it('is the checked-in docs/openapi.json', () => {
    const checkedIn = readFileSync(DOCUMENT_PATH, 'utf8');
    expect(checkedIn === formatDocument(doc), 'docs/openapi.json is out of date: run `npm run openapi`').toBe(true);
  });

  it('gives the typed client the types generated from it (clients/typescript/src/schema.ts)', async () => {
    const checkedIn = readFileSync(CLIENT_TYPES_PATH, 'utf8');
    const generated = await clientTypes(formatDocument(doc));
    expect(generated).toMatch(/"\/api\/f\/\{folderKey\}\/people": \{/);
    expect(checkedIn === generated, 'clients/typescript/src/schema.ts is out of date: run `npm run openapi`').toBe(true);
  });

  it('describes every route of the table but $default', () => {
    const described = Object.entries(doc.paths as Json).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const expected = ROUTES.filter((r) => r.path !== '$default').map((r) => `${r.method} ${r.path}`);
    expect(described.sort()).toEqual(expected.sort());
  });

  it('has an entry of its own for every operation of the route table (fill openapi/operation-docs.ts for those listed)', () => {
    const generic = [...new Set(documentedRoutes().filter((r) => !isDescribed(r)).map((r) => `${r.operation} (${r.method} ${r.path})`))];
    expect(generic, `operations described only generically: ${generic.join(', ')}`).toEqual([]);
  });

  it('gives every operation a unique id, a summary, a success response and an example for each body', () => {
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(ops as Json)) {
        const name = `${method} ${path}`;
        expect(ids.has(op.operationId), name).toBe(false);
        ids.add(op.operationId);
        expect(op.summary, name).toBeTruthy();
        // The browser's calls of single sign-on succeed with a redirect (302).
        const success = Object.keys(op.responses).filter((s) => s.startsWith('2') || s.startsWith('3'));
        expect(success.length, name).toBeGreaterThan(0);
        for (const s of success) {
          for (const media of Object.values((op.responses[s].content ?? {}) as Json)) expect(Object.keys(media.examples ?? {}).length, `${name} ${s}`).toBe(1);
        }
        for (const media of Object.values((op.requestBody?.content ?? {}) as Json)) expect(Object.keys(media.examples ?? {}).length, `${name} body`).toBe(1);
      }
    }
  });

  it('requires the bearer token on every protected route and answers 401 with the token error body there', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
    for (const r of documentedRoutes()) {
      const op = operation(r.method, r.path);
      if (r.auth) {
        expect(op.security, r.path).toBeUndefined();
        expect(resolve(op.responses['401']).content['application/json'].schema.$ref).toBe('#/components/schemas/TokenError');
        expect(op.responses['403'], r.path).toBeDefined();
      } else if (r.scimToken) {
        expect(op.security, r.path).toEqual([{ scimToken: [] }]);
        expect(resolve(op.responses['401']).content['application/scim+json'].schema.$ref).toBe('#/components/schemas/ScimError');
      } else {
        expect(op.security, r.path).toEqual([]);
        expect(op.responses['401'], r.path).toBeUndefined();
      }
      for (const s of ['400', '413', '429', '500', '503']) expect(op.responses[s], `${r.method} ${r.path} ${s}`).toBeDefined();
    }
    expect(resolve(operation('GET', '/api/f/{folderKey}/people').responses['404']).content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
  });

  it('answers 429 TooManyRequests with Retry-After and the RateLimit headers, and tells the limits on every call with a token', () => {
    const tooMany = resolve(doc.components.responses.TooManyRequests);
    expect(Object.keys(tooMany.headers).sort()).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
    expect(tooMany.content['application/json'].example).toMatchObject({ Error: 'TooManyRequests' });
    expect(resolve(tooMany.headers['RateLimit-Policy']).description).toMatch(/q.*w/);
    for (const r of documentedRoutes()) {
      const op = operation(r.method, r.path);
      expect(resolve(op.responses['429']), `${r.method} ${r.path}`).toBeDefined();
      for (const [status, res] of Object.entries(op.responses as Json)) {
        if (!status.startsWith('2')) continue;
        const names = Object.keys(resolve(res).headers ?? {});
        if (r.auth) expect(names, `${r.method} ${r.path} ${status}`).toEqual(expect.arrayContaining(['RateLimit-Policy', 'RateLimit']));
        else expect(names, `${r.method} ${r.path} ${status}`).not.toContain('RateLimit');
      }
    }
  });

  it('takes Idempotency-Key on every protected POST, PUT and DELETE, with its 409 and 422, and on no other call', () => {
    const header = doc.components.parameters.IdempotencyKey;
    expect(header).toMatchObject({ in: 'header', name: 'Idempotency-Key', schema: { type: 'string', minLength: 1, maxLength: 255 } });
    expect(header.required ?? false).toBe(false);
    for (const r of documentedRoutes()) {
      const op = operation(r.method, r.path);
      const takes = (op.parameters ?? []).some((p: Json) => p.$ref === '#/components/parameters/IdempotencyKey');
      const keyed = r.auth && ['POST', 'PUT', 'DELETE'].includes(r.method);
      expect(takes, `${r.method} ${r.path}`).toBe(keyed);
      if (!keyed) continue;
      expect(resolve(op.responses['409']).headers['Retry-After'], `${r.method} ${r.path}`).toBeDefined();
      expect(resolve(op.responses['422']).description, `${r.method} ${r.path}`).toMatch(/Idempotency-Key/);
    }
    expect(operation('POST', '/token').parameters ?? []).toEqual([]);
  });

  it('bounds page and pageSize on the list calls and names each events-list parameter', () => {
    const params = (op: Json) => (op.parameters as Json[]).map(resolve);
    const list = params(operation('GET', '/api/f/{folderKey}/people'));
    expect(list.find((p) => p.name === 'page')?.schema).toMatchObject({ type: 'integer', minimum: 0, default: 0 });
    expect(list.find((p) => p.name === 'pageSize')?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 });
    expect(list.find((p) => p.name === 'folderKey')).toMatchObject({ in: 'path', required: true });
    const events = params(operation('GET', '/api/f/{folderKey}/events')).map((p) => p.name);
    for (const name of EVENT_LIST_PARAMETERS) expect(events, name).toContain(name);
  });

  it('describes the token form, the $type discriminators and the GET-with-body calls with their twins', () => {
    const token = operation('POST', '/token');
    const form = resolve(token.requestBody.content['application/x-www-form-urlencoded'].schema);
    expect(Object.keys(form.properties)).toEqual(expect.arrayContaining(['grant_type', 'username', 'password', 'instance', 'refresh_token', 'onetimepassword']));
    // The token error body, or the pipeline's InvalidJson for a malformed JSON body.
    expect(resolve(token.responses['400']).content['application/json'].schema.anyOf.map((s: { $ref: string }) => s.$ref)).toEqual([
      '#/components/schemas/TokenError',
      '#/components/schemas/Error',
    ]);

    const inputs = operation('POST', '/api/f/{folderKey}/inputs').requestBody.content['application/json'].schema;
    expect(inputs.discriminator.propertyName).toBe('$type');
    expect(inputs.discriminator.mapping.AscInputInfo).toBe('#/components/schemas/AscInputInfoRequest');
    const person = doc.components.schemas.PersonInfoRequest;
    expect(person.required ?? []).not.toContain('$type');
    expect(person.properties.$type.pattern).toMatch(/PersonInfo/);

    for (const [method, path] of [
      ['GET', '/api/f/{folderKey}/apps/{key}/eventtypes/{linkKey}'],
      ['PUT', '/api/f/{folderKey}/apps/{key}/eventtypes/{linkKey}'],
      ['GET', '/api/f/{folderKey}/lastevent'],
      ['POST', '/api/f/{folderKey}/lastevent'],
    ] as const) {
      expect(operation(method, path).requestBody?.content['application/json'], `${method} ${path}`).toBeDefined();
    }
    expect(operation('GET', '/api/f/{folderKey}/lastevent').description).toMatch(/GET with a body/);
  });
});

describe('served document base URL', () => {
  it('names the deployment from the Host and X-Forwarded-Proto headers', () => {
    expect(baseUrlOf({ headers: { host: 'abc.execute-api.eu-west-1.amazonaws.com', 'x-forwarded-proto': 'https' } })).toBe('https://abc.execute-api.eu-west-1.amazonaws.com');
    expect(baseUrlOf({ headers: { host: 'localhost:3000' } })).toBe('http://localhost:3000');
  });

  it('rejects a Host header that is not a host name', () => {
    expect(baseUrlOf({ headers: { host: 'evil.com/"><script>' } })).toBe('/');
    expect(baseUrlOf({ headers: {} })).toBe('/');
  });
});
