/** Event types of an app, and their membership in alarm definitions. */
import { beforeAll, describe, expect, it } from 'vitest';
import { seedTenant, uniqueName } from '../support/tokens.ts';
import { setupEvents, tag, type Env } from './events-fixture.ts';

let e: Env;

beforeAll(async () => {
  e = await setupEvents();
});

describe('event types', () => {
  it('adds an event type to an app (201) with its Href under the app, and reads it back', async () => {
    const app = await e.app();
    const r = await e.api.put(`${app.Href}/eventtypes`, {
      token: e.token,
      body: {
        $type: 'Vendor.Model.EventTypeInfo, Vendor.Model',
        CommonName: 'Door forced',
        Monikers: [{ Namespace: 'Vendor', Nickname: 'DoorForced' }],
        MessageTemplateLong: 'Door {Door} forced',
        MessageTemplateShort: 'Forced',
        NonLogging: false,
        Priority: 7,
        RequiresAcknowledgement: true,
        VendorField: { kept: true },
      },
    });

    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      $type: tag('EventTypeInfo'),
      CommonName: 'Door forced',
      Priority: 7,
      RequiresAcknowledgement: true,
      NonLogging: false,
      MessageTemplateLong: 'Door {Door} forced',
      MessageTemplateShort: 'Forced',
      VendorField: { kept: true },
      InFolderKey: app.Key,
      ConcurrencyVersion: 1,
    });
    expect(r.body.Monikers).toEqual([{ $type: tag('MonikerItem'), Namespace: 'Vendor', Nickname: 'DoorForced' }]);
    expect(r.body.Href).toBe(`/api/f/${e.root}/apps/${app.Key}/eventtypes/${r.body.Key}`);
    const got = await e.api.get(r.body.Href, { token: e.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
  });

  it('lists an app\'s event types, and finds one by namespace and nickname (404 when none matches)', async () => {
    const app = await e.app();
    const a = await e.eventType(app, { Monikers: [{ Namespace: 'N1', Nickname: 'A' }] });
    const b = await e.eventType(app, { Monikers: [{ Namespace: 'N1', Nickname: 'B' }, { Namespace: 'N2', Nickname: 'B2' }] });
    const other = await e.app();
    await e.eventType(other, { Monikers: [{ Namespace: 'N1', Nickname: 'A' }] });

    const list = await e.api.get(`${app.Href}/eventtypes`, { token: e.token });
    expect(list.status).toBe(200);
    expect(list.body.map((t: any) => t.Key)).toEqual([a.Key, b.Key]);
    const found = await e.api.get(`${app.Href}/eventtypes`, { token: e.token, query: { namespace: 'N2', nickname: 'B2' } });
    expect(found.status).toBe(200);
    expect(found.body.Key).toBe(b.Key);
    expect((await e.api.get(`${app.Href}/eventtypes`, { token: e.token, query: { nickname: 'A' } })).body.Key).toBe(a.Key);
    const none = await e.api.get(`${app.Href}/eventtypes`, { token: e.token, query: { namespace: 'N1', nickname: 'Z' } });
    expect(none.status).toBe(404);
    expect(none.body.Error).toBe('EventTypeNotFound');
    const paged = await e.api.get(`${app.Href}/eventtypes`, { token: e.token, query: { page: 1, pageSize: 1 } });
    expect(paged.body.map((t: any) => t.Key)).toEqual([b.Key]);
  });

  it('finds an app kept in a sub-folder through the instance path too', async () => {
    const folder = await e.object('folders', 'FolderInfo');
    const app = await e.app(folder.Key);
    const t = await e.eventType(app);
    expect(t.Href).toBe(`/api/f/${folder.Key}/apps/${app.Key}/eventtypes/${t.Key}`);
    const viaInstance = await e.api.get(`/api/f/${e.root}/apps/${app.Key}/eventtypes`, { token: e.token });
    expect(viaInstance.body.map((x: any) => x.Key)).toEqual([t.Key]);
    expect((await e.api.get(`/api/f/${e.root}/apps/${app.Key}/eventtypes/${t.Key}`, { token: e.token })).body).toEqual(t);
    const other = await e.object('folders', 'FolderInfo');
    expect((await e.api.get(`/api/f/${other.Key}/apps/${app.Key}/eventtypes`, { token: e.token })).status).toBe(404);
  });

  it('rejects a moniker already used by another event type of the app (409), not one of another app', async () => {
    const app = await e.app();
    await e.eventType(app, { Monikers: [{ Namespace: 'X', Nickname: 'Same' }] });
    const dup = await e.api.put(`${app.Href}/eventtypes`, {
      token: e.token,
      body: { $type: 'EventTypeInfo', Monikers: [{ Namespace: 'X', Nickname: 'Same' }] },
    });
    expect(dup.status).toBe(409);
    expect(dup.body.Error).toBe('DuplicateMoniker');
    await e.eventType(await e.app(), { Monikers: [{ Namespace: 'X', Nickname: 'Same' }] });
  });

  it('gives exactly one winner when two event types claim the same moniker at once', async () => {
    const app = await e.app();
    const body = { $type: 'EventTypeInfo', Monikers: [{ Namespace: 'Race', Nickname: 'Once' }] };
    const results = await Promise.all([1, 2, 3, 4].map(() => e.api.put(`${app.Href}/eventtypes`, { token: e.token, body })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it('updates with the spec\'s GET-with-body and with PUT (204), keeping moniker uniqueness', async () => {
    const app = await e.app();
    const t = await e.eventType(app, { Monikers: [{ Namespace: 'U', Nickname: 'One' }], Priority: 1 });
    await e.eventType(app, { Monikers: [{ Namespace: 'U', Nickname: 'Taken' }] });

    const viaGet = await e.api.get(t.Href, { token: e.token, body: { ...t, Priority: 2, Monikers: [{ Namespace: 'U', Nickname: 'Two' }] } });
    expect(viaGet.status).toBe(204);
    const afterGet = (await e.api.get(t.Href, { token: e.token })).body;
    expect(afterGet).toMatchObject({ Priority: 2, ConcurrencyVersion: 2 });
    expect(afterGet.Monikers[0].Nickname).toBe('Two');
    // The released moniker is free again, the new one is taken.
    await e.eventType(app, { Monikers: [{ Namespace: 'U', Nickname: 'One' }] });

    const viaPut = await e.api.put(t.Href, { token: e.token, body: { ...afterGet, Priority: 3 } });
    expect(viaPut.status).toBe(204);
    expect((await e.api.get(t.Href, { token: e.token })).body.Priority).toBe(3);

    const dup = await e.api.put(t.Href, { token: e.token, body: { $type: 'EventTypeInfo', Monikers: [{ Namespace: 'U', Nickname: 'Taken' }] } });
    expect(dup.status).toBe(409);
    const stale = await e.api.put(t.Href, { token: e.token, body: { ...afterGet, ConcurrencyVersion: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.Error).toBe('ConcurrencyConflict');
  });

  it('deletes an event type (204) and releases its monikers', async () => {
    const app = await e.app();
    const t = await e.eventType(app, { Monikers: [{ Namespace: 'D', Nickname: 'Gone' }] });
    expect((await e.api.del(t.Href, { token: e.token })).status).toBe(204);
    expect((await e.api.get(t.Href, { token: e.token })).status).toBe(404);
    expect((await e.api.del(t.Href, { token: e.token })).status).toBe(404);
    await e.eventType(app, { Monikers: [{ Namespace: 'D', Nickname: 'Gone' }] });
  });

  it('serves the standard links of an event type', async () => {
    const app = await e.app();
    const t = await e.eventType(app, { CommonName: 'Linked', Metadata: [{ Key: 'k', Values: '[]' }] });
    for (const l of t.Links) {
      const r = await e.api.get(`${t.Href}/${l.Anchor.Href}`, { token: e.token });
      expect(r.status, l.Anchor.Href).toBe(l.Anchor.Href === 'takeownership' ? 405 : 200);
    }
    expect((await e.api.get(`${t.Href}/commonname`, { token: e.token })).body).toBe('Linked');
    expect((await e.api.get(`${t.Href}/monikers`, { token: e.token })).body).toEqual(t.Monikers);
    expect((await e.api.get(`${t.Href}/meta`, { token: e.token })).body).toEqual([{ $type: tag('MetadataItem'), Key: 'k', Values: '[]' }]);
    expect((await e.api.get(`${t.Href}/nothing`, { token: e.token })).status).toBe(404);
  });

  it('reads a body without $type as an EventTypeInfo; rejects another type (WrongType) and bad fields', async () => {
    const app = await e.app();
    const untyped = await e.api.put(`${app.Href}/eventtypes`, { token: e.token, body: { Priority: 1, Monikers: [{ Namespace: 'n', Nickname: uniqueName('t') }] } });
    expect(untyped.status).toBe(201);
    expect(untyped.body.$type).toMatch(/\.EventTypeInfo, /);
    const wrong = await e.api.put(`${app.Href}/eventtypes`, { token: e.token, body: { $type: 'PersonInfo' } });
    expect([wrong.status, wrong.body.Error]).toEqual([400, 'WrongType']);
    const bad = await e.api.put(`${app.Href}/eventtypes`, { token: e.token, body: { $type: 'EventTypeInfo', Priority: 'high' } });
    expect([bad.status, bad.body.Error]).toEqual([400, 'ValidationFailed']);
  });

  it('refuses ReadOnly writers (403) and callers outside the scope (403); unknown app or type is 404', async () => {
    const app = await e.app();
    const t = await e.eventType(app);
    const ro = await e.api.put(`${app.Href}/eventtypes`, { token: e.env.root.tokens.ReadOnly, body: { $type: 'EventTypeInfo' } });
    expect(ro.status).toBe(403);
    expect((await e.api.del(t.Href, { token: e.env.root.tokens.ReadOnly })).status).toBe(403);
    expect((await e.api.get(t.Href, { token: e.env.root.tokens.ReadOnly })).status).toBe(200);

    const stranger = await seedTenant(e.t, e.env.deps, { name: uniqueName('Other') });
    expect((await e.api.get(t.Href, { token: stranger.tokens.Administrator })).status).toBe(403);
    expect((await e.api.get(`${app.Href}/eventtypes`, { token: stranger.tokens.Administrator })).status).toBe(403);
    expect((await e.api.get(`/api/f/${e.root}/apps/0123456789abcdef01234567/eventtypes`, { token: e.token })).status).toBe(404);
    expect((await e.api.get(`${app.Href}/eventtypes/0123456789abcdef01234567`, { token: e.token })).status).toBe(404);
  });
});

describe('alarm definitions', () => {
  async function alarm(): Promise<any> {
    return e.object('alarmdefinitions', 'AlarmDefinitionInfo');
  }
  const members = `collections/eventtypes`;

  it('adds an event type by Href (204, idempotent), lists it, and removes it (204)', async () => {
    const app = await e.app();
    const t = await e.eventType(app);
    const a = await alarm();

    const add = await e.api.put(`${a.Href}/${members}`, { token: e.token, body: JSON.stringify(t.Href) });
    expect(add.status).toBe(204);
    expect((await e.api.put(`${a.Href}/${members}`, { token: e.token, body: JSON.stringify(t.Href) })).status).toBe(204);
    const list = await e.api.get(`${a.Href}/${members}`, { token: e.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([(await e.api.get(t.Href, { token: e.token })).body]);

    expect((await e.api.del(`${a.Href}/${members}/${t.Key}`, { token: e.token })).status).toBe(204);
    expect((await e.api.get(`${a.Href}/${members}`, { token: e.token })).body).toEqual([]);
    expect((await e.api.del(`${a.Href}/${members}/${t.Key}`, { token: e.token })).status).toBe(404);
  });

  it('makes events of its event types require acknowledgement', async () => {
    const app = await e.app();
    const t = await e.eventType(app, { RequiresAcknowledgement: false });
    expect((await e.published(e.posting(app.Key, t))).RequiresAcknowledgement).toBe(false);
    const a = await alarm();
    expect((await e.api.put(`${a.Href}/${members}`, { token: e.token, body: JSON.stringify(`https://gatehouse.example${t.Href}`) })).status).toBe(204);
    expect((await e.published(e.posting(app.Key, t))).RequiresAcknowledgement).toBe(true);
    expect((await e.api.del(`${a.Href}/${members}/${t.Key}`, { token: e.token })).status).toBe(204);
    expect((await e.published(e.posting(app.Key, t))).RequiresAcknowledgement).toBe(false);
  });

  it('rejects a body that is not an event type Href (400), an unknown event type (404), and ReadOnly (403)', async () => {
    const a = await alarm();
    const bad = await e.api.put(`${a.Href}/${members}`, { token: e.token, body: JSON.stringify('/api/f/x/people/y') });
    expect([bad.status, bad.body.Error]).toEqual([400, 'ValidationFailed']);
    const unknown = await e.api.put(`${a.Href}/${members}`, {
      token: e.token,
      body: JSON.stringify(`/api/f/${e.root}/apps/0123456789abcdef01234567/eventtypes/0123456789abcdef01234568`),
    });
    expect([unknown.status, unknown.body.Error]).toEqual([404, 'EventTypeNotFound']);
    const t = await e.eventType(await e.app());
    expect((await e.api.put(`${a.Href}/${members}`, { token: e.env.root.tokens.ReadOnly, body: JSON.stringify(t.Href) })).status).toBe(403);
    expect((await e.api.put(`/api/f/${e.root}/alarmdefinitions/0123456789abcdef01234567/${members}`, { token: e.token, body: JSON.stringify(t.Href) })).status).toBe(404);
  });

  it('forgets an event type\'s memberships when the event type is deleted', async () => {
    const app = await e.app();
    const t = await e.eventType(app);
    const a = await alarm();
    await e.api.put(`${a.Href}/${members}`, { token: e.token, body: JSON.stringify(t.Href) });
    expect((await e.api.del(t.Href, { token: e.token })).status).toBe(204);
    expect((await e.api.get(`${a.Href}/${members}`, { token: e.token })).body).toEqual([]);
  });
});
