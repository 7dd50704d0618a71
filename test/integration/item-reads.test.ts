/**
 * Reads started together, sent together (shared/db/item-reads.ts), on DynamoDB Local: the
 * `getItems` calls started inside one `readTogether` go out as one BatchGetItem per consistency,
 * each caller gets the items of its own keys and nothing else, a failure reaches every caller,
 * and outside a gathering nothing changes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { getItems, readTogether, type ItemKey } from '#shared/db/item-reads.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

let t: TestDb;
const key = (n: string): ItemKey => ({ PK: `READS#${n}`, SK: 'X' });
const ids = (items: Array<Record<string, unknown>>) => items.map((i) => String(i.PK)).sort();

beforeAll(async () => {
  t = await createTestDb();
  for (const n of ['a', 'b', 'c', 'd']) {
    await t.db.raw.send(new PutItemCommand({ TableName: t.db.tableName, Item: { PK: { S: key(n).PK }, SK: { S: 'X' }, N: { S: n } } }));
  }
});

describe('reads started together', () => {
  it('go out as one BatchGetItem, each caller given only the items of its own keys', async () => {
    const before = t.calls.length;
    const [first, second, third] = readTogether(() => [
      getItems(t.db, [key('a'), key('b')]),
      // A key another caller asked for too, and one that does not exist.
      getItems(t.db, [key('b'), key('c'), key('missing')]),
      getItems(t.db, [key('d')]),
    ]);
    expect(ids(await first)).toEqual(['READS#a', 'READS#b']);
    expect(ids(await second)).toEqual(['READS#b', 'READS#c']);
    expect(ids(await third)).toEqual(['READS#d']);
    expect(t.calls.slice(before).map((c) => c.command)).toEqual(['BatchGetItem']);
    // Four distinct items of under 4 KB, eventually consistent: 0.5 units each, as four GetItems would cost.
    expect(t.calls.at(-1)!.read).toBe(2);
  });

  it('are sent apart when their consistency differs, and one alone is sent as it was asked', async () => {
    const before = t.calls.length;
    const [eventual, strong] = readTogether(() => [getItems(t.db, [key('a')]), getItems(t.db, [key('a')], true)]);
    expect(ids(await eventual)).toEqual(['READS#a']);
    expect(ids(await strong)).toEqual(['READS#a']);
    const calls = t.calls.slice(before);
    expect(calls.map((c) => c.command)).toEqual(['BatchGetItem', 'BatchGetItem']);
    // The strongly consistent read costs a whole unit, the other half of one.
    expect(calls.map((c) => c.read).sort()).toEqual([0.5, 1]);
  });

  it('include only the calls started before the gathering returns, and nest into the outer one', async () => {
    const before = t.calls.length;
    let later: Promise<Array<Record<string, unknown>>> | undefined;
    const [outer, inner] = readTogether(() => {
      const a = getItems(t.db, [key('a')]);
      // Started after an await: not part of this gathering, sent on its own.
      later = Promise.resolve().then(() => getItems(t.db, [key('c')]));
      return [a, readTogether(() => getItems(t.db, [key('b')]))] as const;
    });
    expect(ids(await outer)).toEqual(['READS#a']);
    expect(ids(await inner)).toEqual(['READS#b']);
    expect(ids(await later!)).toEqual(['READS#c']);
    expect(t.calls.slice(before).map((c) => c.command)).toEqual(['BatchGetItem', 'BatchGetItem']);
  });

  it('fail together: every caller of a failed request is given its error', async () => {
    const missingTable = { raw: t.db.raw, tableName: `${t.db.tableName}-missing` };
    const [a, b] = readTogether(() => [getItems(missingTable, [key('a')]), getItems(missingTable, [key('b')])]);
    const settled = await Promise.allSettled([a, b]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    for (const s of settled) expect(String((s as PromiseRejectedResult).reason)).toMatch(/non-existent table/);
  });
});
