import { deserialize } from 'bson';
import { describe, expect, it } from 'vitest';
import { auditEvent } from '#shared/events/audit-event.ts';
import { renderEvent } from '#shared/events/render.ts';
import { withServerCardFields, withServerFieldsOfCards } from '#shared/model/card-keys.ts';
import { renderElement, renderObject } from '#shared/model/render.ts';
import { schemaFor } from '#shared/model/schemas/index.ts';
import { isTimeOfDay, isTimeZone, isWindowDuration, parseTimeSpan } from '#shared/model/time.ts';

const K1 = '111111111111111111111111';

describe('times of the access model', () => {
  it('reads hh:mm:ss and .NET d.hh:mm:ss', () => {
    expect(parseTimeSpan('09:00:00')).toBe(32_400);
    expect(parseTimeSpan('1.00:00:00')).toBe(86_400);
    expect(parseTimeSpan('23:59:59')).toBe(86_399);
    for (const bad of ['24:00:00', '09:60:00', '09:00', '-01:00:00', '01:00:00.5', '']) expect(parseTimeSpan(bad), bad).toBeUndefined();
    expect([isTimeOfDay('23:59:59'), isTimeOfDay('1.00:00:00')]).toEqual([true, false]);
    expect([isWindowDuration('00:00:01'), isWindowDuration('1.00:00:00'), isWindowDuration('00:00:00'), isWindowDuration('1.00:00:01')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('knows IANA zones and their aliases, not POSIX TZ strings or offsets', () => {
    for (const z of ['America/Toronto', 'UTC', 'US/Eastern', 'Etc/GMT+5', 'Australia/Lord_Howe']) expect(isTimeZone(z), z).toBe(true);
    for (const z of ['EST5EDT,M3.2.0/2,M11.1.0/2', '+01:00', 'Mars/Olympus', '', 'America/../Toronto']) expect(isTimeZone(z), z).toBe(false);
  });
});

describe('server fields of a card', () => {
  const stored = { Key: K1, EncodedCardNumber: 1, PinCode: '1234', CurrentUseCount: 3, LastUsed: '2026-11-01T08:00:00Z' };

  it('keeps the stored use count, last use and PIN against what a write sends or leaves out', () => {
    expect(withServerCardFields({ Key: K1, EncodedCardNumber: 1 }, stored)).toEqual(stored);
    expect(withServerCardFields({ Key: K1, EncodedCardNumber: 1, CurrentUseCount: 1, LastUsed: '2000-01-01T00:00:00Z' }, stored)).toEqual(stored);
  });

  it('re-arms on CurrentUseCount 0, replaces the PIN when one is sent and removes it on null', () => {
    expect(withServerCardFields({ Key: K1, CurrentUseCount: 0 }, stored)).toEqual({ Key: K1, CurrentUseCount: 0, LastUsed: stored.LastUsed, PinCode: '1234' });
    expect(withServerCardFields({ Key: K1, PinCode: '9876' }, stored).PinCode).toBe('9876');
    expect(withServerCardFields({ Key: K1, PinCode: null }, stored)).not.toHaveProperty('PinCode');
  });

  it('starts a new card unused', () => {
    expect(withServerCardFields({ Key: K1, CurrentUseCount: 7, LastUsed: '2026-01-01T00:00:00Z', PinCode: '1111' }, undefined)).toEqual({ Key: K1, PinCode: '1111' });
  });

  it('matches the cards of a whole-person write to the stored ones by key', () => {
    const other = '222222222222222222222222';
    expect(withServerFieldsOfCards([{ Key: other, EncodedCardNumber: 2 }, { Key: K1, EncodedCardNumber: 1 }, 'junk'], [stored])).toEqual([
      { Key: other, EncodedCardNumber: 2 },
      stored,
      'junk',
    ]);
  });
});

describe('rendering cards', () => {
  it('never renders a PinCode, in a person or a card alone', () => {
    const doc = { $type: 'PersonInfo', CommonName: 'Jane', CardAssignments: [{ Key: K1, EncodedCardNumber: 1, PinCode: '1234', CurrentUseCount: 2 }] };
    const o = { key: 'aaaaaaaaaaaaaaaaaaaaaaaa', collection: 'people', type: 'PersonInfo', folder: 'f', path: ['f'], instances: ['f'], version: 1, doc };
    const person = renderObject(o, 'NS');
    expect(JSON.stringify(person)).not.toContain('PinCode');
    expect((person.CardAssignments as Array<Record<string, unknown>>)[0]).toMatchObject({ Key: K1, CurrentUseCount: 2 });
    expect(renderElement('CardAssignmentInfo', doc.CardAssignments[0], 'NS')).not.toHaveProperty('PinCode');
  });
});

describe('schemas of readers and controllers of any type', () => {
  it('validates a vendor reader type as a reader and a vendor controller type as a controller', () => {
    expect(schemaFor('MercuryReaderInfo', 'readers').safeParse({ $type: 'MercuryReaderInfo', AccessMethod: 3 }).success).toBe(false);
    expect(schemaFor('MercuryReaderInfo', 'readers').safeParse({ $type: 'MercuryReaderInfo', AccessMethod: 6 }).success).toBe(true);
    expect(schemaFor('MercuryControllerInfo', 'controllers').safeParse({ $type: 'X', TimeZone: 'Nowhere/Land' }).success).toBe(false);
    // Outside those collections an unknown type is still BaseInfo.
    expect(schemaFor('MercuryReaderInfo').safeParse({ $type: 'MercuryReaderInfo', AccessMethod: 3 }).success).toBe(true);
  });
});

describe('events of a person change', () => {
  it('carry no card field, so neither the events list, the live channels nor webhooks (which send the rendered event) show a PIN', () => {
    const doc = { $type: 'PersonInfo', CommonName: 'Jane', CardAssignments: [{ Key: K1, EncodedCardNumber: 1, PinCode: '4321' }] };
    const o = { key: 'aaaaaaaaaaaaaaaaaaaaaaaa', collection: 'people', type: 'PersonInfo', folder: 'f', path: ['f'], instances: ['f'], version: 2, doc };
    for (const kind of ['created', 'updated', 'deleted'] as const) {
      const w = auditEvent({ kind, eventId: kind, at: Date.UTC(2026, 10, 27), before: o, after: kind === 'deleted' ? undefined : o }, new Date(), 30);
      const rendered = renderEvent(w.event, 'NS');
      expect(JSON.stringify(rendered)).not.toContain('4321');
      const data = deserialize(Buffer.from(rendered.EventDataBsonBase64 as string, 'base64'));
      expect(JSON.stringify(data)).not.toContain('4321');
      expect(data).toMatchObject({ ObjectKey: o.key, CommonName: 'Jane' });
    }
  });
});
