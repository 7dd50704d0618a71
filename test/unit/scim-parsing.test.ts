/**
 * The SCIM filter and PATCH parsing (shared/scim/filter.ts, patch.ts): the forms Entra ID and Okta
 * send brought to RFC 7644's, and what is refused.
 */
import { describe, expect, it } from 'vitest';
import { parseScimFilter } from '#shared/scim/filter.ts';
import { applyPatch, patchOperations } from '#shared/scim/patch.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const body = (Operations: unknown[]) => ({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations });
const user = () => ({
  schemas: [USER],
  id: 'x',
  userName: 'ada@example.org',
  active: true,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: 'ada@example.org', type: 'work', primary: true }],
  meta: { resourceType: 'User' },
});

describe('SCIM filters', () => {
  it('reads one equality on an indexed attribute, with or without the schema URN', () => {
    expect(parseScimFilter('userName eq "Ada@Example.org"', 'User')).toEqual({ attribute: 'userName', value: 'Ada@Example.org' });
    expect(parseScimFilter('USERNAME eq "a"', 'User').attribute).toBe('userName');
    expect(parseScimFilter(`${USER}:externalId eq "e-1"`, 'User')).toEqual({ attribute: 'externalId', value: 'e-1' });
    expect(parseScimFilter('displayName eq "Staff"', 'Group')).toEqual({ attribute: 'displayName', value: 'Staff' });
  });

  it('rejects other filters with invalidFilter', () => {
    for (const [f, r] of [
      ['userName sw "a"', 'User'],
      ['userName eq "a" and active eq true', 'User'],
      ['active eq true', 'User'],
      ['userName eq 3', 'User'],
      ['userName eq', 'User'],
      ['externalId eq "x"', 'Group'],
    ] as const) {
      expect(() => parseScimFilter(f, r), f).toThrow(expect.objectContaining({ status: 400, scimType: 'invalidFilter' }));
    }
  });
});

describe('SCIM PATCH', () => {
  it("reads Entra ID's capitalised ops and string booleans", () => {
    const ops = patchOperations(body([{ op: 'Replace', path: 'active', value: 'False' }]), USER);
    expect(ops).toEqual([{ op: 'replace', path: 'active', value: false }]);
    expect(applyPatch(user(), ops).active).toBe(false);
  });

  it('splits a value object without a path into one operation per attribute path', () => {
    const ops = patchOperations(body([{ op: 'replace', value: { active: 'True', 'name.givenName': 'Augusta', id: 'ignored', [`${USER}:displayName`]: 'A. L.' } }]), USER);
    expect(ops).toEqual([
      { op: 'replace', path: 'active', value: true },
      { op: 'replace', path: 'name.givenName', value: 'Augusta' },
      { op: 'replace', path: 'displayName', value: 'A. L.' },
    ]);
    expect(applyPatch(user(), ops)).toMatchObject({ active: true, name: { givenName: 'Augusta' }, displayName: 'A. L.' });
  });

  it('applies paths with filters, adding the element when none matches', () => {
    const replaced = applyPatch(user(), patchOperations(body([{ op: 'replace', path: 'emails[type eq "work"].value', value: 'new@example.org' }]), USER));
    expect(replaced.emails).toEqual([{ value: 'new@example.org', type: 'work', primary: true }]);
    const added = applyPatch(user(), patchOperations(body([{ op: 'add', path: 'emails[type eq "home"].value', value: 'home@example.org' }]), USER));
    expect(added.emails).toHaveLength(2);
  });

  it('drops extension attributes it does not map, and refuses what is not a PATCH', () => {
    expect(patchOperations(body([{ op: 'add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber', value: '1' }]), USER)).toEqual([]);
    expect(() => patchOperations({ Operations: 'x' }, USER)).toThrow(expect.objectContaining({ scimType: 'invalidSyntax' }));
    expect(() => patchOperations(body([{ op: 'move', path: 'a' }]), USER)).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => patchOperations(body([{ op: 'remove' }]), USER)).toThrow(expect.objectContaining({ scimType: 'noTarget' }));
    expect(() => applyPatch(user(), patchOperations(body([{ op: 'replace', path: 'emails[[', value: 1 }]), USER))).toThrow(expect.objectContaining({ status: 400 }));
  });
});
