/** How an event's document is stored: packed without what the item says, expanded back exactly. */
import { describe, expect, it } from 'vitest';
import { eventItem } from '#shared/db/events-repo.ts';
import { expandEventDoc, occurredOfItem, packEventDoc } from '#shared/db/event-doc.ts';
import { fromItem } from '#shared/db/objects-repo.ts';
import { indexesOf, itemSize, writeUnits } from '#shared/db/item-size.ts';
import { stringifyJson } from '#shared/json.ts';
import { eventWrite, type NewEvent } from '#shared/events/publish.ts';

const folder = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const person = (i: number) => `bbbbbbbbbbbbbbbbbbbbbbb${i}`;

function newEvent(fields: Partial<NewEvent> = {}): NewEvent {
  return {
    key: 'cccccccccccccccccccccccc',
    placement: { folder, path: [folder], instances: [folder] },
    appKey: 'dddddddddddddddddddddddd',
    eventTypeKey: 'eeeeeeeeeeeeeeeeeeeeeeee',
    eventTypeMoniker: { Namespace: 'Vendor', Nickname: 'DoorForced' },
    occurredOn: new Date('2026-01-01T10:00:00.123Z'),
    publishedOn: new Date('2026-01-01T10:00:01.456Z'),
    priority: 5,
    requiresAcknowledgement: false,
    messageLong: null,
    messageShort: 'Door forced',
    objectLinks: [1, 2, 3].map((i) => ({
      $type: 'ObjectLinkItem',
      Href: `/api/f/${folder}/people/${person(i)}`,
      LinkedObjectKey: person(i),
      CommonName: `Person ${i}`,
      Relation: 'Person',
      MetaDataBson: null,
    })),
    eventDataBsonBase64: null,
    retentionDays: 90,
    ...fields,
  };
}

const place = (w: ReturnType<typeof eventWrite>) => ({ key: w.event.key, folder: w.event.folder, occurredOn: w.occurredOn });

describe('stored event documents', () => {
  it('leaves out what the item and every event already say, and expands back to the very document', () => {
    const w = eventWrite(newEvent());
    const packed = packEventDoc(w.event.doc, place(w));
    for (const f of ['$type', 'Key', 'Href', 'InFolderKey', 'Links', 'OccurredOn', 'AlarmAcknowledgements', 'Metadata', 'Monikers', 'Tags', 'ClientDeviceId']) {
      expect(packed).not.toHaveProperty(f);
    }
    expect(packed.ObjectLinks).toEqual([1, 2, 3].map((i) => [`${folder}/people`, person(i), `Person ${i}`, 'Person']));
    const back = expandEventDoc(packed, place(w));
    // Same fields, values and order.
    expect(stringifyJson(back)).toBe(stringifyJson(w.event.doc));
  });

  it('keeps what differs from the defaults, and any link or field it cannot pack exactly, as it is', () => {
    const odd = { $type: 'ObjectLinkItem', Href: '/as/sent', LinkedObjectKey: '0123456789abcdef01234567', CommonName: 'Unknown', Relation: 'Elsewhere', MetaDataBson: null };
    const withMeta = { ...newEvent().objectLinks[0]!, MetaDataBson: 'AAAA' };
    const w = eventWrite(
      newEvent({ objectLinks: [odd, withMeta], tags: ['a'], clientDeviceId: 'dev', requiresAcknowledgement: true, messageLong: 'long', eventDataBsonBase64: 'BQAAAAA=' }),
    );
    const packed = packEventDoc(w.event.doc, place(w));
    expect(packed.ObjectLinks).toEqual([odd, withMeta]);
    expect(packed).toMatchObject({ Tags: ['a'], ClientDeviceId: 'dev', RequiresAcknowledgement: true, MessageLong: 'long', EventDataBsonBase64: 'BQAAAAA=' });
    expect(stringifyJson(expandEventDoc(packed, place(w)))).toBe(stringifyJson(w.event.doc));
  });

  it('stores a document it cannot give back exactly (fields out of order, an unknown OccurredOn) unchanged', () => {
    const w = eventWrite(newEvent());
    const { $type, ...rest } = w.event.doc;
    const reordered = { $type, Tags: [], ...rest };
    expect(packEventDoc(reordered, place(w))).toEqual(reordered);
    expect(packEventDoc(w.event.doc, { ...place(w), occurredOn: undefined })).toHaveProperty('OccurredOn', w.occurredOn);
    // A document stored before packing (it has its $type) is read as it is.
    expect(expandEventDoc(w.event.doc, place(w))).toBe(w.event.doc);
  });

  it('an event item reads back as the event that was written, and a usual one fits one 1 KB write on the table and GSI1', () => {
    const w = eventWrite(newEvent());
    const item = eventItem(w);
    expect(occurredOfItem(item)).toBe(w.occurredOn);
    expect(fromItem(item)).toEqual(w.event);
    expect(indexesOf(item)).toEqual(['GSI1']);
    expect(itemSize(item)).toBeLessThanOrEqual(1024);
    expect(writeUnits(item)).toBe(2);
  });
});

describe('item sizes', () => {
  it('counts names and values by DynamoDB rules', () => {
    expect(itemSize({ a: 'xyz' })).toBe(4);
    expect(itemSize({ é: 'é' })).toBe(4);
    // Numbers: 1 byte per pair of digits aligned on the decimal point, plus 1 (and 1 if negative).
    expect(itemSize({ n: 1 })).toBe(3);
    expect(itemSize({ n: 123 })).toBe(4);
    expect(itemSize({ n: 1000 })).toBe(3);
    expect(itemSize({ n: 1.5 })).toBe(4);
    expect(itemSize({ n: -5 })).toBe(4);
    expect(itemSize({ n: 0 })).toBe(2);
    expect(itemSize({ n: 1e-7 })).toBe(3);
    expect(itemSize({ b: true, z: null })).toBe(4);
    // Lists and maps: 3 bytes, plus 1 per element.
    expect(itemSize({ l: [] })).toBe(4);
    expect(itemSize({ l: ['ab', 'c'] })).toBe(1 + 3 + 2 + 3);
    expect(itemSize({ m: { k: 'v' } })).toBe(1 + 3 + 1 + 1 + 1);
    expect(itemSize({ u: undefined, a: 'x' })).toBe(2);
  });

  it('bills each started KB on the table and on each index whose keys the item has', () => {
    expect(writeUnits({ PK: 'p', SK: 's' })).toBe(1);
    expect(writeUnits({ PK: 'p', SK: 's', GSI1PK: 'g', GSI1SK: 'h', GSI3PK: 'g' })).toBe(2);
    expect(writeUnits({ PK: 'p', SK: 's', pad: 'x'.repeat(1024) })).toBe(2);
  });
});
