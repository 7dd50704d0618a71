import { describe, expect, it } from 'vitest';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { COLLECTIONS } from '#shared/model/collections.ts';
import { objectHref, renderObject } from '#shared/model/object-render.ts';

const NS = 'Acme.Model';
const tag = (n: string) => `${NS}.${n}, ${NS}`;

const person: StoredObject = {
  key: 'aaaaaaaaaaaaaaaaaaaaaaaa',
  collection: 'people',
  type: 'PersonInfo',
  folder: 'bbbbbbbbbbbbbbbbbbbbbbbb',
  path: ['bbbbbbbbbbbbbbbbbbbbbbbb'],
  instances: ['bbbbbbbbbbbbbbbbbbbbbbbb'],
  version: 3,
  doc: {
    $type: 'PersonInfo',
    GivenName: 'Ann',
    Monikers: [{ Namespace: 'a', Nickname: 'b' }],
    Addresses: [{ $type: 'PhoneInfo', Number: '1' }],
    Vendor: { $type: 'Other.Ns.ThingInfo, Other.Ns', n: 1 },
    Key: 'spoofed',
  },
};

describe('renderObject', () => {
  it('namespaces $type on the object and every nested element, filling in the typed ones', () => {
    const r = renderObject(person, NS);
    expect(r.$type).toBe(tag('PersonInfo'));
    expect(r.Monikers).toEqual([{ $type: tag('MonikerItem'), Namespace: 'a', Nickname: 'b' }]);
    expect((r.Addresses as any[])[0].$type).toBe(tag('PhoneInfo'));
    expect((r.Vendor as any).$type).toBe(tag('ThingInfo'));
    expect((r.Links as any[])[0]).toEqual({ $type: tag('Link'), Relation: 'Meta', Anchor: { $type: tag('Anchor'), Href: 'meta', Text: 'Metadata' } });
  });

  it('sets the read-only fields from the item, whatever the document holds', () => {
    const r = renderObject(person, NS);
    expect(r).toMatchObject({
      Key: person.key,
      Href: `/api/f/${person.folder}/people/${person.key}`,
      InFolderKey: person.folder,
      InFolderHref: `/api/f/${person.folder}`,
      ConcurrencyVersion: 3,
      Notes: [],
    });
  });

  it('gives folders and instances the Href /api/f/<key>, and the instance a link to every collection', () => {
    const root: StoredObject = { ...person, collection: 'instances', type: 'InstanceInfo', folder: '', path: [], doc: { CommonName: 'Root' } };
    expect(objectHref(root)).toBe(`/api/f/${root.key}`);
    const r = renderObject(root, NS);
    expect(r.InFolderKey).toBeNull();
    const anchors = (r.Links as any[]).map((l) => l.Anchor.Href);
    for (const c of COLLECTIONS) expect(anchors).toContain(c.name);
    const folder = renderObject({ ...root, collection: 'folders', type: 'FolderInfo' }, NS);
    const folderAnchors = (folder.Links as any[]).map((l) => l.Anchor.Href);
    expect(folderAnchors).toContain('people');
    expect(folderAnchors).not.toContain('users');
  });

  it('never returns a write-only field', () => {
    const user = { ...person, collection: 'users', type: 'UserInfo', doc: { CommonName: 'u', Password: 'leak' } };
    expect(renderObject(user, NS)).not.toHaveProperty('Password');
  });
});
