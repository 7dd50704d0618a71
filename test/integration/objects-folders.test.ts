/** Instances, folders and users: GET /api, folder Hrefs, sub-folders, child instances, scope, FolderNotEmpty, accounts. */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { getAuthState } from '#shared/db/auth-repo.ts';
import { listCollection } from '#shared/db/objects-repo.ts';
import { CREATE_PLACEMENT_MAX_AGE_MS } from '#shared/objects/tenant-scope.ts';
import { verifyPassword } from '#shared/auth/passwords.ts';
import { COLLECTIONS } from '#shared/model/collections.ts';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { mintToken, seedTenant, setupApi, uniqueName, type Tenant } from '../support/tokens.ts';

const NS = 'Gatehouse.Model';
const tag = (name: string) => `${NS}.${name}, ${NS}`;

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let root: string;
let admin: string;
let op: string;

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  root = env.root.instance.key;
  admin = env.root.tokens.Administrator;
  op = env.root.tokens.Operator;
});

describe('GET /api', () => {
  it('returns the caller\'s instance with its Href and a link to every collection', async () => {
    const r = await env.api.get('/api', { token: op, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ $type: tag('InstanceInfo'), Key: root, Href: `/api/f/${root}`, CommonName: env.root.instance.doc.CommonName });
    const anchors = r.body.Links.map((l: { Anchor: { Href: string } }) => l.Anchor.Href);
    for (const c of COLLECTIONS) expect(anchors).toContain(c.name);
    for (const known of ['people', 'controllers', 'accesslevels', 'schedules']) expect(anchors).toContain(known);
    expect((await env.api.get(`/api/f/${root}`, { token: op })).body).toEqual(r.body);
  });
});

describe('folders', () => {
  it('creates a sub-folder, holds objects addressed under its key, and deletes it only when empty', async () => {
    const f = await env.api.post(`/api/f/${root}/folders`, { token: op, body: { $type: 'FolderInfo', CommonName: 'Building A' } });
    expect(f.status).toBe(201);
    expect(f.body.Href).toBe(`/api/f/${f.body.Key}`);
    expect(f.body.InFolderKey).toBe(root);
    const got = await env.api.get(`/api/f/${f.body.Key}`, { token: op });
    expect(got.body).toEqual(f.body);
    expect((await env.api.get(`/api/f/${root}/folders/${f.body.Key}`, { token: op })).body).toEqual(f.body);
    expect(got.body.Links.map((l: { Anchor: { Href: string } }) => l.Anchor.Href)).toContain('people');

    const sub = await env.api.post(`/api/f/${f.body.Key}/folders`, { token: op, body: { $type: 'FolderInfo', CommonName: 'Floor 1' } });
    const door = await env.api.post(`/api/f/${sub.body.Key}/doors`, { token: op, body: { $type: 'DoorInfo', CommonName: 'd' } });
    expect(door.body.Href).toBe(`/api/f/${sub.body.Key}/doors/${door.body.Key}`);
    expect((await env.api.get(`/api/f/${sub.body.Key}/doors`, { token: op })).body).toHaveLength(1);

    const notEmpty = await env.api.del(`/api/f/${f.body.Key}`, { token: op });
    expect(notEmpty.status).toBe(409);
    expect(notEmpty.body.Error).toBe('FolderNotEmpty');
    expect((await env.api.del(`/api/f/${sub.body.Key}`, { token: op })).body.Error).toBe('FolderNotEmpty');
    expect((await env.api.del(door.body.Href, { token: op })).status).toBe(204);
    expect((await env.api.del(`/api/f/${sub.body.Key}`, { token: op })).status).toBe(204);
    expect((await env.api.del(`/api/f/${root}/folders/${f.body.Key}`, { token: op })).status).toBe(204);
    // Gone: 404 (inside the scope), not 403.
    expect((await env.api.get(`/api/f/${f.body.Key}`, { token: op })).status).toBe(404);
    expect((await env.api.get(`/api/f/${sub.body.Key}/doors/${door.body.Key}`, { token: op })).status).toBe(404);
    expect((await env.api.get(`/api/f/${sub.body.Key}/doors`, { token: op })).status).toBe(404);
  });

  it('creates in a folder it read in the last minute without reading it again; once deleted, the folder takes no create (403, nothing written)', async () => {
    const f = (await env.api.post(`/api/f/${root}/folders`, { token: op, body: { $type: 'FolderInfo', CommonName: uniqueName('gone') } })).body;
    const person = () => ({ $type: 'PersonInfo', GivenName: 'Gone' });
    const first = await commandsOf(t, () => env.api.post(`/api/f/${f.Key}/people`, { token: op, body: person() }));
    expect(first.result.status).toBe(201);
    expect(first.commands).toEqual(['GetItem', 'TransactWriteItems']);
    const warm = await commandsOf(t, () => env.api.post(`/api/f/${f.Key}/people`, { token: op, body: person() }));
    expect(warm.result.status).toBe(201);
    expect(warm.commands).toEqual(['TransactWriteItems']);
    for (const p of [first.result.body, warm.result.body]) expect((await env.api.del(p.Href, { token: op })).status).toBe(204);
    expect((await env.api.del(f.Href, { token: op })).status).toBe(204);

    const late = await env.api.post(`/api/f/${f.Key}/people`, { token: op, body: person() });
    expect(late.status).toBe(403);
    expect((await listCollection(t.db, f.Key, 'people', 10)).items).toEqual([]);
  });

  it('reads a folder again for a create once its placement is older than a minute', async () => {
    const f = (await env.api.post(`/api/f/${root}/folders`, { token: op, body: { $type: 'FolderInfo', CommonName: uniqueName('aged') } })).body;
    const sub = (await env.api.post(`/api/f/${f.Key}/folders`, { token: op, body: { $type: 'FolderInfo', CommonName: uniqueName('inner') } })).body;
    const body = { $type: 'PersonInfo', GivenName: 'In', InFolderKey: sub.Key };
    expect((await env.api.post(`/api/f/${f.Key}/people`, { token: op, body })).status).toBe(201);
    expect((await commandsOf(t, () => env.api.post(`/api/f/${f.Key}/people`, { token: op, body }))).commands).toEqual(['TransactWriteItems']);
    const later = Date.now() + CREATE_PLACEMENT_MAX_AGE_MS + 1_000;
    vi.spyOn(Date, 'now').mockReturnValue(later);
    try {
      const aged = await commandsOf(t, () => env.api.post(`/api/f/${f.Key}/people`, { token: op, body }));
      expect(aged.result.status).toBe(201);
      expect(aged.commands).toEqual(['GetItem', 'GetItem', 'TransactWriteItems']);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('renames a folder with PUT at its Href (200, then 204 unchanged)', async () => {
    const f = (await env.api.post(`/api/f/${root}/folders`, { token: op, body: { $type: 'FolderInfo', CommonName: 'old' } })).body;
    const r = await env.api.put(f.Href, { token: op, body: { ...f, CommonName: 'new' } });
    expect(r.status).toBe(200);
    expect(r.body.CommonName).toBe('new');
    expect((await env.api.put(f.Href, { token: op, body: r.body })).status).toBe(204);
    expect((await env.api.put(f.Href, { token: op, body: { ...r.body, $type: 'PersonInfo' } })).body.Error).toBe('WrongType');
  });

  it('answers 404 for an object key used as a folder inside the scope, and 403 outside it', async () => {
    const door = (await env.api.post(`/api/f/${root}/doors`, { token: op, body: { $type: 'DoorInfo' } })).body;
    expect((await env.api.get(`/api/f/${door.Key}`, { token: op })).status).toBe(404);
    expect((await env.api.get(`/api/f/${door.Key}/people`, { token: op })).status).toBe(404);
    expect((await env.api.get('/api/f/0123456789abcdef01234567', { token: op })).status).toBe(403);
  });
});

describe('child instances and scope', () => {
  let child: Tenant;
  let childKey: string;
  let sibling: Tenant;

  beforeAll(async () => {
    const name = uniqueName('Child');
    const r = await env.api.post(`/api/f/${root}/instances`, {
      token: admin,
      body: { $type: 'InstanceInfo', CommonName: name, SecurityLevel: 'High', License: 'parent-issued' },
    });
    expect(r.status).toBe(201);
    childKey = r.body.Key;
    const { getObject } = await import('#shared/db/objects-repo.ts');
    const inst = (await getObject(t.db, childKey))!;
    const { seedUser } = await import('../support/tokens.ts');
    const childAdmin = await seedUser(t, inst, 'Administrator');
    child = {
      instance: inst,
      users: { Administrator: childAdmin, Operator: childAdmin, ReadOnly: childAdmin },
      tokens: {
        Administrator: await mintToken(env.deps.config, env.deps.keys, childAdmin, inst),
        Operator: await mintToken(env.deps.config, env.deps.keys, childAdmin, inst, { role: 'Operator' }),
        ReadOnly: await mintToken(env.deps.config, env.deps.keys, childAdmin, inst, { role: 'ReadOnly' }),
      },
    };
    sibling = await seedTenant(t, env.deps);
  });

  it('creates a child instance under its parent with defaults, at its own Href', async () => {
    const r = await env.api.get(`/api/f/${childKey}`, { token: admin });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ $type: tag('InstanceInfo'), Href: `/api/f/${childKey}`, InFolderKey: root, SecurityLevel: 'High', IsDisabled: false });
    expect((await env.api.get(`/api/f/${root}/instances`, { token: admin })).body.map((i: { Key: string }) => i.Key)).toContain(childKey);
    const dup = await env.api.post(`/api/f/${root}/instances`, { token: admin, body: { $type: 'InstanceInfo', CommonName: r.body.CommonName } });
    expect(dup.status).toBe(409);
    expect(dup.body.Error).toBe('DuplicateName');
    const noName = await env.api.post(`/api/f/${root}/instances`, { token: admin, body: { $type: 'InstanceInfo' } });
    expect(noName.status).toBe(400);
    expect(noName.body.Message).toContain('CommonName');
    const slash = await env.api.post(`/api/f/${root}/instances`, { token: admin, body: { $type: 'InstanceInfo', CommonName: 'a\\b' } });
    expect(slash.status).toBe(400);
  });

  it('lets the parent reach into the child, never the child into the parent or a sibling', async () => {
    const door = await env.api.post(`/api/f/${childKey}/doors`, { token: op, body: { $type: 'DoorInfo', CommonName: 'parent made' } });
    expect(door.status).toBe(201);
    expect(door.body.Href).toBe(`/api/f/${childKey}/doors/${door.body.Key}`);
    const ct = child.tokens.Operator;
    expect((await env.api.get(door.body.Href, { token: ct })).status).toBe(200);
    expect((await env.api.get('/api', { token: ct })).body.Key).toBe(childKey);
    // The parent and a sibling are outside the child's scope: 403 whether the key exists or not.
    expect((await env.api.get(`/api/f/${root}`, { token: ct })).status).toBe(403);
    expect((await env.api.get(`/api/f/${root}/people`, { token: ct })).status).toBe(403);
    expect((await env.api.get(`/api/f/${root}/people/0123456789abcdef01234567`, { token: ct })).status).toBe(403);
    expect((await env.api.get(`/api/f/${root}/instances/${childKey}`, { token: ct })).status).toBe(403);
    expect((await env.api.get(`/api/f/${sibling.instance.key}`, { token: ct })).status).toBe(403);
    const theirDoor = await env.api.post(`/api/f/${sibling.instance.key}/doors`, { token: sibling.tokens.Operator, body: { $type: 'DoorInfo' } });
    expect((await env.api.get(theirDoor.body.Href, { token: ct })).status).toBe(403);
    expect((await env.api.put(theirDoor.body.Href, { token: ct, body: theirDoor.body })).status).toBe(403);
    expect((await env.api.del(theirDoor.body.Href, { token: ct })).status).toBe(403);
    expect((await env.api.get(theirDoor.body.Href, { token: op })).status).toBe(403);
  });

  it('lets only an ancestor\'s administrator set an instance\'s License', async () => {
    const own = (await env.api.get(`/api/f/${childKey}`, { token: child.tokens.Administrator })).body;
    const self = await env.api.put(own.Href, { token: child.tokens.Administrator, body: { ...own, License: 'self-issued' } });
    expect(self.status).toBe(403);
    // Leaving the License out keeps it; other fields may change.
    const { License: _l, ...rest } = own;
    const rename = await env.api.put(own.Href, { token: child.tokens.Administrator, body: { ...rest, MinimumPasswordLength: 12 } });
    expect(rename.status).toBe(200);
    expect(rename.body.License).toBe('parent-issued');
    const parent = await env.api.put(own.Href, { token: admin, body: { ...rename.body, License: 'renewed' } });
    expect(parent.status).toBe(200);
    expect(parent.body.License).toBe('renewed');
  });

  it('refuses instance writes to non-administrators and the deletion of one\'s own instance', async () => {
    const own = (await env.api.get(`/api/f/${childKey}`, { token: child.tokens.Operator })).body;
    expect((await env.api.put(own.Href, { token: child.tokens.Operator, body: { ...own, SecurityLevel: 'Low' } })).status).toBe(403);
    expect((await env.api.del(own.Href, { token: child.tokens.Administrator })).status).toBe(403);
  });

  it('deletes a child instance only when it is empty', async () => {
    const c = await env.api.post(`/api/f/${root}/instances`, { token: admin, body: { $type: 'InstanceInfo', CommonName: uniqueName('Temp') } });
    const p = await env.api.post(`/api/f/${c.body.Key}/people`, { token: op, body: { $type: 'PersonInfo' } });
    const r = await env.api.del(c.body.Href, { token: admin });
    expect(r.status).toBe(409);
    expect(r.body.Error).toBe('FolderNotEmpty');
    await env.api.del(p.body.Href, { token: op });
    expect((await env.api.del(c.body.Href, { token: admin })).status).toBe(204);
    expect((await env.api.get(c.body.Href, { token: admin })).status).toBe(404);
    // Its name is free again.
    expect((await env.api.post(`/api/f/${root}/instances`, { token: admin, body: { $type: 'InstanceInfo', CommonName: c.body.CommonName } })).status).toBe(201);
  });

  it('creates instances and users only in an instance', async () => {
    const f = (await env.api.post(`/api/f/${root}/folders`, { token: op, body: { $type: 'FolderInfo' } })).body;
    const i = await env.api.post(`/api/f/${f.Key}/instances`, { token: admin, body: { $type: 'InstanceInfo', CommonName: uniqueName('x') } });
    expect(i.body.Error).toBe('InvalidFolder');
    const u = await env.api.post(`/api/f/${f.Key}/users`, { token: admin, body: { $type: 'UserInfo', CommonName: uniqueName('x') } });
    expect(u.body.Error).toBe('InvalidFolder');
  });
});

describe('users', () => {
  const users = () => `/api/f/${root}/users`;
  const STRONG = 'Str0ng!Passw0rd';

  it('creates a user with defaults; the password is hashed into its AUTH item and never returned', async () => {
    const name = uniqueName('alice');
    const r = await env.api.post(users(), { token: admin, body: { $type: 'UserInfo', CommonName: name, Email: 'a@example.com', Password: STRONG } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ $type: tag('UserInfo'), CommonName: name, Role: 'Operator', IsDisabled: false, MustChangePassword: false, InFolderKey: root });
    expect(r.body).not.toHaveProperty('Password');
    expect(r.text).not.toContain(STRONG);
    const auth = await getAuthState(t.db, r.body.Key);
    expect(await verifyPassword(STRONG, auth!.passwordHash!)).toBe(true);
    const got = await env.api.get(r.body.Href, { token: op });
    expect(got.body).not.toHaveProperty('Password');

    // Changing the password replaces the AUTH item in the same transaction.
    const put = await env.api.put(r.body.Href, { token: admin, body: { ...got.body, Password: 'An0ther!Secret' } });
    expect(put.status).toBe(200);
    expect(put.body).not.toHaveProperty('Password');
    expect(await verifyPassword('An0ther!Secret', (await getAuthState(t.db, r.body.Key))!.passwordHash!)).toBe(true);

    expect((await env.api.del(r.body.Href, { token: admin })).status).toBe(204);
    expect(await getAuthState(t.db, r.body.Key)).toBeUndefined();
  });

  it('rejects a password that breaks a rule, naming the rule', async () => {
    const short = await env.api.post(users(), { token: admin, body: { $type: 'UserInfo', CommonName: uniqueName('b'), Password: 'Ab1!' } });
    expect(short.status).toBe(400);
    expect(short.body.Error).toBe('ValidationFailed');
    expect(short.body.Message).toContain('password_doesnot_meet_minimum_length_rule');
    const simple = await env.api.post(users(), { token: admin, body: { $type: 'UserInfo', CommonName: uniqueName('b'), Password: 'alllowercase' } });
    expect(simple.body.Message).toContain('password_doesnot_meet_complexity_rule');
  });

  it('keeps user names unique within the instance and roles valid', async () => {
    const name = uniqueName('carol');
    expect((await env.api.post(users(), { token: admin, body: { $type: 'UserInfo', CommonName: name } })).status).toBe(201);
    const dup = await env.api.post(users(), { token: admin, body: { $type: 'UserInfo', CommonName: name } });
    expect(dup.status).toBe(409);
    expect(dup.body.Error).toBe('DuplicateName');
    const role = await env.api.post(users(), { token: admin, body: { $type: 'UserInfo', CommonName: uniqueName('d'), Role: 'Root' } });
    expect(role.status).toBe(400);
    expect(role.body.Message).toContain('Role');
  });

  it('refuses user management to operators and read-only users, and self-deletion', async () => {
    const u = (await env.api.post(users(), { token: admin, body: { $type: 'UserInfo', CommonName: uniqueName('e') } })).body;
    expect((await env.api.put(u.Href, { token: op, body: { ...u, Role: 'Administrator' } })).status).toBe(403);
    expect((await env.api.del(u.Href, { token: op })).status).toBe(403);
    expect((await env.api.get(users(), { token: env.root.tokens.ReadOnly })).status).toBe(200);
    const self = `/api/f/${root}/users/${env.root.users.Administrator.key}`;
    expect((await env.api.del(self, { token: admin })).status).toBe(403);
  });
});
