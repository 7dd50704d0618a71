/**
 * The pure parts of the doors issue: a reader's mode around its Until, the outermost lockdown of a
 * reader's folders, the salted PIN hash, and which stream records the credential change log counts.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { changeOfRecord } from '#shared/access/credential-changes.ts';
import { asAccessMethod, lockdownOver, modeAt, setModeActive } from '#shared/access/modes.ts';
import { pinHash, pinSaltOf } from '#shared/access/pin-hash.ts';
import { enforceVerdict } from '#shared/auth/status-check.ts';

describe('a reader\'s mode', () => {
  const until = '2026-11-27T17:00:00.000Z';
  it('is the set mode before Until, the normal one from Until on, with no job', () => {
    const mode = { accessMethod: 5, until };
    expect(modeAt(0, mode, new Date('2026-11-27T16:59:59.999Z'))).toBe(5);
    expect(modeAt(0, mode, new Date(until))).toBe(0);
    expect(modeAt(2, mode, new Date('2026-11-28T00:00:00Z'))).toBe(2);
    expect(modeAt(0, { accessMethod: 6, until: null }, new Date('2099-01-01T00:00:00Z'))).toBe(6);
    expect(modeAt(2, null, new Date())).toBe(2);
    expect(setModeActive(undefined, new Date())).toBe(false);
  });

  it('reads an unknown stored number as card only', () => {
    expect(asAccessMethod(3)).toBe(0);
    expect(asAccessMethod(6)).toBe(6);
  });
});

describe('the lockdown over a reader', () => {
  it('is the outermost of its folders\' lockdowns, or null', () => {
    const locks = new Map([
      ['floor', 'floor lockdown'],
      ['site', 'site lockdown'],
    ]);
    expect(lockdownOver(['root', 'site', 'building', 'floor'], locks)).toEqual({ folder: 'site', lockdown: 'site lockdown' });
    expect(lockdownOver(['root', 'other'], locks)).toBeNull();
  });
});

describe('the PIN in a download', () => {
  it('is a salted hash that never holds the PIN, the same for the same controller', () => {
    const salt = pinSaltOf('aaaaaaaaaaaaaaaaaaaaaaaa');
    expect(salt).toBe(pinSaltOf('aaaaaaaaaaaaaaaaaaaaaaaa'));
    expect(salt).not.toBe(pinSaltOf('bbbbbbbbbbbbbbbbbbbbbbbb'));
    const h = pinHash(salt, '4711');
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(h).not.toContain('4711');
    expect(pinHash(salt, '4712')).not.toBe(h);
    expect(pinHash(pinSaltOf('bbbbbbbbbbbbbbbbbbbbbbbb'), '4711')).not.toBe(h);
  });
});

describe('the credential change log', () => {
  const record = (oldImage?: Record<string, unknown>, newImage?: Record<string, unknown>): DynamoDBRecord =>
    ({
      eventName: oldImage && newImage ? 'MODIFY' : newImage ? 'INSERT' : 'REMOVE',
      dynamodb: {
        ...(oldImage ? { OldImage: marshall(oldImage, { removeUndefinedValues: true }) } : {}),
        ...(newImage ? { NewImage: marshall(newImage, { removeUndefinedValues: true }) } : {}),
      },
    }) as DynamoDBRecord;
  const object = (coll: string, doc: Record<string, unknown> = {}) => ({ PK: 'O#p1', SK: 'A', Coll: coll, Instances: ['root', 'child'], Doc: JSON.stringify(doc) });

  it('counts a person with the cards it held before and after, under its own instance', () => {
    const before = object('people', { CardAssignments: [{ EncodedCardNumber: 1 }, { EncodedCardNumber: 2, FacilityCode: 7 }] });
    const after = object('people', { CardAssignments: [{ EncodedCardNumber: 2, FacilityCode: 7 }, { EncodedCardNumber: 3 }] });
    expect(changeOfRecord(record(before, after))).toEqual({ instance: 'child', change: { kind: 'person', key: 'p1', cards: [':1', '7:2', ':3'] } });
    expect(changeOfRecord(record(before))?.change.cards).toEqual([':1', '7:2']);
  });

  it('tells changes of grants from changes every answer carries whole, and ignores the rest', () => {
    expect(changeOfRecord(record(undefined, object('accesslevels')))?.change.kind).toBe('grants');
    expect(changeOfRecord(record(undefined, object('readers')))?.change.kind).toBe('grants');
    expect(changeOfRecord(record(undefined, object('schedules')))?.change.kind).toBe('config');
    expect(changeOfRecord(record(undefined, object('holidays')))?.change.kind).toBe('config');
    expect(changeOfRecord(record(undefined, { PK: 'LD#f1', SK: 'LD', Folder: 'f1', Instances: ['root'] }))).toEqual({ instance: 'root', change: { kind: 'config', key: 'f1', cards: [] } });
    expect(changeOfRecord(record({ PK: 'O#r1', SK: 'MODE', Instances: ['root'] }))).toEqual({ instance: 'root', change: { kind: 'config', key: 'r1', cards: [] } });
    expect(changeOfRecord(record(undefined, object('events')))).toBeUndefined();
    expect(changeOfRecord(record(undefined, object('users')))).toBeUndefined();
    expect(changeOfRecord(record(undefined, { PK: 'O#p1', SK: 'R#AccessLevel#l1' }))).toBeUndefined();
  });
});

describe('the Controller role', () => {
  const ok = (role: 'Administrator' | 'Operator' | 'ReadOnly' | 'Controller') => ({ state: 'ok' as const, sessionGeneration: 0, role });
  it('is not a rank below the others: a token of it and a user of another role (or the reverse) is refused', () => {
    expect(() => enforceVerdict({ role: 'Controller', sessionGeneration: 0 }, ok('Controller'))).not.toThrow();
    expect(() => enforceVerdict({ role: 'Controller', sessionGeneration: 0 }, ok('Administrator'))).toThrow(/role of this user changed/);
    expect(() => enforceVerdict({ role: 'ReadOnly', sessionGeneration: 0 }, ok('Controller'))).toThrow(/role of this user changed/);
    expect(() => enforceVerdict({ role: 'ReadOnly', sessionGeneration: 0 }, ok('Operator'))).not.toThrow();
  });
});
