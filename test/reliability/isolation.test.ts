/**
 * Tenant isolation matrix: callers of every kind (the owner's roles, a child, the parent, a
 * sibling, and invalid tokens of every sort) against a representative route of every family and
 * operation kind of instance A. Each answer has the expected status, and no answer ever holds a
 * Key or CommonName of a tenant the caller cannot see.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreDeps } from '#shared/core-deps.ts';
import { createApi, type CallResult } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { invalidTokens, seedTenant, setupApi, uniqueName, type Tenant } from '../support/tokens.ts';

type Api = ReturnType<typeof createApi>;
type Expect = 'ok' | 401 | 403;

let t: TestDb;
let deps: CoreDeps;
let api: Api;
const tenants: Record<'P' | 'A' | 'C' | 'S', Tenant> = {} as never;
/** Keys and CommonNames made in each tenant (the instance's own included). */
const secrets: Record<string, Set<string>> = { P: new Set(), A: new Set(), C: new Set(), S: new Set() };
let matrixSize = 0;

/** Data of a tenant: a person, an access level, an app with an event type, and one event. */
async function fill(name: keyof typeof tenants) {
  const { instance, tokens } = tenants[name];
  const token = tokens.Administrator;
  const base = `/api/f/${instance.key}`;
  const mark = (o: { Key?: string; CommonName?: string }) => {
    if (o.Key) secrets[name]!.add(o.Key);
    if (o.CommonName) secrets[name]!.add(o.CommonName);
  };
  secrets[name]!.add(instance.key);
  secrets[name]!.add(String(instance.doc.CommonName));
  for (const u of Object.values(tenants[name].users)) {
    secrets[name]!.add(u.key);
    secrets[name]!.add(String(u.doc.CommonName));
  }
  const person = await api.post(`${base}/people`, { token, body: { $type: 'PersonInfo', GivenName: 'G', Surname: uniqueName(`sur${name}`), CommonName: uniqueName(`person${name}`) } });
  expect(person.status).toBe(201);
  mark(person.body);
  const level = await api.post(`${base}/accesslevels`, { token, body: { $type: 'AccessLevelInfo', CommonName: uniqueName(`level${name}`) } });
  expect(level.status).toBe(201);
  mark(level.body);
  const app = await api.post(`${base}/apps`, { token, body: { $type: 'AppInfo', CommonName: uniqueName(`app${name}`) } });
  expect(app.status).toBe(201);
  mark(app.body);
  const nickname = uniqueName(`nick${name}`);
  const type = await api.put(`${app.body.Href}/eventtypes`, { token, body: { $type: 'EventTypeInfo', CommonName: uniqueName(`type${name}`), Monikers: [{ Namespace: 'iso', Nickname: nickname }] } });
  expect(type.status).toBe(201);
  mark(type.body);
  const event = await api.post(`${base}/eventmessagesink`, { token, body: posting(app.body.Key, nickname, person.body.Key) });
  expect(event.status).toBeLessThan(300);
  mark(event.body);
  return { person: person.body, level: level.body, app: app.body, nickname };
}

const posting = (appKey: string, nickname: string, personKey: string) => ({
  $type: 'EventMessagePosting',
  OccurredOn: new Date().toISOString(),
  AppKey: appKey,
  EventTypeMoniker: { $type: 'MonikerItem', Namespace: 'iso', Nickname: nickname },
  RelatedObjects: [{ $type: 'ObjectLinkItem', LinkedObjectKey: personKey, Relation: 'Person' }],
  EventDataBsonBase64: null,
});

let dataA: Awaited<ReturnType<typeof fill>>;
interface Caller {
  readonly name: string;
  readonly token: string | undefined;
  /** Tenants whose keys and names it may see. */
  readonly sees: ReadonlyArray<keyof typeof tenants>;
  /** What it gets on A: 'ok' for reads, and for writes by role. */
  readonly read: Expect;
  readonly write: Expect;
  readonly admin: Expect;
}
const callers: Caller[] = [];

beforeAll(async () => {
  t = await createTestDb();
  const setup = await setupApi(t);
  deps = setup.deps;
  api = createApi(deps);
  tenants.P = await seedTenant(t, deps, { parent: setup.root.instance });
  tenants.A = await seedTenant(t, deps, { parent: tenants.P.instance });
  tenants.C = await seedTenant(t, deps, { parent: tenants.A.instance });
  tenants.S = await seedTenant(t, deps, { parent: tenants.P.instance });
  dataA = await fill('A');
  await fill('P');
  await fill('C');
  await fill('S');

  const A = tenants.A;
  const invalid = await invalidTokens(deps.config, deps.keys, A.users.Administrator, A.instance, tenants.P.instance);
  const all = ['P', 'A', 'C', 'S'] as const;
  callers.push(
    { name: 'A Administrator', token: A.tokens.Administrator, sees: ['A', 'C'], read: 'ok', write: 'ok', admin: 'ok' },
    { name: 'A Operator', token: A.tokens.Operator, sees: ['A', 'C'], read: 'ok', write: 'ok', admin: 403 },
    { name: 'A ReadOnly', token: A.tokens.ReadOnly, sees: ['A', 'C'], read: 'ok', write: 403, admin: 403 },
    { name: 'child C Administrator', token: tenants.C.tokens.Administrator, sees: ['C'], read: 403, write: 403, admin: 403 },
    { name: 'parent P Administrator', token: tenants.P.tokens.Administrator, sees: all, read: 'ok', write: 'ok', admin: 'ok' },
    { name: 'sibling S Administrator', token: tenants.S.tokens.Administrator, sees: ['S'], read: 403, write: 403, admin: 403 },
    { name: 'no token', token: undefined, sees: [], read: 401, write: 401, admin: 401 },
    ...invalid.map(({ name, token }) => ({ name, token, sees: [], read: 401, write: 401, admin: 401 }) as const),
  );
}, 120_000);

afterAll(() => {
  console.info(`[reliability/isolation] matrix: ${callers.length} callers × ${ops.length} operations + own views = ${matrixSize} checked requests`);
});

/** The secrets of every tenant `c` cannot see that appear in `r`. */
function leaks(c: Caller, r: CallResult): string[] {
  const found: string[] = [];
  for (const [name, set] of Object.entries(secrets)) {
    if ((c.sees as string[]).includes(name)) continue;
    for (const s of set) if (r.text.includes(s)) found.push(`${name}:${s}`);
  }
  return found;
}

function check(c: Caller, kind: Expect, r: CallResult, what: string) {
  matrixSize++;
  if (kind === 'ok') expect(r.status, `${c.name} ${what} → ${r.text.slice(0, 200)}`).toBeLessThan(300);
  else expect(r.status, `${c.name} ${what} → ${r.text.slice(0, 200)}`).toBe(kind);
  if (kind === 401) expect(r.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
  if (kind === 403) expect(r.body).toEqual({ Error: expect.stringMatching(/^[A-Za-z_]+$/), Message: expect.any(String) });
  expect(leaks(c, r), `${c.name} ${what} leaks`).toEqual([]);
}

/** A fresh person in A for a write that consumes its target. */
async function freshPerson() {
  const r = await api.post(`/api/f/${tenants.A.instance.key}/people`, { token: tenants.A.tokens.Administrator, body: { $type: 'PersonInfo', GivenName: 'Fresh', Surname: uniqueName('s') } });
  expect(r.status).toBe(201);
  return r.body as Record<string, any>;
}

interface Op {
  readonly name: string;
  readonly kind: 'read' | 'write' | 'admin';
  run(token: string | undefined): Promise<CallResult>;
}
const A = () => `/api/f/${tenants.A.instance.key}`;
const ops: Op[] = [
  { name: 'list people', kind: 'read', run: (token) => api.get(`${A()}/people`, { token, query: { includeChildInstances: true } }) },
  { name: 'get person', kind: 'read', run: (token) => api.get(dataA.person.Href, { token }) },
  { name: 'get folder', kind: 'read', run: (token) => api.get(A(), { token }) },
  { name: 'create person', kind: 'write', run: (token) => api.post(`${A()}/people`, { token, body: { $type: 'PersonInfo', GivenName: 'New' } }) },
  {
    name: 'replace person',
    kind: 'write',
    run: async (token) => {
      const p = await freshPerson();
      return api.put(p.Href, { token, body: { ...p, GivenName: 'Replaced' } });
    },
  },
  { name: 'delete person', kind: 'write', run: async (token) => api.del((await freshPerson()).Href, { token }) },
  { name: 'get link (monikers)', kind: 'read', run: (token) => api.get(`${dataA.person.Href}/monikers`, { token }) },
  { name: 'post note', kind: 'write', run: (token) => api.post(`${dataA.person.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 'x' } }) },
  { name: 'search', kind: 'read', run: (token) => api.post(`${A()}/search`, { token, body: JSON.stringify("{ '_t': 'Person' }"), query: { includeChildInstances: true } }) },
  { name: 'events list', kind: 'read', run: (token) => api.get(`${A()}/events`, { token, query: { includeChildInstances: true } }) },
  { name: 'lastevent', kind: 'read', run: (token) => api.post(`${A()}/lastevent`, { token, body: [dataA.person.Key] }) },
  {
    name: 'aggregate events',
    kind: 'read',
    run: (token) => api.post(`${A()}/aggregate/Events`, { token, body: ['{"$project":{"EventData":0}}'], query: { spanScope: true, includeSubFolders: true } }),
  },
  { name: 'publish', kind: 'write', run: (token) => api.post(`${A()}/eventmessagesink`, { token, body: posting(dataA.app.Key, dataA.nickname, dataA.person.Key) }) },
  { name: 'connections', kind: 'read', run: (token) => api.get(`${dataA.person.Href}/connections`, { token }) },
  {
    name: 'connect',
    kind: 'write',
    run: async (token) => api.post(`${(await freshPerson()).Href}/connections/AccessLevel`, { token, query: { relatedKey: dataA.level.Key, isOneToOne: false } }),
  },
  { name: 'list users', kind: 'read', run: (token) => api.get(`${A()}/users`, { token }) },
  { name: 'create user', kind: 'admin', run: (token) => api.post(`${A()}/users`, { token, body: { $type: 'UserInfo', CommonName: uniqueName('u'), Role: 'ReadOnly' } }) },
  {
    name: 'revoke sessions',
    kind: 'admin',
    run: async (token) => {
      // A fresh user each time: revoking a caller's own sessions would end its tokens.
      const u = await api.post(`${A()}/users`, { token: tenants.A.tokens.Administrator, body: { $type: 'UserInfo', CommonName: uniqueName('r'), Role: 'ReadOnly' } });
      expect(u.status).toBe(201);
      return api.post(`${u.body.Href}/revokesessions`, { token });
    },
  },
  { name: 'list instances', kind: 'read', run: (token) => api.get(`${A()}/instances`, { token }) },
  { name: 'create instance', kind: 'admin', run: (token) => api.post(`${A()}/instances`, { token, body: { $type: 'InstanceInfo', CommonName: uniqueName('i') } }) },
  { name: 'usage', kind: 'admin', run: (token) => api.get(`${A()}/usage`, { token }) },
];

describe('isolation matrix on instance A', () => {
  it.each(ops.map((o) => [o.name, o] as const))('answers every caller as expected: %s', async (_n, op) => {
    for (const c of callers) check(c, c[op.kind], await op.run(c.token), op.name);
  });
});

describe("isolation: each caller's own view", () => {
  it('never shows a caller keys or names of tenants it cannot see', async () => {
    for (const c of callers.filter((x) => x.read !== 401 || x.token === undefined)) {
      if (!c.token) continue;
      const own = c.name.startsWith('child') ? tenants.C : c.name.startsWith('parent') ? tenants.P : c.name.startsWith('sibling') ? tenants.S : tenants.A;
      const base = `/api/f/${own.instance.key}`;
      const calls = [
        api.get('/api', { token: c.token }),
        api.get(`${base}/people`, { token: c.token, query: { includeChildInstances: true } }),
        api.get(`${base}/instances`, { token: c.token }),
        api.get(`${base}/events`, { token: c.token, query: { includeChildInstances: true } }),
        api.post(`${base}/aggregate/Events`, { token: c.token, body: [], query: { spanScope: true, includeSubFolders: true } }),
        api.post(`${base}/search`, { token: c.token, body: JSON.stringify('{}'), query: { includeChildInstances: true } }),
      ];
      for (const r of await Promise.all(calls)) check(c, 'ok', r, 'own view');
    }
  });
});
