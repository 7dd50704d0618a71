/**
 * Requests generated from the OpenAPI document: for every operation that takes a body, bodies
 * valid against its request schema (json-schema-faker, seeded per operation, so a run is
 * reproducible) are sent to the local runtime with real keys in the path. Properties: every
 * generated body is valid against the document (the generator's side of the bargain), the
 * runtime never answers 5xx, and every answer is one the document declares (status,
 * Content-Type, body: checked by `documentedRequest`).
 *
 * Arrays, strings and nesting are capped (a schema without `maxItems` would otherwise give bodies
 * of several MiB, which only test the 1 MiB limit, covered by the fuzz test).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createGeneratorSync, type GenerateOptions } from 'json-schema-faker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { COLLECTIONS } from '#shared/model/collections.ts';
import { DOCUMENT_PATH } from '../../openapi/paths.ts';
import { documentedRequest, type RawAnswer } from '../support/documented-fetch.ts';
import { sharedValidator } from '../support/openapi-validator.ts';
import { populate } from '../support/tokens.ts';

const url = inject('url');
const admin = inject('admin');
const BODIES_PER_OPERATION = 4;
const GENERATOR: GenerateOptions = { maxItems: 3, maxLength: 40, maxDepth: 6, optionalsProbability: 0.6 };

type Json = Record<string, any>;
const doc = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as Json;
const validator = sharedValidator();

const FORM = 'application/x-www-form-urlencoded';

/** Sends a JSON (or form) body; the answer is checked against the document. */
function send(method: string, path: string, token: string, body?: unknown, form = false): Promise<RawAnswer> {
  return documentedRequest(`${url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': form ? FORM : 'application/json' }) },
    ...(body === undefined ? {} : { body: form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body) }),
  });
}

const json = (r: RawAnswer): any => (r.text ? JSON.parse(r.text) : undefined);

/** The operations with a request body. */
const withBodies = Object.entries(doc.paths as Json).flatMap(([path, ops]) =>
  Object.entries(ops as Json)
    .filter(([, op]) => op.requestBody)
    .map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);

let token = '';
let instance = '';
/** Real keys by collection, from the objects populate made. */
const keysOf = new Map<string, string[]>();

async function login(instanceName: string, username: string, password: string): Promise<string> {
  const r = await send('POST', '/token', '', { grant_type: 'password', client_id: admin.clientId, client_secret: admin.clientSecret, instance: instanceName, username, password }, true);
  expect(r.status, r.text).toBe(200);
  return json(r).access_token;
}

beforeAll(async () => {
  const root = await login(admin.instanceName, admin.userName, admin.password);
  const name = `Bodies-${randomBytes(4).toString('hex')}`;
  const password = `B0dies!${randomBytes(6).toString('base64url')}`;
  const inst = await send('POST', `/api/f/${admin.instanceKey}/instances`, root, { CommonName: name });
  expect(inst.status, inst.text).toBe(201);
  instance = json(inst).Key;
  const user = await send('POST', `/api/f/${instance}/users`, root, { CommonName: 'bodies', Role: 'Administrator', Password: password });
  expect(user.status, user.text).toBe(201);
  token = await login(name, 'bodies', password);
  const made = await populate(
    async (method, path, body) => {
      const r = await send(method, path, token, body);
      return { status: r.status, body: json(r) };
    },
    instance,
    COLLECTIONS,
  );
  for (const href of made) {
    const parts = href.split('/');
    // /api/f/<folder>/<collection>/<key>, and event types under their app; a folder's or an
    // instance's Href is /api/f/<key>, so those two are listed below.
    if (parts.length === 4) continue;
    const collection = parts.length === 6 ? parts[4]! : parts[parts.length - 2]!;
    keysOf.set(collection, [...(keysOf.get(collection) ?? []), parts[parts.length - 1]!]);
  }
  for (const collection of ['folders', 'instances']) {
    const r = await send('GET', `/api/f/${instance}/${collection}`, token);
    expect(r.status, r.text).toBe(200);
    keysOf.set(collection, (json(r) as Array<{ Key: string }>).map((o) => o.Key));
  }
  expect(keysOf.get('folders')?.length).toBeGreaterThan(0);
}, 120_000);

/**
 * The path with real keys: the collection's own objects; a sub-folder (not this test's instance,
 * which a generated body must not rename or disable) for the folder-level rows; the link a method
 * has (notes, status, accesslevels).
 */
function fillPath(method: string, path: string): string {
  const segments = path.split('/');
  const folderLevel = path === '/api/f/{folderKey}' || path.startsWith('/api/f/{folderKey}/{link}');
  const before = (i: number) => segments[i - 1] ?? '';
  return segments
    .map((s, i) => {
      if (s === '{folderKey}') return folderLevel ? keysOf.get('folders')![0]! : instance;
      if (s === '{key}') return keysOf.get(before(i))?.[0] ?? keysOf.get('people')![0]!;
      if (s === '{linkKey}') return keysOf.get('eventtypes')?.[0] ?? keysOf.get('people')![0]!;
      if (s === '{link}') return method !== 'PUT' ? 'notes' : before(i - 1) === 'people' ? 'accesslevels' : 'status';
      if (s === '{relation}') return 'AccessLevel';
      return s;
    })
    .join('/');
}

/** Answers to generated bodies by status, to see how many got past validation. */
const statuses = new Map<number, number>();

afterAll(() => {
  const byStatus = Object.fromEntries([...statuses].sort(([a], [b]) => a - b));
  console.info(`[e2e/openapi-bodies] answers to generated bodies over ${withBodies.length} operations, by status:`, JSON.stringify(byStatus));
});

const seedOf = (name: string): number => createHash('sha256').update(name).digest().readUInt32LE(0);

describe('generated request bodies', () => {
  it('finds the operations with bodies in the document', () => {
    expect(withBodies.length).toBeGreaterThan(40);
  });

  it.each(withBodies.map((b) => [`${b.method} ${b.path}`, b] as const))('answers valid bodies of %s without a 5xx, as documented', async (name, { path, method, op }) => {
    const content = op.requestBody.content as Json;
    const form = content[FORM] !== undefined;
    const media = form ? FORM : 'application/json';
    const generator = createGeneratorSync({ seed: seedOf(name), ...GENERATOR });
    const target = fillPath(method, path);
    for (let i = 0; i < BODIES_PER_OPERATION; i++) {
      const body = generator.generate({ ...content[media].schema, components: doc.components });
      expect(validator.requestBodyProblems(method, path, body, media), `generated ${JSON.stringify(body)}`).toEqual([]);
      const r = await send(method, target, path === '/token' ? '' : token, body, form);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      expect(r.status, `${method} ${target} ${JSON.stringify(body).slice(0, 300)} → ${r.status} ${r.text.slice(0, 300)}`).toBeLessThan(500);
    }
  });
});
