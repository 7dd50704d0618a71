/**
 * `itemSize` / `writeUnits` against the units DynamoDB Local reports for a PutItem of a fresh key:
 * items of every attribute type, padded to exactly 1024 bytes by our count (1 unit) and one byte
 * more (2 units), with and without index keys.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { itemSize, writeUnits } from '#shared/db/item-size.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

let t: TestDb;
let n = 0;

beforeAll(async () => {
  t = await createTestDb();
});

/** The write units DynamoDB Local reports for putting `item` under a key never used before. */
async function reported(item: Record<string, unknown>): Promise<number> {
  const c0 = t.calls.length;
  await t.db.doc.send(new PutCommand({ TableName: t.db.tableName, Item: item }));
  return t.calls.slice(c0).reduce((s, c) => s + c.write, 0);
}

/** `item` under a fresh key, padded with a string attribute to `size` bytes by our count. */
function padded(item: Record<string, unknown>, size: number): Record<string, unknown> {
  const base = { PK: `size#${String(++n).padStart(6, '0')}`, SK: 'A', ...item, Pad: '' };
  return { ...base, Pad: 'x'.repeat(size - itemSize(base)) };
}

const shapes: Record<string, Record<string, unknown>> = {
  strings: { S: 'plain', U: 'ünïcødé ✓ 𝄞' },
  numbers: { A: 7, B: 123456789, C: -0.000125, D: 1000000, E: 3.14159 },
  'booleans and null': { T: true, F: false, Z: null },
  lists: { L: ['a', 1, true, null, ['nested'], { k: 'v' }], E: [] },
  maps: { M: { a: 'x', b: 2, c: { d: [1, 2] } }, E: {} },
  sets: { SS: new Set(['a', 'bb']), NS: new Set([1, 22, 333]) },
  binary: { B: new Uint8Array([1, 2, 3, 4, 5]) },
};

describe('item sizes agree with DynamoDB Local', () => {
  for (const [name, shape] of Object.entries(shapes)) {
    it(`${name}: 1024 bytes is one unit, 1025 two`, async () => {
      const at = padded(shape, 1024);
      const over = padded(shape, 1025);
      expect(itemSize(at)).toBe(1024);
      expect(writeUnits(at)).toBe(1);
      expect(await reported(at)).toBe(1);
      expect(writeUnits(over)).toBe(2);
      expect(await reported(over)).toBe(2);
    });
  }

  it('an item with index keys costs its units again on each index (ReturnConsumedCapacity TOTAL)', async () => {
    const keys = { GSI1PK: 'g1', GSI1SK: 's1', GSI3PK: 'g3', GSI3SK: 's3' };
    for (const size of [1024, 1025, 2500]) {
      const item = padded(keys, size);
      expect(writeUnits(item)).toBe(Math.ceil(size / 1024) * 3);
      expect(await reported(item)).toBe(writeUnits(item));
    }
  });
});
