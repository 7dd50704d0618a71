/**
 * Requests that overlap in one process (the local runtime serves them so) each log their own
 * request line: its own request id and family, never those of a request running beside it. The
 * handlers share one logger, as the families of the local runtime do, and the requests run
 * through the real pipeline while stdout is captured.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CoreDeps } from '#shared/core-deps.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, testDeps, type Tenant } from '../support/tokens.ts';

let t: TestDb;
let deps: CoreDeps;
let api: ReturnType<typeof createApi>;
let tenant: Tenant;
let personHref: string;

beforeAll(async () => {
  t = await createTestDb({ GATEHOUSE_LOG_LEVEL: 'INFO' });
  deps = testDeps(t);
  api = createApi(deps);
  tenant = await seedTenant(t, deps);
  const person = await api.post(`/api/f/${tenant.instance.key}/people`, {
    token: tenant.tokens.Administrator,
    body: { $type: 'PersonInfo', GivenName: 'Log', Surname: 'Lines' },
  });
  expect(person.status, person.text).toBe(201);
  personHref = person.body.Href;
}, 60_000);

afterEach(() => {
  vi.restoreAllMocks();
});

interface RequestLine {
  readonly message: string;
  readonly requestId?: string;
  readonly family?: string;
  readonly route?: string;
}

describe('request log lines', () => {
  it('carry the request id and family of their own request when requests overlap', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(((c: unknown) => {
      lines.push(String(c));
      return true;
    }) as typeof process.stdout.write);
    const token = tenant.tokens.Operator;
    const calls = Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? api.get('/api/sysinfo') : api.get(personHref, { token })));
    const answers = await Promise.all(calls);
    vi.restoreAllMocks();
    for (const a of answers) expect(a.status, a.text).toBe(200);

    const requests = lines
      .flatMap((chunk) => chunk.split('\n'))
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as RequestLine)
      .filter((l) => l.message === 'request');
    expect(requests).toHaveLength(24);
    // Every line names a request id, and no two lines the same one.
    expect(requests.every((r) => typeof r.requestId === 'string' && r.requestId !== '')).toBe(true);
    expect(new Set(requests.map((r) => r.requestId)).size).toBe(24);
    // And the family of its own route.
    for (const r of requests) expect(r.family, JSON.stringify(r)).toBe(r.route === '/api/sysinfo' ? 'service' : 'people');
    expect(requests.filter((r) => r.family === 'people')).toHaveLength(12);
  });
});
