import { describe, expect, it } from 'vitest';
import { ApiError } from '#shared/errors.ts';
import { collectionByName } from '#shared/model/collections.ts';
import { accepts, canonicalJson, parseElementBody, parseObjectBody } from '#shared/objects/validate.ts';

const people = collectionByName('people')!;
const controllers = collectionByName('controllers')!;

async function errorOf(fn: () => Promise<unknown>): Promise<ApiError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('parseObjectBody', () => {
  it('matches the type name whatever the namespace and stores bare names', async () => {
    const r = await parseObjectBody({ $type: 'Vendor.X.PersonInfo, Vendor.X', GivenName: 'A', Monikers: [{ Nickname: 'n' }], Key: 'k', Href: 'h', ConcurrencyVersion: 4, InFolderKey: 'f', Notes: [{ NoteText: 'hi' }] }, people);
    expect(r.typeName).toBe('PersonInfo');
    expect(r.doc).toEqual({ $type: 'PersonInfo', GivenName: 'A', Monikers: [{ $type: 'MonikerItem', Nickname: 'n' }] });
    expect(r.version).toBe(4);
    expect(r.inFolderKey).toBe('f');
    expect(r.noteTexts).toEqual(['hi']);
  });

  it('reads a body without $type as the collection\'s type', async () => {
    const r = await parseObjectBody({ GivenName: 'A', CardAssignments: [{ EncodedCardNumber: 5 }] }, people);
    expect(r.typeName).toBe('PersonInfo');
    expect(r.doc).toEqual({ $type: 'PersonInfo', GivenName: 'A', CardAssignments: [{ $type: 'CardAssignmentInfo', EncodedCardNumber: 5 }] });
    expect((await parseObjectBody({ CommonName: 'b' }, collectionByName('badgetypes')!)).typeName).toBe('BadgeTypeInfo');
    expect((await parseObjectBody({ CommonName: 'i' }, collectionByName('inputs')!)).typeName).toBe('InputInfo');
  });

  it('gives an address without $type the one type its fields fit, else MissingType naming it', async () => {
    const r = await parseObjectBody(
      { Addresses: [{ MailTo: 'a@example.com' }, { Number: '555', Type: 'Work' }, { Street: '1 Main', City: 'X' }, { $type: 'PhoneInfo', Number: '1' }] },
      people,
    );
    expect((r.doc.Addresses as Array<{ $type: string }>).map((a) => a.$type)).toEqual(['EmailAddressInfo', 'PhoneInfo', 'MailingAddressInfo', 'PhoneInfo']);
    const none = await errorOf(() => parseObjectBody({ Addresses: [{ MailTo: 'a@example.com' }, { Type: 'Home' }] }, people));
    expect([none.code, none.message]).toEqual(['MissingType', 'Addresses[1] must carry a "$type" property.']);
    expect((await errorOf(() => parseObjectBody({ Addresses: [{ MailTo: 'a@example.com', Number: '5' }] }, people))).code).toBe('MissingType');
  });

  it('answers WrongType and ValidationFailed naming the field', async () => {
    expect((await errorOf(() => parseObjectBody({ $type: 'DoorInfo' }, people))).code).toBe('WrongType');
    expect((await errorOf(() => parseObjectBody({ $type: '???' }, people))).code).toBe('WrongType');
    const e = await errorOf(() => parseObjectBody({ $type: 'PersonInfo', CardAssignments: [{ EncodedCardNumber: {} }] }, people));
    expect(e.code).toBe('ValidationFailed');
    expect(e.message).toContain('CardAssignments[0].EncodedCardNumber');
    expect((await errorOf(() => parseObjectBody([], people))).code).toBe('ValidationFailed');
  });

  it('keeps write-only fields out of the document', async () => {
    const r = await parseObjectBody({ $type: 'UserInfo', CommonName: 'u', Password: 'p' }, collectionByName('users')!);
    expect(r.doc).not.toHaveProperty('Password');
    expect(r.writeOnly).toEqual({ Password: 'p' });
  });

  it('accepts any controller type except the types of other collections', () => {
    expect(accepts(controllers, 'Mx8Info')).toBe(true);
    expect(accepts(controllers, 'Lp1502Info')).toBe(true);
    expect(accepts(controllers, 'PersonInfo')).toBe(false);
    expect(accepts(collectionByName('inputs')!, 'AscInputInfo')).toBe(true);
  });

  it('enforces limits on depth, strings and arrays', async () => {
    let deep: unknown = 0;
    for (let i = 0; i < 40; i++) deep = [deep];
    expect((await errorOf(() => parseObjectBody({ $type: 'PersonInfo', D: deep }, people))).message).toMatch(/nesting/);
    expect((await errorOf(() => parseObjectBody({ $type: 'PersonInfo', S: 'x'.repeat(70_000) }, people))).message).toContain('S:');
  });
});

describe('parseElementBody', () => {
  it('validates a NoteInfo', async () => {
    expect(await parseElementBody({ $type: 'A.NoteInfo, A', NoteText: 'x' }, 'NoteInfo')).toEqual({ $type: 'NoteInfo', NoteText: 'x' });
    expect((await errorOf(() => parseElementBody({ $type: 'NoteInfo' }, 'NoteInfo'))).message).toContain('NoteText');
  });
});

describe('canonicalJson', () => {
  it('ignores key order', () => {
    expect(canonicalJson({ a: 1, b: { c: [1, { d: 2, e: 3 }] } })).toBe(canonicalJson({ b: { c: [1, { e: 3, d: 2 }] }, a: 1 }));
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });
});
