/** EventMessagePosting validation, BSON decoding and message templates. */
import { serialize } from 'bson';
import { describe, expect, it } from 'vitest';
import { decodeEventData } from '#shared/events/event-data.ts';
import { fillTemplate, parseInstant, parsePosting } from '#shared/events/posting.ts';

const b64 = (doc: Record<string, unknown>) => Buffer.from(serialize(doc)).toString('base64');
const valid = {
  $type: 'Any.Namespace.EventMessagePosting, Any.Namespace',
  OccurredOn: '2024-05-01T10:00:00Z',
  AppKey: 'MercuryCommands',
  EventTypeMoniker: { Namespace: 'N', Nickname: 'Open' },
  RelatedObjects: [{ Relation: 'Reader', LinkedObjectKey: 'abc', CommonName: 'Front' }],
  EventDataBsonBase64: b64({ A: 1 }),
  ClientDeviceId: 'dev',
};

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return `${(err as { status?: number }).status} ${(err as { code?: string }).code}`;
  }
  return 'ok';
};
const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    return `${(err as { status?: number }).status} ${(err as { code?: string }).code}`;
  }
  return 'ok';
};

describe('parsePosting', () => {
  it('accepts a posting whatever the $type namespace, decoding its data and keeping extra fields apart', async () => {
    const p = await parsePosting(valid);
    expect(p.occurredOn.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(p.appKey).toBe('MercuryCommands');
    expect(p.eventTypeMoniker).toEqual({ Namespace: 'N', Nickname: 'Open' });
    expect(p.eventData).toEqual({ A: 1 });
    expect(p.extra).toEqual({ ClientDeviceId: 'dev' });
  });

  it('defaults a missing Namespace to the empty string and missing data to an empty document', async () => {
    const p = await parsePosting({ ...valid, EventTypeMoniker: { Nickname: 'Open' }, EventDataBsonBase64: undefined, RelatedObjects: undefined });
    expect(p.eventTypeMoniker.Namespace).toBe('');
    expect(p.eventData).toEqual({});
    expect(p.eventDataBsonBase64).toBeNull();
    expect(p.relatedObjects).toEqual([]);
  });

  it('reads a posting without $type as an EventMessagePosting; rejects a foreign $type, bad dates, bad BSON and malformed fields', async () => {
    const { $type: _t, ...untyped } = valid;
    expect(await codeOf(parsePosting(untyped))).toBe('ok');
    expect(await codeOf(parsePosting({ ...valid, $type: 'PersonInfo' }))).toBe('400 WrongType');
    expect(await codeOf(parsePosting({ ...valid, OccurredOn: '2024-05-01T10:00:00' }))).toBe('400 ValidationFailed');
    expect(await codeOf(parsePosting({ ...valid, OccurredOn: '2024-02-30T10:00:00Z' }))).toBe('400 ValidationFailed');
    expect(await codeOf(parsePosting({ ...valid, OccurredOn: '2024-02-29T23:59:59.5-05:00' }))).toBe('ok');
    expect(await codeOf(parsePosting({ ...valid, EventDataBsonBase64: '@@@' }))).toBe('400 InvalidEventData');
    expect(await codeOf(parsePosting({ ...valid, EventDataBsonBase64: 42 }))).toBe('400 InvalidEventData');
    expect(await codeOf(parsePosting({ ...valid, EventDataBsonBase64: Buffer.from([1, 2, 3, 4, 5]).toString('base64') }))).toBe('400 InvalidEventData');
    expect(await codeOf(parsePosting({ ...valid, AppKey: '' }))).toBe('400 ValidationFailed');
    expect(await codeOf(parsePosting({ ...valid, EventTypeMoniker: {} }))).toBe('400 ValidationFailed');
    expect(await codeOf(parsePosting({ ...valid, RelatedObjects: [1] }))).toBe('400 ValidationFailed');
    expect(await codeOf(parsePosting({ ...valid, RelatedObjects: [{ Relation: 5 }] }))).toBe('400 ValidationFailed');
    expect(await codeOf(parsePosting([]))).toBe('400 ValidationFailed');
  });

  it('parses instants with Z or an offset only', () => {
    expect(parseInstant('2024-05-01T10:00:00.123+02:00', 'x').toISOString()).toBe('2024-05-01T08:00:00.123Z');
    expect(code(() => parseInstant('2024-05-01', 'x'))).toBe('400 ValidationFailed');
  });

  it('decodes base64 BSON', () => {
    expect(decodeEventData(b64({ nested: { x: 'y' } }))).toEqual({ nested: { x: 'y' } });
    expect(decodeEventData('')).toEqual({});
  });
});

describe('fillTemplate', () => {
  const related = [
    { Relation: 'Reader', CommonName: 'Front door' },
    { Relation: 'Person', CommonName: 'Ann' },
  ];

  it('fills from the data (dotted paths), else from the related object of that Relation, and keeps unknown placeholders', () => {
    const data = { Card: { Number: 42 }, Person: 'Data wins', When: new Date('2024-01-01T00:00:00Z') };
    expect(fillTemplate('{Person} at {Reader} card {Card.Number} on {When}: {Unknown} {}', data, related)).toBe(
      'Data wins at Front door card 42 on 2024-01-01T00:00:00.000Z: {Unknown} {}',
    );
  });

  it('gives null for a missing template and leaves text without placeholders alone', () => {
    expect(fillTemplate(null, {}, related)).toBeNull();
    expect(fillTemplate(undefined, {}, related)).toBeNull();
    expect(fillTemplate('plain', {}, related)).toBe('plain');
  });
});
