/**
 * The requests every repository makes alike (shared/db/requests.ts), on DynamoDB Local: a Query
 * read page by page within its bounds, batch reads and writes that send again what DynamoDB
 * leaves unprocessed, and the versioned update and condition. DynamoDB Local never leaves keys
 * unprocessed, so the tests that need it add a middleware to the client that moves part of a real
 * answer into `UnprocessedKeys` / `UnprocessedItems`, as DynamoDB does when it throttles: the
 * boundary with the AWS SDK, with our code and the table left as they are.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { StoreUnavailable } from '#shared/errors.ts';
import { batchGetItems, batchWriteItems, queryAll, queryPage, updateVersioned, versionCondition, type ItemKey } from '#shared/db/requests.ts';
import { createTestDb, type TestDb } from '../support/db.ts';

let t: TestDb;

const pk = 'REQ#query';
const sk = (n: number) => `s${String(n).padStart(3, '0')}`;

beforeAll(async () => {
  t = await createTestDb();
  await batchWriteItems(
    t.db,
    Array.from({ length: 7 }, (_, n) => ({ PutRequest: { Item: { PK: pk, SK: sk(n), N: n } } })),
  );
});

const MIDDLEWARE = 'leaveUnprocessed';
afterEach(() => {
  t.db.raw.middlewareStack.remove(MIDDLEWARE);
});

/** Commands sent through `t.db` while `fn` runs. */
async function commands<T>(fn: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const before = t.calls.length;
  const result = await fn();
  return { result, sent: t.calls.slice(before).map((c) => c.command) };
}

/**
 * Makes the next `times` answers of `command` leave `count` of their keys or writes unprocessed
 * (of writes, all but one at most):
 * for a BatchGetItem, items read are taken out of the answer and their keys put in
 * `UnprocessedKeys`; for a BatchWriteItem, writes are taken out of the request before it is sent
 * and put in `UnprocessedItems`. The forms are those of the level the middleware sits at, which
 * are the same for the request and the answer.
 */
function leaveUnprocessed(command: 'BatchGetItem' | 'BatchWriteItem', count: number, times = 1): void {
  let left = times;
  t.db.raw.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== `${command}Command` || left <= 0) return next(args);
      left--;
      const input = args.input as { RequestItems: Record<string, { Keys?: unknown[] } | unknown[]> };
      const table = t.db.tableName;
      if (command === 'BatchWriteItem') {
        const writes = input.RequestItems[table] as unknown[];
        // A request of no write is refused: at least one goes out.
        const n = Math.min(count, writes.length - 1);
        const held = writes.slice(0, n);
        input.RequestItems = { ...input.RequestItems, [table]: writes.slice(n) };
        const out = await next(args);
        (out.output as { UnprocessedItems?: unknown }).UnprocessedItems = { [table]: held };
        return out;
      }
      const out = await next(args);
      const output = out.output as { Responses?: Record<string, Array<Record<string, unknown>>>; UnprocessedKeys?: unknown };
      const read = output.Responses?.[table] ?? [];
      const held = read.splice(0, count);
      const request = input.RequestItems[table] as { Keys?: unknown[] };
      output.UnprocessedKeys = { [table]: { ...request, Keys: held.map((i) => ({ PK: i.PK, SK: i.SK })) } };
      return out;
    },
    { step: 'initialize', name: MIDDLEWARE },
  );
}

describe('queryPage and queryAll', () => {
  const input = { KeyConditionExpression: 'PK = :pk', ExpressionAttributeValues: { ':pk': pk } };

  it('reads one page, and the next from where it stopped', async () => {
    const first = await queryPage(t.db, { ...input, Limit: 3 });
    expect(first.items.map((i) => i.N)).toEqual([0, 1, 2]);
    expect(first.scanned).toBe(3);
    expect(first.next).toEqual({ PK: pk, SK: sk(2) });
    const second = await queryPage(t.db, { ...input, Limit: 10 }, first.next);
    expect(second.items.map((i) => i.N)).toEqual([3, 4, 5, 6]);
    expect(second.next).toBeUndefined();
  });

  it('reads every page in order, awaiting the step before each request and showing each page', async () => {
    const pages: number[][] = [];
    let steps = 0;
    const { result, sent } = await commands(() =>
      queryAll(t.db, { ...input, Limit: 2 }, {
        onPage: (items) => pages.push(items.map((i) => i.N as number)),
        step: () => {
          steps++;
          return undefined;
        },
      }),
    );
    expect(result.map((i) => i.N)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(pages).toEqual([[0, 1], [2, 3], [4, 5], [6]]);
    expect(sent).toEqual(['Query', 'Query', 'Query', 'Query']);
    expect(steps).toBe(4);
  });

  it('stops at `limit` items exactly, asking each request for what remains', async () => {
    const { result, sent } = await commands(() => queryAll(t.db, input, { limit: 5 }));
    expect(result.map((i) => i.N)).toEqual([0, 1, 2, 3, 4]);
    expect(sent).toEqual(['Query']);
    const resumed = await queryAll(t.db, input, { limit: 2, start: { PK: pk, SK: sk(4) } });
    expect(resumed.map((i) => i.N)).toEqual([5, 6]);
  });

  it('stops after the page that reaches `max`, never cutting a page', async () => {
    const result = await queryAll(t.db, { ...input, Limit: 2 }, { max: 3 });
    expect(result.map((i) => i.N)).toEqual([0, 1, 2, 3]);
  });

  it('stops when `onPage` throws (a read budget)', async () => {
    const budget = new Error('budget');
    await expect(
      queryAll(t.db, { ...input, Limit: 2 }, {
        onPage: () => {
          throw budget;
        },
      }),
    ).rejects.toBe(budget);
  });
});

describe('batchGetItems', () => {
  const keys: ItemKey[] = Array.from({ length: 150 }, (_, n) => ({ PK: `REQ#get#${n}`, SK: 'X' }));

  beforeAll(async () => {
    await batchWriteItems(t.db, keys.map((k, n) => ({ PutRequest: { Item: { ...k, N: n, Other: 'o' } } })));
  });

  it('reads 100 keys a request and leaves missing items out', async () => {
    const { result, sent } = await commands(() => batchGetItems(t.db, [...keys, { PK: 'REQ#get#missing', SK: 'X' }]));
    expect(result.map((i) => i.N as number).sort((a, b) => a - b)).toEqual(keys.map((_, n) => n));
    expect(sent).toEqual(['BatchGetItem', 'BatchGetItem']);
  });

  it('asks again for the keys DynamoDB left unprocessed, until every one is read', async () => {
    leaveUnprocessed('BatchGetItem', 30, 2);
    const { result, sent } = await commands(() => batchGetItems(t.db, keys.slice(0, 60), { consistent: true }));
    expect(result.map((i) => i.N as number).sort((a, b) => a - b)).toEqual(keys.slice(0, 60).map((_, n) => n));
    expect(sent).toEqual(['BatchGetItem', 'BatchGetItem', 'BatchGetItem']);
  });

  it('reads only the projected attributes', async () => {
    const [item] = await batchGetItems(t.db, [keys[7]!], { projection: 'PK, N' });
    expect(item).toEqual({ PK: 'REQ#get#7', N: 7 });
  });
});

describe('batchWriteItems', () => {
  const items = Array.from({ length: 60 }, (_, n) => ({ PK: `REQ#write#${n}`, SK: 'X', N: n }));
  const keysOf = (list: typeof items) => list.map(({ PK, SK }) => ({ PK, SK }));

  it('writes 25 a request and sends again what DynamoDB left unprocessed', async () => {
    leaveUnprocessed('BatchWriteItem', 5);
    const { sent } = await commands(() => batchWriteItems(t.db, items.map((Item) => ({ PutRequest: { Item } }))));
    expect(sent).toEqual(['BatchWriteItem', 'BatchWriteItem', 'BatchWriteItem', 'BatchWriteItem']);
    expect((await batchGetItems(t.db, keysOf(items))).length).toBe(60);
  });

  it('sends the requests at once when asked, and deletes as well as puts', async () => {
    await batchWriteItems(t.db, items.map((Item) => ({ PutRequest: { Item } })));
    leaveUnprocessed('BatchWriteItem', 3);
    await batchWriteItems(t.db, keysOf(items).map((Key) => ({ DeleteRequest: { Key } })), { parallel: true, retries: 3, backoffMs: 1 });
    expect(await batchGetItems(t.db, keysOf(items))).toEqual([]);
  });

  it('throws StoreUnavailable when writes are still unprocessed after the retries, naming them', async () => {
    // One write goes through per attempt: 3 attempts, 1 of 4 left.
    leaveUnprocessed('BatchWriteItem', Infinity, 10);
    const write = batchWriteItems(t.db, items.slice(0, 4).map((Item) => ({ PutRequest: { Item } })), { retries: 2, backoffMs: 1, what: 'test items' });
    await expect(write).rejects.toBeInstanceOf(StoreUnavailable);
    await expect(write).rejects.toMatchObject({ cause: { message: '1 test items left unprocessed' } });
  });
});

describe('updateVersioned and versionCondition', () => {
  const key = { PK: 'REQ#versioned', SK: 'A' };

  beforeAll(async () => {
    await t.db.doc.send(new PutCommand({ TableName: t.db.tableName, Item: { ...key, Version: 3, Doc: 'one', Note: 'n' } }));
  });

  it('updates while the version is the one read, raising it when asked, and answers the item', async () => {
    const updated = await updateVersioned(t.db, key, 3, { set: { Doc: 'two' }, remove: ['Note'], bump: true });
    expect(updated).toEqual({ ...key, Version: 4, Doc: 'two' });
    const kept = await updateVersioned(t.db, key, 4, { set: { Doc: 'three' }, unchanged: { Doc: 'two' } });
    expect(kept).toMatchObject({ Version: 4, Doc: 'three' });
  });

  it('changes nothing and answers undefined when another writer got in first or the item is gone', async () => {
    expect(await updateVersioned(t.db, key, 3, { set: { Doc: 'stale' }, bump: true })).toBeUndefined();
    expect(await updateVersioned(t.db, key, 4, { set: { Doc: 'stale' }, unchanged: { Doc: 'two' } })).toBeUndefined();
    expect(await updateVersioned(t.db, { PK: 'REQ#versioned', SK: 'gone' }, undefined, { set: { Doc: 'new' } })).toBeUndefined();
    const [item] = await batchGetItems(t.db, [key, { PK: 'REQ#versioned', SK: 'gone' }], { consistent: true });
    expect(item).toEqual({ ...key, Version: 4, Doc: 'three' });
  });

  it('guards any write of a version: a put over a newer version fails', async () => {
    const put = (version: number) =>
      t.db.doc.send(new PutCommand({ TableName: t.db.tableName, Item: { ...key, Version: version + 1, Doc: 'put' }, ...versionCondition(version, { Doc: 'three' }) }));
    await expect(put(3)).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    await put(4);
    expect(await batchGetItems(t.db, [key], { consistent: true })).toEqual([{ ...key, Version: 5, Doc: 'put' }]);
  });
});
