/**
 * Offboarding reaches the doors: SCIM changes of a person (deactivation, group membership) are
 * ordinary object changes, so the very next access decision and `accessiblereaders` follow them.
 * Against DynamoDB Local, through the real family handlers.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi, uniqueName, type Tenant } from '../support/tokens.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const T = (name: string) => `Acme.${name}, Acme`;

let t: TestDb;
let api: Awaited<ReturnType<typeof setupApi>>['api'];
let root: Tenant;
let I: string;
let token: string;
let reader: { Key: string };
let schedule: { Key: string };

const scim = (method: string, path: string, body?: unknown) =>
  api.call(method, `/scim/v2/${I}${path}`, { token, ...(body !== undefined ? { body, contentType: 'application/scim+json' } : {}) });

async function make(coll: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(`/api/f/${I}/${coll}`, { token: root.tokens.Administrator, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const decide = (card: number) => api.post(`/api/f/${I}/accessdecisions`, { token: root.tokens.ReadOnly, body: { ReaderKey: reader.Key, EncodedCardNumber: card } });

beforeAll(async () => {
  t = await createTestDb();
  ({ api, root } = await setupApi(t));
  I = root.instance.key;
  const created = await api.post(`/api/f/${I}/scimtokens`, { token: root.tokens.Administrator, body: { CommonName: 'Directory' } });
  expect(created.status).toBe(201);
  token = created.body.Token;
  reader = await make('readers', { $type: T('VendorReaderInfo'), CommonName: 'Lobby reader' });
  schedule = await make('schedules', { $type: T('ScheduleInfo'), CommonName: 'Always', IsAlways: true });
});

describe('SCIM changes and access decisions', () => {
  it('grants through a group membership, denies CardDisabled after deactivation, and NoAccessAtReader once removed from the group', async () => {
    const user = await scim('POST', '/Users', { schemas: [USER], userName: `${uniqueName('jane')}@example.com`, name: { givenName: 'Jane', familyName: 'Doe' }, active: true });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const personKey = user.body.id as string;
    const person = await api.get(`/api/f/${I}/people/${personKey}`, { token: root.tokens.Administrator });
    expect(person.status).toBe(200);
    const card = 4_242_000 + Math.floor(Math.random() * 1000);
    expect((await api.post(`${person.body.Href}/cards`, { token: root.tokens.Administrator, body: { EncodedCardNumber: card } })).status).toBe(201);

    // The directory's group is an access level; the building pairs it with the reader and a schedule.
    const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: uniqueName('Lobby staff'), members: [] });
    expect(group.status).toBe(201);
    const level = group.body.id as string;
    for (const [relation, key] of [['Reader', reader.Key], ['Schedule', schedule.Key]] as const) {
      const res = await api.post(`/api/f/${I}/accesslevels/${level}/connections/${relation}`, { token: root.tokens.Administrator, query: { relatedKey: key, isOneToOne: false } });
      expect(res.status).toBe(200);
    }
    expect((await decide(card)).body).toMatchObject({ Granted: false, Reason: 'NoAccessAtReader' });

    expect((await scim('PATCH', `/Groups/${level}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: personKey }] }] })).status).toBe(204);
    expect((await decide(card)).body).toMatchObject({ Granted: true, Reason: 'Granted', AccessLevel: { Key: level } });
    const readers = await api.get(`${person.body.Href}/accessiblereaders`, { token: root.tokens.ReadOnly });
    expect(readers.status).toBe(200);
    expect(readers.body.map((r: any) => r.Reader.Key)).toEqual([reader.Key]);

    // Entra ID's form of a deactivation: the next decision is CardDisabled; reactivation restores it.
    const off = await scim('PATCH', `/Users/${personKey}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(off.status).toBe(200);
    expect((await decide(card)).body).toMatchObject({ Granted: false, Reason: 'CardDisabled' });
    expect((await api.get(`${person.body.Href}/accessiblereaders`, { token: root.tokens.ReadOnly })).body).toEqual([]);
    expect((await scim('PATCH', `/Users/${personKey}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] })).status).toBe(200);
    expect((await decide(card)).body).toMatchObject({ Granted: true });

    expect((await scim('PATCH', `/Groups/${level}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${personKey}"]` }] })).status).toBe(204);
    expect((await decide(card)).body).toMatchObject({ Granted: false, Reason: 'NoAccessAtReader' });
  });
});
