/**
 * SCIM provisioning against DynamoDB Local, through the real scim and people family handlers
 * in-process: SCIM tokens (shown once, hashed, revocable, one instance each), then the request
 * sequences Entra ID's provisioning service and Okta's SCIM 2.0 app send as their public
 * documentation shows them, uniqueness, filters, deactivation of a person's cards and group
 * membership as AccessLevel connections. Every answer is checked against the OpenAPI document.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { scimTokenPk } from '#shared/db/item-keys.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, testDeps, uniqueName, type Tenant } from '../support/tokens.ts';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

let t: TestDb;
let api: ReturnType<typeof createApi>;
let a: Tenant;
let b: Tenant;
let tokenA: string;
let tokenB: string;

const base = (tenant: Tenant) => `/scim/v2/${tenant.instance.key}`;

/** A SCIM call as an identity provider sends it: bearer SCIM token, `application/scim+json` bodies. */
const scim = (method: string, path: string, token: string, body?: unknown) =>
  api.call(method, path, { token, ...(body !== undefined ? { body, contentType: 'application/scim+json' } : {}) });

async function createToken(tenant: Tenant, name: string): Promise<string> {
  const res = await api.post(`/api/f/${tenant.instance.key}/scimtokens`, { token: tenant.tokens.Administrator, body: { CommonName: name } });
  expect(res.status).toBe(201);
  return res.body.Token as string;
}

beforeAll(async () => {
  t = await createTestDb();
  const deps = testDeps(t);
  api = createApi(deps);
  a = await seedTenant(t, deps);
  b = await seedTenant(t, deps);
  tokenA = await createToken(a, 'Entra ID');
  tokenB = await createToken(b, 'Okta');
});

describe('SCIM tokens', () => {
  it('shows a token once and stores only its hash', async () => {
    const created = await api.post(`/api/f/${a.instance.key}/scimtokens`, { token: a.tokens.Administrator, body: { CommonName: 'Once' } });
    expect(created.status).toBe(201);
    expect(created.body.Token).toMatch(/^gh_scim_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    expect(created.body.ScimBaseUrl).toBe(base(a));
    const listed = await api.get(`/api/f/${a.instance.key}/scimtokens`, { token: a.tokens.Administrator });
    expect(listed.status).toBe(200);
    const mine = listed.body.find((x: { Key: string }) => x.Key === created.body.Key);
    expect(mine).toMatchObject({ CommonName: 'Once' });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.Token);
    const items = await t.db.doc.send(new QueryCommand({ TableName: t.db.tableName, KeyConditionExpression: 'PK = :pk', ExpressionAttributeValues: { ':pk': scimTokenPk(a.instance.key) } }));
    expect(JSON.stringify(items.Items)).not.toContain(created.body.Token.split('_').pop());
  });

  it('rejects managing tokens without the Administrator role', async () => {
    for (const role of ['Operator', 'ReadOnly'] as const) {
      const res = await api.post(`/api/f/${a.instance.key}/scimtokens`, { token: a.tokens[role], body: { CommonName: 'x' } });
      expect(res.status).toBe(403);
    }
    const other = await api.get(`/api/f/${a.instance.key}/scimtokens`, { token: b.tokens.Administrator });
    expect(other.status).toBe(403);
  });

  it('rejects a token on another instance, a malformed one and a revoked one, in the SCIM error body', async () => {
    const cross = await scim('GET', `${base(b)}/Users`, tokenA);
    expect(cross.status).toBe(401);
    expect(cross.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(cross.body).toMatchObject({ schemas: [ERROR], status: '401' });
    expect((await scim('GET', `${base(a)}/Users`, 'not-a-token')).status).toBe(401);
    expect((await api.get(`${base(a)}/Users`)).status).toBe(401);
    expect((await scim('GET', `${base(b)}/Users`, tokenB)).status).toBe(200);

    const doomed = await createToken(a, 'Doomed');
    expect((await scim('GET', `${base(a)}/ServiceProviderConfig`, doomed)).status).toBe(200);
    const key = doomed.slice('gh_scim_'.length, 'gh_scim_'.length + 24);
    expect((await api.del(`/api/f/${a.instance.key}/scimtokens/${key}`, { token: a.tokens.Administrator })).status).toBe(204);
    expect((await scim('GET', `${base(a)}/ServiceProviderConfig`, doomed)).status).toBe(401);
    expect((await api.del(`/api/f/${a.instance.key}/scimtokens/${key}`, { token: a.tokens.Administrator })).status).toBe(404);
  });

  it('describes the service provider', async () => {
    const spc = await scim('GET', `${base(a)}/ServiceProviderConfig`, tokenA);
    expect(spc.body).toMatchObject({ patch: { supported: true }, filter: { supported: true }, bulk: { supported: false } });
    const types = await scim('GET', `${base(a)}/ResourceTypes`, tokenA);
    expect(types.body.Resources.map((r: { id: string }) => r.id)).toEqual(['User', 'Group']);
    const schemas = await scim('GET', `${base(a)}/Schemas`, tokenA);
    expect(schemas.body.Resources.map((r: { id: string }) => r.id)).toEqual([USER, GROUP]);
    expect((await scim('GET', `${base(a)}/Schemas/${USER}`, tokenA)).body.name).toBe('User');
    expect((await scim('GET', `${base(a)}/ResourceTypes/Nope`, tokenA)).status).toBe(404);
  });
});

describe("Entra ID's provisioning sequence", () => {
  it('creates, finds, updates, disables and deletes a user; creates a group and changes its members', async () => {
    const userName = `${uniqueName('Test_User')}@testuser.com`;
    const externalId = uniqueName('ext');
    // 1. Entra ID looks the user up before creating it.
    const none = await scim('GET', `${base(a)}/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`, tokenA);
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ totalResults: 0, Resources: [] });
    // 2. Create (Entra ID sends the enterprise extension and string-typed flags it may not map).
    const created = await scim('POST', `${base(a)}/Users`, tokenA, {
      schemas: [USER, ENTERPRISE],
      externalId,
      userName,
      active: true,
      emails: [{ primary: true, type: 'work', value: userName }],
      meta: { resourceType: 'User' },
      name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
      roles: [],
      [ENTERPRISE]: { employeeNumber: '42' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.headers.location).toMatch(new RegExp(`${base(a)}/Users/${id}$`));
    expect(created.body).toMatchObject({ userName, externalId, active: true, name: { givenName: 'givenName', familyName: 'familyName' }, emails: [{ value: userName, type: 'work', primary: true }] });
    // The person, as the API shows it.
    const person = await api.get(`/api/f/${a.instance.key}/people/${id}`, { token: a.tokens.ReadOnly });
    expect(person.body).toMatchObject({ GivenName: 'givenName', Surname: 'familyName', CommonName: 'givenName familyName' });
    expect(person.body.Addresses).toEqual([expect.objectContaining({ MailTo: userName, Type: 'work' })]);
    // 3. Read by id, by userName (any case) and by externalId.
    expect((await scim('GET', `${base(a)}/Users/${id}`, tokenA)).body.userName).toBe(userName);
    const byName = await scim('GET', `${base(a)}/Users?filter=${encodeURIComponent(`userName eq "${userName.toUpperCase()}"`)}`, tokenA);
    expect(byName.body.Resources.map((u: { id: string }) => u.id)).toEqual([id]);
    const byExternal = await scim('GET', `${base(a)}/Users?filter=${encodeURIComponent(`externalId eq "${externalId}"`)}`, tokenA);
    expect(byExternal.body.totalResults).toBe(1);
    // 4. Update attributes, a path with a filter included.
    const patched = await scim('PATCH', `${base(a)}/Users/${id}`, tokenA, {
      schemas: [PATCH],
      Operations: [
        { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@testuser.com' },
        { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      ],
    });
    expect(patched.status).toBe(200);
    expect(patched.body.emails).toEqual([{ value: 'updatedEmail@testuser.com', type: 'work', primary: true }]);
    expect(patched.body.name.familyName).toBe('updatedFamilyName');
    // 5. Disable with a string-typed boolean, then enable with a value object.
    const disabled = await scim('PATCH', `${base(a)}/Users/${id}`, tokenA, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(disabled.body.active).toBe(false);
    const enabled = await scim('PATCH', `${base(a)}/Users/${id}`, tokenA, { schemas: [PATCH], Operations: [{ op: 'Replace', value: { active: 'True', 'name.givenName': 'Given' } }] });
    expect(enabled.body).toMatchObject({ active: true, name: { givenName: 'Given' } });

    // Groups: create without members, find by displayName without members, rename, add and remove a member.
    const displayName = uniqueName('Group');
    const group = await scim('POST', `${base(a)}/Groups`, tokenA, { schemas: [GROUP], externalId: uniqueName('gext'), displayName, meta: { resourceType: 'Group' } });
    expect(group.status).toBe(201);
    const gid = group.body.id as string;
    const found = await scim('GET', `${base(a)}/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${displayName}"`)}`, tokenA);
    expect(found.body.Resources).toEqual([expect.objectContaining({ id: gid, displayName })]);
    expect(found.body.Resources[0].members).toBeUndefined();
    const renamed = `${displayName}-renamed`;
    expect((await scim('PATCH', `${base(a)}/Groups/${gid}`, tokenA, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'displayName', value: renamed }] })).status).toBe(204);
    expect((await scim('PATCH', `${base(a)}/Groups/${gid}`, tokenA, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: id }] }] })).status).toBe(204);
    const withMember = await scim('GET', `${base(a)}/Groups/${gid}`, tokenA);
    expect(withMember.body).toMatchObject({ displayName: renamed, members: [{ value: id }] });
    // The member is an AccessLevel connection of the person, carrying the level's new name.
    const levels = await api.get(`/api/f/${a.instance.key}/people/${id}/connections/AccessLevel`, { token: a.tokens.ReadOnly });
    expect(levels.body.map((l: { Key: string; CommonName: string }) => [l.Key, l.CommonName])).toEqual([[gid, renamed]]);
    // A later change of the user keeps its connections (SCIM writes only what it maps).
    const renamedUser = await scim('PATCH', `${base(a)}/Users/${id}`, tokenA, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'displayName', value: 'Given updatedFamilyName' }] });
    expect(renamedUser.body.displayName).toBe('Given updatedFamilyName');
    expect((await api.get(`/api/f/${a.instance.key}/people/${id}/connections/AccessLevel`, { token: a.tokens.ReadOnly })).body.map((l: { Key: string }) => l.Key)).toEqual([gid]);
    expect((await scim('PATCH', `${base(a)}/Groups/${gid}`, tokenA, { schemas: [PATCH], Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: id }] }] })).status).toBe(204);
    expect((await scim('GET', `${base(a)}/Groups/${gid}`, tokenA)).body.members).toEqual([]);
    expect((await api.get(`/api/f/${a.instance.key}/people/${id}/connections/AccessLevel`, { token: a.tokens.ReadOnly })).body).toEqual([]);

    // Delete both.
    expect((await scim('DELETE', `${base(a)}/Groups/${gid}`, tokenA)).status).toBe(204);
    expect((await scim('DELETE', `${base(a)}/Users/${id}`, tokenA)).status).toBe(204);
    expect((await scim('GET', `${base(a)}/Users/${id}`, tokenA)).status).toBe(404);
    expect((await api.get(`/api/f/${a.instance.key}/people/${id}`, { token: a.tokens.ReadOnly })).status).toBe(404);
    // The user name is free again.
    const again = await scim('POST', `${base(a)}/Users`, tokenA, { schemas: [USER], userName });
    expect(again.status).toBe(201);
  });
});

describe("Okta's SCIM 2.0 sequence", () => {
  it('imports, creates, replaces, deactivates a user and pushes a group', async () => {
    const userName = `${uniqueName('okta')}@example.com`;
    const listed = await scim('GET', `${base(b)}/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`, tokenB);
    expect(listed.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 0, startIndex: 1, itemsPerPage: 0 });
    const user = {
      schemas: [USER],
      userName,
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: userName, type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: uniqueName('00ujl29u0le5T6Aj10h7'),
      groups: [],
      password: '1mz050nq',
      active: true,
    };
    const created = await scim('POST', `${base(b)}/Users`, tokenB, user);
    expect(created.status).toBe(201);
    expect(JSON.stringify(created.body)).not.toContain('1mz050nq');
    const id = created.body.id as string;
    expect((await scim('GET', `${base(b)}/Users/${id}`, tokenB)).body.displayName).toBe('Test User');
    const replaced = await scim('PUT', `${base(b)}/Users/${id}`, tokenB, { ...user, id, name: { givenName: 'Another', familyName: 'User' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.name).toMatchObject({ givenName: 'Another', familyName: 'User' });
    const deactivated = await scim('PATCH', `${base(b)}/Users/${id}`, tokenB, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(deactivated.body.active).toBe(false);

    // Import: the whole list, page by page.
    const page = await scim('GET', `${base(b)}/Users?startIndex=1&count=100`, tokenB);
    expect(page.body.Resources.map((u: { id: string }) => u.id)).toContain(id);

    // Group push: create, rename with a value object, add a member, remove it by filter, delete.
    const group = await scim('POST', `${base(b)}/Groups`, tokenB, { schemas: [GROUP], displayName: uniqueName('Okta Group'), members: [] });
    expect(group.status).toBe(201);
    const gid = group.body.id as string;
    const name = uniqueName('Okta Group renamed');
    expect((await scim('PATCH', `${base(b)}/Groups/${gid}`, tokenB, { schemas: [PATCH], Operations: [{ op: 'replace', value: { id: gid, displayName: name } }] })).status).toBe(204);
    expect((await scim('PATCH', `${base(b)}/Groups/${gid}`, tokenB, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: id, display: userName }] }] })).status).toBe(204);
    expect((await scim('GET', `${base(b)}/Groups/${gid}`, tokenB)).body).toMatchObject({ displayName: name, members: [{ value: id }] });
    expect((await scim('PATCH', `${base(b)}/Groups/${gid}`, tokenB, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] })).status).toBe(204);
    expect((await scim('GET', `${base(b)}/Groups/${gid}`, tokenB)).body.members).toEqual([]);
    // A PUT with the full member list sets it.
    const put = await scim('PUT', `${base(b)}/Groups/${gid}`, tokenB, { schemas: [GROUP], displayName: name, members: [{ value: id }] });
    expect(put.body.members).toEqual([expect.objectContaining({ value: id })]);
    expect((await scim('DELETE', `${base(b)}/Groups/${gid}`, tokenB)).status).toBe(204);
    expect((await api.get(`/api/f/${b.instance.key}/people/${id}/connections/AccessLevel`, { token: b.tokens.ReadOnly })).body).toEqual([]);
  });
});

describe('SCIM rules', () => {
  it('rejects a userName another person of the instance holds, whatever its case, with 409 uniqueness', async () => {
    const userName = `${uniqueName('dup')}@example.com`;
    expect((await scim('POST', `${base(a)}/Users`, tokenA, { schemas: [USER], userName })).status).toBe(201);
    const dup = await scim('POST', `${base(a)}/Users`, tokenA, { schemas: [USER], userName: userName.toUpperCase() });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ schemas: [ERROR], status: '409', scimType: 'uniqueness' });
    // Another instance has its own user names.
    expect((await scim('POST', `${base(b)}/Users`, tokenB, { schemas: [USER], userName })).status).toBe(201);
    // Two creates racing for one name: exactly one wins.
    const raced = `${uniqueName('race')}@example.com`;
    const results = await Promise.all([0, 1, 2, 3].map(() => scim('POST', `${base(a)}/Users`, tokenA, { schemas: [USER], userName: raced })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it('rejects filters it cannot answer from an index with 400 invalidFilter', async () => {
    for (const filter of ['userName co "a"', 'userName eq', 'title eq "x"', 'userName eq "a" or userName eq "b"', 'emails[type eq "work"]']) {
      const res = await scim('GET', `${base(a)}/Users?filter=${encodeURIComponent(filter)}`, tokenA);
      expect(res.status, filter).toBe(400);
      expect(res.body, filter).toMatchObject({ schemas: [ERROR], status: '400', scimType: 'invalidFilter' });
    }
  });

  it('answers malformed bodies and unknown ids in the SCIM error body', async () => {
    const bad = await api.call('POST', `${base(a)}/Users`, { token: tokenA, body: '{not json', contentType: 'application/scim+json' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ schemas: [ERROR], scimType: 'invalidSyntax' });
    expect((await scim('POST', `${base(a)}/Users`, tokenA, { schemas: [USER] })).body).toMatchObject({ status: '400', scimType: 'invalidValue' });
    expect((await scim('GET', `${base(a)}/Users/000000000000000000000000`, tokenA)).body).toMatchObject({ schemas: [ERROR], status: '404' });
    const badOp = await scim('PATCH', `${base(a)}/Users/000000000000000000000000`, tokenA, { schemas: [PATCH], Operations: [{ op: 'move', path: 'x' }] });
    expect(badOp.status).toBe(400);
  });

  it('pages the users of the instance with startIndex and count', async () => {
    const fresh = await seedTenant(t, testDeps(t));
    const token = await createToken(fresh, 'Pager');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await scim('POST', `${base(fresh)}/Users`, token, { schemas: [USER], userName: `p${i}@example.com` })).body.id);
    const first = await scim('GET', `${base(fresh)}/Users?startIndex=1&count=2`, token);
    expect(first.body.Resources.map((u: { id: string }) => u.id)).toEqual(ids.slice(0, 2));
    expect(first.body.totalResults).toBeGreaterThan(2);
    const middle = await scim('GET', `${base(fresh)}/Users?startIndex=3&count=2`, token);
    expect(middle.body.Resources.map((u: { id: string }) => u.id)).toEqual(ids.slice(2, 4));
    const last = await scim('GET', `${base(fresh)}/Users?startIndex=5&count=2`, token);
    expect(last.body).toMatchObject({ totalResults: 5, startIndex: 5, itemsPerPage: 1 });
    expect((await scim('GET', `${base(fresh)}/Users?startIndex=9&count=2`, token)).body).toMatchObject({ Resources: [] });
  });

  it('adds many members in one PATCH, replaces them with a set, and refuses an id that is no user of the instance', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await scim('POST', `${base(a)}/Users`, tokenA, { schemas: [USER], userName: `${uniqueName('member')}@example.com` })).body.id);
    const gid = (await scim('POST', `${base(a)}/Groups`, tokenA, { schemas: [GROUP], displayName: uniqueName('Many') })).body.id as string;
    const patch = (Operations: unknown[]) => scim('PATCH', `${base(a)}/Groups/${gid}`, tokenA, { schemas: [PATCH], Operations });
    expect((await patch([{ op: 'add', path: 'members', value: ids.map((value) => ({ value })) }])).status).toBe(204);
    const members = async () => ((await scim('GET', `${base(a)}/Groups/${gid}`, tokenA)).body.members as Array<{ value: string }>).map((m) => m.value).sort();
    expect(await members()).toEqual([...ids].sort());
    expect((await patch([{ op: 'replace', path: 'members', value: ids.slice(0, 5).map((value) => ({ value })) }])).status).toBe(204);
    expect(await members()).toEqual(ids.slice(0, 5).sort());
    // Another instance's user is not a member this group can have: nothing changes.
    const stranger = (await scim('POST', `${base(b)}/Users`, tokenB, { schemas: [USER], userName: `${uniqueName('stranger')}@example.com` })).body.id as string;
    const refused = await patch([{ op: 'add', path: 'members', value: [{ value: ids[6] }, { value: stranger }] }]);
    expect(refused.body).toMatchObject({ status: '400', scimType: 'invalidValue' });
    expect(await members()).toEqual(ids.slice(0, 5).sort());
    expect((await patch([{ op: 'remove', path: 'members' }])).status).toBe(204);
    expect(await members()).toEqual([]);
  });

  it('disables every card on active false and re-enables only those on active true', async () => {
    const created = await scim('POST', `${base(a)}/Users`, tokenA, { schemas: [USER], userName: `${uniqueName('cards')}@example.com` });
    const id = created.body.id as string;
    const person = `/api/f/${a.instance.key}/people/${id}`;
    const number = () => String(Math.floor(Math.random() * 1e12));
    const enabled = await api.post(`${person}/cards`, { token: a.tokens.Operator, body: { EncodedCardNumber: number() } });
    const byOperator = await api.post(`${person}/cards`, { token: a.tokens.Operator, body: { EncodedCardNumber: number(), IsDisabled: true } });
    expect([enabled.status, byOperator.status]).toEqual([201, 201]);

    const off = await scim('PATCH', `${base(a)}/Users/${id}`, tokenA, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(off.body.active).toBe(false);
    const disabled = (await api.get(person, { token: a.tokens.ReadOnly })).body.CardAssignments as Array<{ Key: string; IsDisabled?: boolean }>;
    expect(disabled.map((c) => [c.Key, c.IsDisabled])).toEqual([
      [enabled.body.Key, true],
      [byOperator.body.Key, true],
    ]);

    const on = await scim('PATCH', `${base(a)}/Users/${id}`, tokenA, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
    expect(on.body.active).toBe(true);
    const after = (await api.get(person, { token: a.tokens.ReadOnly })).body.CardAssignments as Array<{ Key: string; IsDisabled?: boolean }>;
    expect(after.map((c) => [c.Key, c.IsDisabled === true])).toEqual([
      [enabled.body.Key, false],
      [byOperator.body.Key, true],
    ]);
  });
});
