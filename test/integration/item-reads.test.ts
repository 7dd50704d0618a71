/**
 * Reads started together, sent together (shared/db/item-reads.ts), on DynamoDB Local: the
 * `getItems` calls started inside one `readTogether` go out as one BatchGetItem per consistency,
 * each caller gets the items of its own keys and nothing else, a failure reaches every caller,
 * and outside a gathering nothing changes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { gatherReads, getItem, getItems, readTogether, type ItemKey } from '#shared/db/item-reads.ts';
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

  it('are read strongly consistent together when one of them asks, and one alone is sent as it was asked', async () => {
    const before = t.calls.length;
    const [eventual, strong] = readTogether(() => [getItems(t.db, [key('a')]), getItems(t.db, [key('b')], true)]);
    expect(ids(await eventual)).toEqual(['READS#a']);
    expect(ids(await strong)).toEqual(['READS#b']);
    const together = t.calls.slice(before);
    expect(together.map((c) => c.command)).toEqual(['BatchGetItem']);
    // Both items at a strongly consistent read's unit each.
    expect(together[0]!.read).toBe(2);
    const alone = t.calls.length;
    const [single] = readTogether(() => [getItem(t.db, key('c').PK, 'X')]);
    expect((await single)?.N).toBe('c');
    expect(t.calls.slice(alone).map((c) => c.command)).toEqual(['GetItem']);
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

  it('stay open across awaits until closed, and a missing item is undefined to its getItem', async () => {
    const before = t.calls.length;
    const close = gatherReads();
    const first = getItem(t.db, key('a').PK, 'X');
    await Promise.resolve();
    const later = getItem(t.db, key('missing').PK, 'X', true);
    const many = getItems(t.db, [key('b'), key('c')]);
    close();
    expect((await first)?.N).toBe('a');
    expect(await later).toBeUndefined();
    expect(ids(await many)).toEqual(['READS#b', 'READS#c']);
    expect(t.calls.slice(before).map((c) => c.command)).toEqual(['BatchGetItem']);
    // Closed at the latest on the next turn of the event loop, even if no one closes it.
    gatherReads();
    const unclosed = getItem(t.db, key('d').PK, 'X');
    expect((await unclosed)?.N).toBe('d');
  });

  it('fail together: every caller of a failed request is given its error', async () => {
    const missingTable = { raw: t.db.raw, tableName: `${t.db.tableName}-missing` };
    const [a, b] = readTogether(() => [getItems(missingTable, [key('a')]), getItems(missingTable, [key('b')])]);
    const settled = await Promise.allSettled([a, b]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    for (const s of settled) expect(String((s as PromiseRejectedResult).reason)).toMatch(/non-existent table/);
  });
});
