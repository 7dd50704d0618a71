/**
 * Tenant rate limits through the real handlers on DynamoDB Local, with small limits (1 request a
 * second per user, 2 per instance: buckets of 2 and 4): a user over its own limit is answered 429
 * `TooManyRequests` with `Retry-After` and the RateLimit headers while a colleague is still served
 * until their instance's bucket is empty, and another instance is not touched; limits of 0 limit
 * nothing; and the typed client waits a 429 out and gets its answer.
 *
 * The buckets refill with real time (a token a second per user): each step below sends its calls
 * at once, well within a second.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { GatehouseClient, type FetchLike } from '../../clients/typescript/src/index.ts';
import type { CoreDeps } from '#shared/core-deps.ts';
import { createApi, type CallResult } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { mintToken, seedInstance, seedUser, testDeps } from '../support/tokens.ts';

const LIMITS = { GATEHOUSE_RATE_LIMIT_PER_USER: '1', GATEHOUSE_RATE_LIMIT_PER_INSTANCE: '2' };
const POLICY = '"user";q=2;w=2, "instance";q=4;w=2';

let t: TestDb;
let deps: CoreDeps;
let api: ReturnType<typeof createApi>;

/** A new instance with `users` operators, and a token for each. */
async function tenant(users: number): Promise<{ instanceKey: string; tokens: string[] }> {
  const instance = await seedInstance(t);
  const tokens: string[] = [];
  for (let i = 0; i < users; i++) tokens.push(await mintToken(deps.config, deps.keys, await seedUser(t, instance, 'Operator'), instance));
  return { instanceKey: instance.key, tokens };
}

/** `n` calls of the caller's own root at once, by status. */
async function burst(token: string, n: number): Promise<{ ok: CallResult[]; refused: CallResult[] }> {
  const answers = await Promise.all(Array.from({ length: n }, () => api.get('/api', { token })));
  for (const a of answers) expect([200, 429], a.text).toContain(a.status);
  return { ok: answers.filter((a) => a.status === 200), refused: answers.filter((a) => a.status === 429) };
}

/** The `r` of `scope` in a RateLimit header. */
const remaining = (header: string | undefined, scope: string) => Number(new RegExp(`"${scope}";r=(\\d+)`).exec(header ?? '')?.[1]);

beforeAll(async () => {
  t = await createTestDb(LIMITS);
  deps = testDeps(t);
  api = createApi(deps);
  // One call before the clock matters: the handler's modules load and the keys are read.
  const warm = await tenant(1);
  expect((await api.get('/api', { token: warm.tokens[0] })).status).toBe(200);
});

describe('tenant rate limits', () => {
  it('answers a user over its limit 429 with Retry-After and the RateLimit headers, serves its colleague until the instance is spent, and leaves other instances alone', async () => {
    const acme = await tenant(3);
    const other = await tenant(1);
    const [alice, bob, carol] = acme.tokens as [string, string, string];

    // Alice: her bucket holds 2; the third call is refused, without spending Acme's tokens.
    const a = await burst(alice, 3);
    expect(a.ok).toHaveLength(2);
    expect(a.refused).toHaveLength(1);
    const refused = a.refused[0]!;
    expect(refused.body).toEqual({ Error: 'TooManyRequests', Message: 'Too many requests for this user; retry after the number of seconds in Retry-After.' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-policy']).toBe(POLICY);
    expect(refused.headers.ratelimit).toMatch(/^"user";r=0;t=\d+, "instance";r=\d+;t=\d+$/);
    expect(remaining(refused.headers.ratelimit, 'instance')).toBe(2);
    // A served call carries the headers too.
    expect(a.ok[0]!.headers['ratelimit-policy']).toBe(POLICY);
    expect(a.ok.map((r) => remaining(r.headers.ratelimit, 'user')).sort()).toEqual([0, 1]);

    // Bob, same instance: served from Acme's 2 tokens left, then refused by the instance.
    const b = await burst(bob, 2);
    expect(b.ok).toHaveLength(2);
    const c = await burst(carol, 1);
    expect(c.refused).toHaveLength(1);
    expect(c.refused[0]!.body.Message).toMatch(/for this instance/);
    expect(Number(c.refused[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(c.refused[0]!.headers.ratelimit).toMatch(/"instance";r=0;/);

    // Another instance is served.
    const o = await burst(other.tokens[0]!, 2);
    expect(o.ok).toHaveLength(2);
  });

  it('limits nothing when both limits are 0, the default, and sends no RateLimit headers', async () => {
    const unlimited = await createTestDb();
    const d = testDeps(unlimited);
    const open = createApi(d);
    const instance = await seedInstance(unlimited);
    const token = await mintToken(d.config, d.keys, await seedUser(unlimited, instance, 'Operator'), instance);
    const answers = await Promise.all(Array.from({ length: 20 }, () => open.get('/api', { token })));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(answers[0]!.headers['ratelimit-policy']).toBeUndefined();
    expect(answers[0]!.headers.ratelimit).toBeUndefined();
  });

  it('does not count calls without a token', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.get('/api/sysinfo')));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(answers[0]!.headers['ratelimit-policy']).toBeUndefined();
  });

  it('the typed client waits out a 429 for its Retry-After and gets its answer', async () => {
    const solo = await tenant(1);
    const statuses: number[] = [];
    // The client's fetch reaches the handlers in-process (as API Gateway would call them).
    const fetch: FetchLike = async (request) => {
      const url = new URL(request.url);
      const headers = Object.fromEntries(request.headers);
      const body = request.method === 'GET' ? undefined : await request.text();
      const res = await api.call(request.method, `${url.pathname}${url.search}`, { headers, ...(body ? { body } : {}) });
      statuses.push(res.status);
      return new Response(res.text || null, { status: res.status, headers: res.headers });
    };
    const client = GatehouseClient.resume({
      baseUrl: 'http://gatehouse.test',
      fetch,
      tokens: { accessToken: solo.tokens[0]!, refreshToken: 'unused', expiresAt: Date.now() + 3_600_000, instanceKey: solo.instanceKey, userName: 'Acme\\op' },
    });
    const started = performance.now();
    const roots = await Promise.all([1, 2, 3].map(() => client.GET('/api')));
    expect(roots).toHaveLength(3);
    for (const root of roots) expect(root).toMatchObject({ $type: expect.any(String) });
    // The third call was refused once, waited (at least a second) and was served.
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000);
  });
});
