/**
 * DynamoDB faults injected through an SDK middleware inside the SDK's retry loop: throttling,
 * 500s and timeouts on writes. When a fault outlasts the retries the API answers 503
 * ServiceUnavailable with Retry-After and the table shows no half write; when it clears within
 * the retries the write happens exactly once.
 */
import { createHash } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreDeps } from '#shared/core-deps.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi, uniqueName, type Tenant } from '../support/tokens.ts';

const ATTEMPTS = 3;
const WRITES = /^(TransactWriteItems|PutItem|UpdateItem|DeleteItem|BatchWriteItem)Command$/;

const FAULTS = {
  throttling: () => Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ProvisionedThroughputExceededException', $fault: 'client', $metadata: { httpStatusCode: 400 } }),
  'HTTP 500': () => Object.assign(new Error('Internal server error'), { name: 'InternalServerError', $fault: 'server', $metadata: { httpStatusCode: 500 } }),
  timeout: () => Object.assign(new Error('socket timed out'), { name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: {} }),
} as const;

let t: TestDb;
let deps: CoreDeps;
let api: ReturnType<typeof createApi>;
let root: Tenant;
let injected = 0;
/** The next `remaining` writes fail with `make()`. */
let fault: { make: () => Error; remaining: number } | undefined;
let card = 700_000 + Math.floor(Math.random() * 1_000_000);

async function table(): Promise<Map<string, string>> {
  const items = new Map<string, string>();
  let start: Record<string, unknown> | undefined;
  do {
    const out = await t.db.doc.send(new ScanCommand({ TableName: t.db.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    for (const it of out.Items ?? []) items.set(`${it.PK}|${it.SK}`, createHash('sha256').update(JSON.stringify(it)).digest('hex'));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

const orig = (name: string) => `Original.Model.${name}, Original.Model`;
const cardOf = (n: number) => ({ $type: orig('CardAssignmentInfo'), EncodedCardNumber: n, DisplayCardNumber: String(n), ActiveOn: '2024-01-01T00:00:00Z', ExpiresOn: '2030-01-01T00:00:00Z' });
const personWithTwoCards = (surname: string) => ({ $type: orig('PersonInfo'), GivenName: 'Fault', Surname: surname, CardAssignments: [cardOf(card++), cardOf(card++)] });

beforeAll(async () => {
  t = await createTestDb();
  ({ deps, root } = await setupApi(t, { dbOptions: { maxAttempts: ATTEMPTS } }));
  api = createApi(deps);
  // Inside the retry loop (deserialize runs once per attempt), on writes only.
  deps.db.raw.middlewareStack.add(
    (next, context) => async (args) => {
      if (fault && fault.remaining > 0 && WRITES.test(context.commandName ?? '')) {
        fault.remaining--;
        injected++;
        throw fault.make();
      }
      return next(args);
    },
    { step: 'deserialize', name: 'reliabilityFault' },
  );
}, 60_000);

afterAll(() => {
  console.info(`[reliability/faults] faults injected: ${injected}`);
});

describe('faults', () => {
  it.each(Object.keys(FAULTS))('answers 503 ServiceUnavailable with Retry-After and writes nothing when %s outlasts the retries', async (kind) => {
    const before = await table();
    const surname = uniqueName('outlasted');
    fault = { make: FAULTS[kind as keyof typeof FAULTS], remaining: 1000 };
    const r = await api.post(`/api/f/${root.instance.key}/people`, { token: root.tokens.Administrator, body: personWithTwoCards(surname) });
    fault = undefined;
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ Error: 'ServiceUnavailable', Message: expect.any(String) });
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    expect(await table()).toEqual(before);
  });

  it.each(Object.keys(FAULTS))('writes exactly once when %s clears within the retries', async (kind) => {
    const before = await table();
    const surname = uniqueName('cleared');
    fault = { make: FAULTS[kind as keyof typeof FAULTS], remaining: ATTEMPTS - 1 };
    const r = await api.post(`/api/f/${root.instance.key}/people`, { token: root.tokens.Administrator, body: personWithTwoCards(surname) });
    fault = undefined;
    expect(r.status, r.text).toBe(201);
    const after = await table();
    const added = [...after.keys()].filter((k) => !before.has(k));
    // The person and its two card claims (and whatever else a create writes), once.
    expect(added.filter((k) => k.startsWith(`O#${r.body.Key}|`))).toHaveLength(1);
    const found = await api.post(`/api/f/${root.instance.key}/search`, { token: root.tokens.Administrator, body: JSON.stringify(`{ '_t': 'Person', 'Surname': '${surname}' }`) });
    expect(found.status).toBe(200);
    expect(found.body).toHaveLength(1);
  });

  it('answers 503 on a read when the store stays throttled', async () => {
    const person = await api.post(`/api/f/${root.instance.key}/people`, { token: root.tokens.Administrator, body: personWithTwoCards(uniqueName('read')) });
    expect(person.status).toBe(201);
    const stack = deps.db.raw.middlewareStack;
    stack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetItemCommand') {
          injected++;
          throw FAULTS.throttling();
        }
        return next(args);
      },
      { step: 'deserialize', name: 'reliabilityReadFault' },
    );
    try {
      const r = await api.get(person.body.Href, { token: root.tokens.Administrator });
      expect(r.status).toBe(503);
      expect(r.headers['retry-after']).toBeDefined();
    } finally {
      stack.remove('reliabilityReadFault');
    }
  });
});
