/**
 * Tenants for integration tests: instances and users written directly through the repository
 * (on the same conventions as the token service and the object model), and access tokens minted
 * with the test key store, as the token function would issue them.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import type { Config } from '#shared/config.ts';
import { JWT_ALG, type KeyStore } from '#shared/auth/keys.ts';
import { fileKeyStore } from '#shared/auth/key-files.ts';
import { authItemPut } from '#shared/db/auth-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createObject } from '#shared/db/object-writes.ts';
import { createCoreDeps, type CoreDeps, type CoreDepsOverrides } from '#shared/core-deps.ts';
import type { Role } from '#shared/auth/principal.ts';
import { instanceNameClaim, userNameClaim } from '#shared/model/claims.ts';
import { newKey, placeIn, placeInstance } from '#shared/model/placement.ts';
import { createApi } from './api.ts';
import type { TestDb } from './db.ts';

/** The roles every seeded tenant has a user of (a `Controller` user is seeded where a test needs one). */
type TenantRole = Exclude<Role, 'Controller'>;
const ROLES: readonly TenantRole[] = ['Administrator', 'Operator', 'ReadOnly'];

/** A unique name for parallel tests (`prefix-1a2b3c`). */
export const uniqueName = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;

/** Dependencies of the real families for a test table, with the test key store. */
export function testDeps(t: TestDb, over: CoreDepsOverrides = {}): CoreDeps {
  return createCoreDeps({ config: t.config, db: t.db, keys: fileKeyStore(t.config.dataDir), ...over });
}

/** Writes an instance object (root when `parent` is omitted) with its name claim. */
export async function seedInstance(t: TestDb, name = uniqueName('Instance'), parent?: StoredObject, doc: Record<string, unknown> = {}): Promise<StoredObject> {
  const key = newKey();
  const o: StoredObject = {
    key,
    collection: 'instances',
    type: 'InstanceInfo',
    ...placeInstance(key, parent),
    version: 1,
    doc: { $type: 'InstanceInfo', CommonName: name, SecurityLevel: 'Medium', IsDisabled: false, ...doc },
  };
  await createObject(t.db, o, [instanceNameClaim(name)]);
  return o;
}

/**
 * Writes a user object in an instance, with further `doc` fields; without `passwordHash` it has
 * no password (tests mint its tokens directly), with one it gets its AUTH item too.
 */
export async function seedUser(
  t: TestDb,
  instance: StoredObject,
  role: Role,
  name = uniqueName(role.toLowerCase()),
  opts: { readonly doc?: Record<string, unknown>; readonly passwordHash?: string | undefined } = {},
): Promise<StoredObject> {
  const o: StoredObject = {
    key: newKey(),
    collection: 'users',
    type: 'UserInfo',
    ...placeIn(instance),
    version: 1,
    doc: { $type: 'UserInfo', CommonName: name, Role: role, IsDisabled: false, TwoFactorEnabled: false, MustChangePassword: false, ...opts.doc },
  };
  await createObject(t.db, o, [userNameClaim(instance.key, name)], opts.passwordHash ? [authItemPut(t.db, o.key, opts.passwordHash)] : []);
  return o;
}

/** Mints an access token for a user of an instance, as the token function would. */
export async function mintToken(
  config: Pick<Config, 'issuer' | 'audience'>,
  keys: KeyStore,
  user: StoredObject,
  instance: StoredObject,
  opts: { role?: Role; ttlSeconds?: number; now?: Date } = {},
): Promise<string> {
  const { kid, key } = await keys.signingKey();
  const iat = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  return new SignJWT({
    ins: instance.key,
    inm: String(instance.doc.CommonName),
    unm: String(user.doc.CommonName),
    role: opts.role ?? (user.doc.Role as Role),
  })
    .setProtectedHeader({ alg: JWT_ALG, kid, typ: 'JWT' })
    .setSubject(user.key)
    .setIssuer(config.issuer)
    .setAudience(config.audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (opts.ttlSeconds ?? 3600))
    .setJti(randomUUID())
    .sign(key);
}

/**
 * Tokens that must be refused, each made from a good token of `user` in `instance`: expired, a
 * flipped signature character, a payload rewritten to claim Administrator of `escalateTo`, signed
 * by another key under the real `kid`, and `alg: none`.
 */
export async function invalidTokens(
  config: Pick<Config, 'issuer' | 'audience'>,
  keys: KeyStore,
  user: StoredObject,
  instance: StoredObject,
  escalateTo: StoredObject,
): Promise<ReadonlyArray<{ readonly name: string; readonly token: string }>> {
  const expired = await mintToken(config, keys, user, instance, { now: new Date(Date.now() - 7200_000), ttlSeconds: 3600 });
  const good = await mintToken(config, keys, user, instance);
  const [h, p, s] = good.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  const tampered = `${h}.${p}.${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`;
  const payloadTampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, role: 'Administrator', ins: escalateTo.key })).toString('base64url')}.${s}`;
  const other = await generateKeyPair('ES256');
  const { kid } = JSON.parse(Buffer.from(h, 'base64url').toString()) as { kid: string };
  const otherKey = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' }).sign(other.privateKey);
  const none = new UnsecuredJWT(claims).encode();
  return [
    { name: 'expired token', token: expired },
    { name: 'tampered signature', token: tampered },
    { name: 'tampered payload', token: payloadTampered },
    { name: 'signed by another key', token: otherKey },
    { name: 'alg none', token: none },
  ];
}

export interface Tenant {
  readonly instance: StoredObject;
  readonly users: Readonly<Record<TenantRole, StoredObject>>;
  /** An access token per role. */
  readonly tokens: Readonly<Record<TenantRole, string>>;
}

/** An instance (root, or below `parent`) with one user and one token per role. */
export async function seedTenant(t: TestDb, deps: CoreDeps, opts: { name?: string; parent?: StoredObject } = {}): Promise<Tenant> {
  const instance = await seedInstance(t, opts.name ?? uniqueName('Tenant'), opts.parent);
  const users = {} as Record<TenantRole, StoredObject>;
  const tokens = {} as Record<TenantRole, string>;
  for (const role of ROLES) {
    users[role] = await seedUser(t, instance, role);
    tokens[role] = await mintToken(deps.config, deps.keys, users[role], instance);
  }
  return { instance, users, tokens };
}

/** A test table's in-process API with a root tenant. */
export async function setupApi(t: TestDb, over: CoreDepsOverrides = {}) {
  const deps = testDeps(t, over);
  const api = createApi(deps);
  const root = await seedTenant(t, deps);
  return { deps, api, root };
}

// ---------------------------------------------------------------------------------------------
// Walking the API as a hypermedia client (integration and end-to-end crawler tests).

interface Fetched {
  readonly status: number;
  readonly body: unknown;
}

/** A GET through whatever transport a test uses. */
export type Getter = (path: string) => Promise<Fetched>;

/** A POST/PUT of a JSON value (a string is sent as a JSON string) through whatever transport a test uses. */
export type Sender = (method: 'POST' | 'PUT', path: string, body: unknown) => Promise<Fetched & { body: any }>;

export interface CrawlResult {
  /** Every path visited, with its status. */
  readonly visited: ReadonlyMap<string, number>;
  /** Paths that answered 404 or 5xx, with the page that linked to them. */
  readonly problems: readonly string[];
}

/**
 * Starts at `start` and follows every `Href` (and `InFolderHref`) and every Link anchor (relative
 * to the Href of the object carrying it) in every JSON answer, breadth first.
 */
export async function crawl(get: Getter, start = '/api', limit = 5000): Promise<CrawlResult> {
  const visited = new Map<string, number>();
  const from = new Map<string, string>([[start, '(start)']]);
  const queue = [start];
  const problems: string[] = [];
  const enqueue = (path: string, source: string) => {
    if (!path.startsWith('/') || from.has(path)) return;
    from.set(path, source);
    queue.push(path);
  };
  const collect = (v: unknown, base: string, source: string): void => {
    if (Array.isArray(v)) {
      for (const x of v) collect(x, base, source);
      return;
    }
    if (typeof v !== 'object' || v === null) return;
    const o = v as Record<string, unknown>;
    const href = typeof o.Href === 'string' && o.Href.startsWith('/') ? o.Href : undefined;
    if (href) enqueue(href, source);
    if (typeof o.InFolderHref === 'string') enqueue(o.InFolderHref, source);
    if (Array.isArray(o.Links)) {
      for (const l of o.Links as Array<{ Anchor?: { Href?: unknown } }>) {
        const a = l?.Anchor?.Href;
        if (typeof a === 'string' && a) enqueue(a.startsWith('/') ? a : `${href ?? base}/${a}`, source);
      }
    }
    for (const [k, x] of Object.entries(o)) if (k !== 'Links') collect(x, href ?? base, source);
  };
  while (queue.length > 0 && visited.size < limit) {
    const path = queue.shift()!;
    const r = await get(path);
    visited.set(path, r.status);
    if (r.status === 404 || r.status >= 500) problems.push(`${path} → ${r.status} (linked from ${from.get(path)})`);
    if (r.status === 200) collect(r.body, path, path);
  }
  return { visited, problems };
}

/**
 * Fills an instance through the API: one object of every collection, a sub-folder holding a
 * person, a child instance holding a door, a user, notes, an input with a status, and object links
 * between them. Returns the Hrefs it made.
 */
export async function populate(send: Sender, instanceKey: string, collections: ReadonlyArray<{ name: string; typeName: string }>): Promise<string[]> {
  const made: string[] = [];
  const post = async (path: string, body: Record<string, unknown>) => {
    const r = await send('POST', path, body);
    if (r.status !== 201) throw new Error(`POST ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    made.push(r.body.Href);
    return r.body as Record<string, any>;
  };
  const base = `/api/f/${instanceKey}`;
  const objects: Record<string, any>[] = [];
  for (const c of collections) {
    const extra: Record<string, unknown> =
      c.name === 'instances' || c.name === 'users' ? { CommonName: uniqueName(`crawl-${c.name}`) } : { CommonName: `crawl ${c.name}` };
    // An identity provider needs its issuer and client (never fetched until someone signs in).
    if (c.name === 'identityproviders') Object.assign(extra, { Issuer: 'https://idp.example.com', ClientId: 'crawl', ClientSecret: 'crawl-secret' });
    objects.push(await post(`${base}/${c.name}`, { $type: c.typeName, ...extra, Metadata: [{ Key: 'k', Values: '{"a":1}' }], Monikers: [{ Namespace: 'n', Nickname: c.name }] }));
  }
  const folder = objects.find((o) => o.Href.startsWith('/api/f/') && o.$type.includes('FolderInfo'))!;
  const child = objects.find((o) => o.$type.includes('InstanceInfo'))!;
  await post(`/api/f/${folder.Key}/people`, { $type: 'PersonInfo', GivenName: 'In a folder' });
  await post(`/api/f/${child.Key}/doors`, { $type: 'DoorInfo', CommonName: 'child door' });
  const first = objects[0]!;
  await post(`${base}/people`, {
    $type: 'PersonInfo',
    GivenName: 'Linked',
    ObjectLinks: [{ Href: first.Href, LinkedObjectKey: first.Key, CommonName: first.CommonName, Relation: 'App' }, { Href: null, LinkedObjectKey: first.Key }],
  });
  const note = await send('POST', `${first.Href}/notes`, { $type: 'NoteInfo', NoteText: 'crawl me' });
  if (note.status !== 201) throw new Error(`note → ${note.status}`);
  const input = objects.find((o) => o.$type.includes('InputInfo'))!;
  const status = await send('PUT', `${input.Href}/status`, { $type: 'InputStatusItem', StatusCode: 1 });
  if (status.status !== 204) throw new Error(`status → ${status.status}`);
  // An event type of the app, referenced by the alarm definition, and an event about a person.
  const app = objects.find((o) => o.$type.includes('.AppInfo,'))!;
  const alarm = objects.find((o) => o.$type.includes('AlarmDefinitionInfo'))!;
  const type = await send('PUT', `${app.Href}/eventtypes`, { $type: 'EventTypeInfo', CommonName: 'crawl type', Priority: 5, Monikers: [{ Namespace: 'crawl', Nickname: 'seen' }] });
  if (type.status !== 201) throw new Error(`event type → ${type.status} ${JSON.stringify(type.body)}`);
  made.push(type.body.Href);
  const ref = await send('PUT', `${alarm.Href}/collections/eventtypes`, type.body.Href);
  if (ref.status !== 204) throw new Error(`alarm event type → ${ref.status} ${JSON.stringify(ref.body)}`);
  const person = objects.find((o) => o.$type.includes('PersonInfo'))!;
  const event = await send('POST', `${base}/eventmessagesink`, {
    $type: 'EventMessagePosting',
    OccurredOn: new Date().toISOString(),
    AppKey: app.Key,
    EventTypeMoniker: { $type: 'MonikerItem', Namespace: 'crawl', Nickname: 'seen' },
    RelatedObjects: [{ $type: 'ObjectLinkItem', LinkedObjectKey: person.Key, Relation: 'Person' }],
    EventDataBsonBase64: null,
  });
  if (event.status >= 300) throw new Error(`event → ${event.status} ${JSON.stringify(event.body)}`);
  return made;
}
