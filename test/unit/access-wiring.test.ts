/** The access decision calls' pure parts: the request body, the built-in Mercury apps, a level's pairs at a reader. */
import { describe, expect, it } from 'vitest';
import { parseDecisionBody } from '#shared/access/decisions.ts';
import { readerKeysOf, scheduleKeysAt, type LoadedLevel } from '#shared/access/facts.ts';
import { accessResultType, builtinApp, builtinEventType } from '#shared/events/builtin-apps.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';

const NOW = new Date('2026-11-27T12:00:00Z');
const R = 'a'.repeat(24);

describe('parseDecisionBody', () => {
  it('reads a card number exactly, as a number, a bigint or digits, and defaults At to now and Record to false', () => {
    expect(parseDecisionBody({ ReaderKey: R.toUpperCase(), EncodedCardNumber: 42 }, NOW)).toEqual({ readerKey: R, number: '42', facility: undefined, pin: null, at: NOW, record: false });
    expect(parseDecisionBody({ ReaderKey: R, EncodedCardNumber: 9223372036854775807n }, NOW).number).toBe('9223372036854775807');
    expect(parseDecisionBody({ ReaderKey: R, EncodedCardNumber: '0042', FacilityCode: 7, PinCode: '1234', At: '2026-11-25T10:00:00-05:00', Record: true }, NOW)).toEqual({
      readerKey: R,
      number: '42',
      facility: '7',
      pin: '1234',
      at: new Date('2026-11-25T15:00:00Z'),
      record: true,
    });
  });

  it.each([
    [{ ReaderKey: R, EncodedCardNumber: 1, Other: true }, /Unknown field Other/],
    [{ ReaderKey: R, EncodedCardNumber: 1.5 }, /integer/],
    [{ ReaderKey: R, EncodedCardNumber: -1 }, /2\^63-1/],
    [{ ReaderKey: R, EncodedCardNumber: '9223372036854775808' }, /2\^63-1/],
    [{ ReaderKey: R, EncodedCardNumber: 1, At: '2026-11-25T10:00:00' }, /At/],
    [{ ReaderKey: R, EncodedCardNumber: 1, Record: 'true' }, /Record/],
    [{ ReaderKey: R, EncodedCardNumber: 1, PinCode: '12a4' }, /PinCode/],
    [{ ReaderKey: 'front door', EncodedCardNumber: 1 }, /ReaderKey/],
    [[], /AccessDecisionRequest/],
  ])('refuses %j with 400 ValidationFailed', (body, message) => {
    expect(() => parseDecisionBody(body, NOW)).toThrow(expect.objectContaining({ status: 400, code: 'ValidationFailed', message: expect.stringMatching(message) }));
  });
});

describe('built-in Mercury apps', () => {
  it('finds MercuryCommands by Nickname or key in the root instance, and its card read type by moniker', () => {
    const app = builtinApp('MercuryCommands', 'root')!;
    expect(app).toMatchObject({ key: '000000000000000000000011', collection: 'apps', folder: 'root', instances: ['root'] });
    expect(builtinApp('000000000000000000000011', 'root')?.key).toBe(app.key);
    expect(builtinApp('mercurycommands', 'root')).toBeUndefined();
    expect(builtinEventType(app, { Namespace: 'MercuryServiceCommands', Nickname: 'mercury:command-simulateCardRead' })?.key).toBe('000000000000000000000012');
    expect(builtinEventType(app, { Namespace: '', Nickname: 'mercury:command-simulateCardRead' })?.key).toBe('000000000000000000000012');
    expect(builtinEventType(app, { Namespace: 'Other', Nickname: 'mercury:command-simulateCardRead' })).toBeUndefined();
  });

  it('gives Access Denied a higher priority than Access Granted', () => {
    const granted = accessResultType(true, 'root');
    const denied = accessResultType(false, 'root');
    expect(granted.app.doc.CommonName).toBe('Mercury Driver Service');
    expect(granted.type.doc).toMatchObject({ CommonName: 'Access Granted', Monikers: [{ Namespace: 'MercuryService', Nickname: 'access-granted' }] });
    expect(denied.type.doc).toMatchObject({ CommonName: 'Access Denied', Monikers: [{ Namespace: 'MercuryService', Nickname: 'access-denied' }] });
    expect(denied.type.doc.Priority as number).toBeGreaterThan(granted.type.doc.Priority as number);
  });
});

describe('a level\'s pairs at a reader', () => {
  const level = { key: 'l' } as StoredObject;
  const l: LoadedLevel = { level, entries: [{ readerId: 'r1', scheduleId: 's1' }, { readerId: 'r2', scheduleId: 's2' }], readers: ['r2', 'r3'], schedules: ['s3'] };

  it('pairs each entry\'s reader with its schedule and every Reader connection with every Schedule connection', () => {
    expect(scheduleKeysAt(l, 'r1')).toEqual(['s1']);
    expect(scheduleKeysAt(l, 'r2')).toEqual(['s2', 's3']);
    expect(scheduleKeysAt(l, 'r3')).toEqual(['s3']);
    expect(scheduleKeysAt(l, 'r4')).toEqual([]);
    expect(scheduleKeysAt({ ...l, schedules: [] }, 'r3')).toEqual([]);
    expect(readerKeysOf(l).sort()).toEqual(['r1', 'r2', 'r3']);
  });
});
