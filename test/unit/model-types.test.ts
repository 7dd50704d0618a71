import { describe, expect, it } from 'vitest';
import { typeNameOf, typeTag } from '#shared/model/type-tags.ts';
import { USAGE_TOTAL_SK, claimPk, collectionPk, isObjectKey, objectPk, partitionPk, usageDaySk, usagePk } from '#shared/db/item-keys.ts';
import { newKey } from '#shared/model/placement.ts';
import { redactSecrets, REDACTED } from '#shared/logger.ts';

describe('$type tags', () => {
  it('renders the configured namespace', () => {
    expect(typeTag('Gatehouse.Model', 'PersonInfo')).toBe('Gatehouse.Model.PersonInfo, Gatehouse.Model');
  });

  it('reads the bare type name whatever the namespace', () => {
    expect(typeNameOf('Vendor.Cloud.Model.PersonInfo, Vendor.Cloud.Model')).toBe('PersonInfo');
    expect(typeNameOf('PersonInfo')).toBe('PersonInfo');
    expect(typeNameOf('  X.AscInputInfo , X ')).toBe('AscInputInfo');
  });

  it('rejects values that name no type', () => {
    for (const bad of [undefined, null, 3, '', 'a b', 'X.', '<script>', {}]) expect(typeNameOf(bad)).toBeUndefined();
  });
});

describe('keys', () => {
  it('spells item keys', () => {
    expect(objectPk('k')).toBe('O#k');
    expect(collectionPk('f', 'people')).toBe('C#f#people');
    expect(partitionPk('i', 'people')).toBe('T#i#people');
    expect(claimPk('i', 'card', ':123')).toBe('U#i#card#:123');
  });

  it("spells an instance's usage keys so a day range is one key condition", () => {
    expect(usagePk('i')).toBe('US#i');
    expect(usageDaySk('2026-05-01')).toBe('D#2026-05-01');
    // Days sort as text within the partition; the total sorts apart from them.
    expect([usageDaySk('2026-05-10'), USAGE_TOTAL_SK, usageDaySk('2026-04-30')].sort()).toEqual(['D#2026-04-30', 'D#2026-05-10', 'TOTAL']);
  });

  it('makes 24-hex, time-ordered object keys', () => {
    const a = newKey();
    const b = newKey();
    expect(isObjectKey(a)).toBe(true);
    expect(a < b).toBe(true);
    expect(isObjectKey('0123')).toBe(false);
  });
});

describe('log redaction', () => {
  it('redacts secret-named attributes and keeps the rest', () => {
    const line = JSON.stringify(
      { password: 'hunter2', nested: { client_secret: 's', refresh_token: 'r', authorization: 'Bearer x', status: 200 }, onetimepassword: '123456', route: '/token' },
      redactSecrets,
    );
    for (const secret of ['hunter2', '"s"', '"r"', 'Bearer x', '123456']) expect(line).not.toContain(secret);
    expect(line).toContain(REDACTED);
    expect(line).toContain('"status":200');
    expect(line).toContain('/token');
  });
});
