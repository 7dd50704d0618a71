/**
 * Every create, update and delete of an object is recorded once, in the table's stream (NEW and
 * OLD images), which the events issue turns into "object modified" events: no second copy is
 * written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStreamReader, type StreamReader } from '#local/storage/stream-reader.ts';
import type { DynamoDBRecord } from 'aws-lambda';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi } from '../support/tokens.ts';

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let reader: StreamReader;

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  reader = createStreamReader(t.config);
});
afterAll(() => reader.destroy());

async function allRecords(): Promise<DynamoDBRecord[]> {
  const arn = (await reader.latestStreamArn())!;
  const out: DynamoDBRecord[] = [];
  for (const shard of await reader.shards(arn)) {
    let it = await reader.iterator(arn, shard.shardId, { type: 'TRIM_HORIZON' });
    for (let i = 0; it && i < 50; i++) {
      const page = await reader.records(it, 1000);
      out.push(...page.records);
      if (page.records.length === 0) break;
      it = page.next;
    }
  }
  return out;
}

describe('change records', () => {
  it('records a create, an update and a delete of an object, with its images', async () => {
    const token = env.root.tokens.Operator;
    const door = (await env.api.post(`/api/f/${env.root.instance.key}/doors`, { token, body: { $type: 'DoorInfo', CommonName: 'a' } })).body;
    await env.api.put(door.Href, { token, body: { ...door, CommonName: 'b' } });
    await env.api.del(door.Href, { token });
    const mine = (await allRecords()).filter((r) => r.dynamodb?.Keys?.PK?.S === `O#${door.Key}` && r.dynamodb?.Keys?.SK?.S === 'A');
    expect(mine.map((r) => r.eventName)).toEqual(['INSERT', 'MODIFY', 'REMOVE']);
    expect(mine[1]!.dynamodb!.OldImage!.Name!.S).toBe('a');
    expect(mine[1]!.dynamodb!.NewImage!.Name!.S).toBe('b');
    expect(mine[2]!.dynamodb!.OldImage!.Coll!.S).toBe('doors');
  });
});
