/** Notes and the standard links of an object. */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { OUTER_AUTHOR } from '#shared/objects/tenant-scope.ts';
import { seedTenant, setupApi, uniqueName } from '../support/tokens.ts';

const NS = 'Gatehouse.Model';
const tag = (name: string) => `${NS}.${name}, ${NS}`;

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let root: string;
let token: string;

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  root = env.root.instance.key;
  token = env.root.tokens.Operator;
});

const person = async (extra: Record<string, unknown> = {}) =>
  (await env.api.post(`/api/f/${root}/people`, { token, body: { $type: 'PersonInfo', CommonName: 'Ann Lee', ...extra } })).body;

describe('notes', () => {
  it('adds a note (201 with Key, CreatedOn, CreatedBy) and returns notes in chronological order with the object', async () => {
    const p = await person();
    const a = await env.api.post(`${p.Href}/notes`, { token, body: { $type: 'Other.NoteInfo, Other', NoteText: 'first' } });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ $type: tag('NoteInfo'), NoteText: 'first', CreatedBy: env.root.users.Operator.doc.CommonName });
    expect(a.body.Key).toMatch(/^[0-9a-f]{24}$/);
    expect(Date.parse(a.body.CreatedOn)).not.toBeNaN();
    const b = await env.api.post(`${p.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 'second', Key: 'mine', CreatedBy: 'someone' } });
    expect(b.body.Key).not.toBe('mine');
    expect(b.body.CreatedBy).not.toBe('someone');
    const got = await env.api.get(p.Href, { token });
    expect(got.body.Notes.map((n: { NoteText: string }) => n.NoteText)).toEqual(['first', 'second']);
    expect(got.body.ConcurrencyVersion).toBe(1);
    expect((await env.api.get(`${p.Href}/notes`, { token })).body).toEqual(got.body.Notes);
  });

  it('keeps the notes across a PUT of the object, whatever Notes the PUT carries', async () => {
    const p = await person();
    const note = (await env.api.post(`${p.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 'keep me' } })).body;
    const cur = (await env.api.get(p.Href, { token })).body;
    const put = await env.api.put(p.Href, { token, body: { ...cur, GivenName: 'Ann', Notes: [] } });
    expect(put.status).toBe(200);
    expect(put.body.Notes).toEqual([note]);
    const put2 = await env.api.put(p.Href, { token, body: { ...put.body, Notes: [{ $type: 'NoteInfo', NoteText: 'injected' }] } });
    expect(put2.status).toBe(204);
    expect((await env.api.get(p.Href, { token })).body.Notes).toEqual([note]);
  });

  it('turns the notes sent with a create into notes', async () => {
    const p = await person({ Notes: [{ NoteText: 'from create' }] });
    expect(p.Notes).toHaveLength(1);
    expect(p.Notes[0]).toMatchObject({ $type: tag('NoteInfo'), NoteText: 'from create' });
  });

  it('deletes a note (204), answers 404 for an unknown note, and deletes the notes with the object', async () => {
    const p = await person();
    const n1 = (await env.api.post(`${p.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 'one' } })).body;
    const n2 = (await env.api.post(`${p.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 'two' } })).body;
    expect((await env.api.del(`${p.Href}/notes/${n1.Key}`, { token })).status).toBe(204);
    expect((await env.api.get(p.Href, { token })).body.Notes).toEqual([n2]);
    expect((await env.api.del(`${p.Href}/notes/${n1.Key}`, { token })).status).toBe(404);
    expect((await env.api.del(p.Href, { token })).status).toBe(204);
    expect((await env.api.get(`${p.Href}/notes`, { token })).status).toBe(404);
    expect((await env.api.post(`${p.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 'late' } })).status).toBe(404);
  });

  it('validates notes: $type (NoteInfo when absent), NoteText', async () => {
    const p = await person();
    const untyped = await env.api.post(`${p.Href}/notes`, { token, body: { NoteText: 'x' } });
    expect(untyped.status).toBe(201);
    expect(untyped.body.NoteText).toBe('x');
    expect(untyped.body.$type).toMatch(/\.NoteInfo, /);
    expect((await env.api.post(`${p.Href}/notes`, { token, body: { $type: 'PersonInfo' } })).body.Error).toBe('WrongType');
    const bad = await env.api.post(`${p.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 5 } });
    expect(bad.body.Error).toBe('ValidationFailed');
    expect(bad.body.Message).toContain('NoteText');
  });

  it("does not name a parent instance's user to the child: its notes say the parent instance wrote them", async () => {
    const child = await seedTenant(t, env.deps, { parent: env.root.instance });
    const base = `/api/f/${child.instance.key}/people`;
    const made = await env.api.post(base, { token: env.root.tokens.Operator, body: { $type: 'PersonInfo', CommonName: uniqueName('kid'), Notes: [{ NoteText: 'from above' }] } });
    expect(made.status).toBe(201);
    const byParent = await env.api.post(`${made.body.Href}/notes`, { token: env.root.tokens.Operator, body: { $type: 'NoteInfo', NoteText: 'again' } });
    const byChild = await env.api.post(`${made.body.Href}/notes`, { token: child.tokens.Operator, body: { $type: 'NoteInfo', NoteText: 'mine' } });
    expect([byParent.status, byChild.status]).toEqual([201, 201]);
    const seen = await env.api.get(made.body.Href, { token: child.tokens.ReadOnly });
    expect(seen.body.Notes.map((n: { CreatedBy: string }) => n.CreatedBy)).toEqual([OUTER_AUTHOR, OUTER_AUTHOR, child.users.Operator.doc.CommonName]);
    expect(seen.text).not.toContain(String(env.root.users.Operator.doc.CommonName));
  });

  it('works on folders and instances too', async () => {
    const f = (await env.api.post(`/api/f/${root}/folders`, { token, body: { $type: 'FolderInfo', CommonName: 'f' } })).body;
    const n = await env.api.post(`${f.Href}/notes`, { token, body: { $type: 'NoteInfo', NoteText: 'folder note' } });
    expect(n.status).toBe(201);
    expect((await env.api.get(f.Href, { token })).body.Notes).toHaveLength(1);
    expect((await env.api.del(`${f.Href}/notes/${n.body.Key}`, { token })).status).toBe(204);
  });
});

describe('standard links', () => {
  it('answers meta, monikers, commonname, images, connections and references', async () => {
    const p = await person({
      Metadata: [{ Key: 'k', Values: '{"a":1}' }],
      Monikers: [{ Namespace: 'hr', Nickname: 'A-1' }],
    });
    const meta = await env.api.get(`${p.Href}/meta`, { token });
    expect(meta.body).toEqual([{ $type: tag('MetadataItem'), Key: 'k', Values: '{"a":1}' }]);
    const monikers = await env.api.get(`${p.Href}/monikers`, { token });
    expect(monikers.body).toEqual([{ $type: tag('MonikerItem'), Namespace: 'hr', Nickname: 'A-1' }]);
    const cn = await env.api.get(`${p.Href}/commonname`, { token });
    expect(cn.status).toBe(200);
    expect(cn.text).toBe('"Ann Lee"');
    for (const link of ['images', 'connections', 'references']) {
      const r = await env.api.get(`${p.Href}/${link}`, { token });
      expect(r.status).toBe(200);
      expect(r.body).toEqual([]);
    }
    for (const l of p.Links) expect((await env.api.get(`${p.Href}/${l.Anchor.Href}`, { token })).status).not.toBe(404);
  });

  it('treats takeownership as an action: GET is 405 with Allow: POST, POST is 204', async () => {
    const p = await person();
    const get = await env.api.get(`${p.Href}/takeownership`, { token });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(get.body.Error).toBe('MethodNotAllowed');
    const post = await env.api.post(`${p.Href}/takeownership`, { token });
    expect(post.status).toBe(204);
    expect((await env.api.get(p.Href, { token })).body.ConcurrencyVersion).toBe(1);
  });

  it('answers 405 for a method a link does not take, and 404 for an unknown link', async () => {
    const p = await person();
    const post = await env.api.post(`${p.Href}/meta`, { token, body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
    expect((await env.api.get(`${p.Href}/nothing`, { token })).status).toBe(404);
    expect((await env.api.del(`${p.Href}/meta/x`, { token })).status).toBe(405);
    expect((await env.api.get(`/api/f/${root}/nothing`, { token })).status).toBe(404);
    expect((await env.api.get(`/api/f/${root}/nothing`, { token })).body.Error).toBe('NotFound');
  });

  it('serves the standard links of a folder and an instance', async () => {
    const i = await env.api.get(`/api/f/${root}`, { token });
    expect(i.status).toBe(200);
    expect((await env.api.get(`/api/f/${root}/commonname`, { token })).body).toBe(env.root.instance.doc.CommonName);
    expect((await env.api.get(`/api/f/${root}/meta`, { token })).body).toEqual([]);
    expect((await env.api.get(`/api/f/${root}/takeownership`, { token })).status).toBe(405);
  });
});
