/**
 * Stage throttling: API Gateway answers 429 once the stage's token bucket is empty
 * (infra/http-api.ts DEFAULT_THROTTLE), and the local runtime does the same with
 * GATEHOUSE_THROTTLE_RATE and GATEHOUSE_THROTTLE_BURST. The bucket's arithmetic with a fake
 * clock; then the real runtime (a child process on the run's DynamoDB Local, its own table) at a
 * rate of 5 and a burst of 10: a burst over the limit gets 429 with the JSON error body and
 * Retry-After, a throttled write changes nothing, and clients that retry on 429 all get through.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageThrottle, TokenBucket } from '#local/throttle.ts';
import { newRuntimeAdmin, spawnSeededRuntime, type SpawnedRuntime } from '../support/runtime.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';

const RATE = 5;
const BURST = 10;
const admin = newRuntimeAdmin('Throttle');

let runtime: SpawnedRuntime;
let dataDir: string;

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

async function call(method: string, path: string, opts: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const res = await documentedFetch(`${runtime.url}${path}`, {
    method,
    headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), 'content-type': 'application/json' },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Time for the bucket to fill up again. */
const refill = () => sleep(((BURST + 1) / RATE) * 1000);

/** A client as the field clients are: on 429 it waits Retry-After seconds (plus jitter) and retries. */
async function withRetry(send: () => Promise<Answer>, maxAttempts = 30): Promise<{ answer: Answer; throttled: number }> {
  for (let throttled = 0; ; throttled++) {
    const answer = await send();
    if (answer.status !== 429 || throttled + 1 >= maxAttempts) return { answer, throttled };
    await sleep(Number(answer.headers.get('retry-after')) * 1000 + Math.random() * 200);
  }
}

function expectTooManyRequests(a: Answer) {
  expect(a.status).toBe(429);
  expect(a.headers.get('content-type')).toMatch(/^application\/json/);
  expect(a.body).toEqual({ Error: 'TooManyRequests', Message: expect.any(String) });
  expect(a.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
}

describe('token bucket', () => {
  it('lets a burst through, then refuses with the seconds until the next token', () => {
    let now = 0;
    const bucket = new TokenBucket({ rateLimit: 0.25, burstLimit: 3 }, () => now);

    expect([bucket.take(), bucket.take(), bucket.take()]).toEqual([0, 0, 0]);
    expect(bucket.take()).toBe(4);
    now = 3000;
    expect(bucket.take()).toBe(1);
    now = 4000;
    expect(bucket.take()).toBe(0);
  });

  it('refills at the rate up to the burst, and refused requests cost nothing', () => {
    let now = 0;
    const bucket = new TokenBucket({ rateLimit: 100, burstLimit: 200 }, () => now);
    for (let i = 0; i < 200; i++) expect(bucket.take()).toBe(0);
    for (let i = 0; i < 1000; i++) expect(bucket.take()).toBe(1);

    now = 500;
    const passed = Array.from({ length: 100 }, () => bucket.take()).filter((w) => w === 0).length;
    expect(passed).toBe(50);

    now = 60_000;
    expect(Array.from({ length: 300 }, () => bucket.take()).filter((w) => w === 0)).toHaveLength(200);
  });

  it('is off when either limit is 0', () => {
    expect(stageThrottle({ rateLimit: 0, burstLimit: 200 })).toBeUndefined();
    expect(stageThrottle({ rateLimit: 100, burstLimit: 0 })).toBeUndefined();
    expect(stageThrottle(undefined)).toBeUndefined();
    expect(stageThrottle({ rateLimit: 100, burstLimit: 200 })).toBeInstanceOf(TokenBucket);
  });
});

describe('stage throttling on the local runtime', () => {
  beforeAll(async () => {
    ({ runtime, dataDir } = await spawnSeededRuntime(dynamoEndpoint(), admin, {
      GATEHOUSE_THROTTLE_RATE: String(RATE),
      GATEHOUSE_THROTTLE_BURST: String(BURST),
    }));
  }, 90_000);

  afterAll(async () => {
    await runtime?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('answers a burst over the limit with 429 TooManyRequests, a JSON body and Retry-After', async () => {
    await refill();
    const started = performance.now();

    const answers = await Promise.all(Array.from({ length: 40 }, () => call('GET', '/api/sysinfo')));

    const elapsedS = (performance.now() - started) / 1000;
    const ok = answers.filter((a) => a.status === 200);
    const throttled = answers.filter((a) => a.status !== 200);
    expect(ok.length).toBeGreaterThanOrEqual(BURST);
    expect(ok.length).toBeLessThanOrEqual(BURST + Math.ceil(elapsedS * RATE));
    expect(throttled.length).toBeGreaterThan(0);
    throttled.forEach(expectTooManyRequests);
  });

  it('changes nothing for a throttled write', async () => {
    await refill();
    const login = await documentedFetch(`${runtime.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', client_id: 'consoleApp', client_secret: admin.clientSecret, instance: admin.instanceName, username: admin.userName, password: admin.password }),
    });
    expect(login.status).toBe(200);
    const { access_token: token } = (await login.json()) as { access_token: string };
    const surname = `throttled-${randomBytes(4).toString('hex')}`;
    const base = `/api/f/${runtime.instanceKey}`;

    const creates = await Promise.all(Array.from({ length: 25 }, () => call('POST', `${base}/people`, { token, body: { $type: 'PersonInfo', GivenName: 'T', Surname: surname } })));

    const created = creates.filter((a) => a.status === 201);
    creates.filter((a) => a.status !== 201).forEach(expectTooManyRequests);
    expect(created.length).toBeGreaterThan(0);
    expect(created.length).toBeLessThan(creates.length);
    await refill();
    const found = await call('POST', `${base}/search?pageSize=1000`, { token, body: `{ '_t': 'Person', 'Surname': '${surname}' }` });
    expect(found.status).toBe(200);
    expect((found.body as Array<{ Key: string }>).map((p) => p.Key).sort()).toEqual(created.map((a) => a.body.Key).sort());
  });

  it('lets every client through in the end when it retries on 429 after Retry-After', async () => {
    await refill();

    const results = await Promise.all(Array.from({ length: 30 }, () => withRetry(() => call('GET', '/api/sysinfo'))));

    expect(results.map((r) => r.answer.status)).toEqual(Array(30).fill(200));
    const throttled = results.reduce((n, r) => n + r.throttled, 0);
    expect(throttled).toBeGreaterThan(0);
    console.info(`[reliability/throttle] rate ${RATE}/s, burst ${BURST}: 30 retrying clients all answered 200 after ${throttled} 429s in all`);
  });
});
