/**
 * Login as a weapon against others (issue #34, finding 7), through the real token handler on
 * DynamoDB Local with the login throttle's default settings:
 * - a burst of logins of unknown names from one client address is answered 429 (Retry-After, the
 *   token error body) once the address's bucket is spent, before anything is read (no DynamoDB
 *   request, so no hash either), while a real user logs in from another address at once;
 * - a name is throttled whatever the addresses it is tried from, and other names are not;
 * - single sign-on starts (each writes a pending login) spend the address's bucket the same way;
 * - at Medium security an unknown name, a user without a password and a real user's wrong
 *   passwords get the same answers through the lockout (user_lockedout from the threshold on) and
 *   after it: user names cannot be told apart by their answers.
 */
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedDeployment } from '#shared/auth/bootstrap.ts';
import { findInstanceByName } from '#shared/auth/directory.ts';
import { createInstance, createUser } from '#shared/auth/provisioning.ts';
import { loadConfig } from '#shared/config.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import type { CoreDeps } from '#shared/core-deps.ts';
import { createHandler } from '#functions/token/handler.ts';
import { httpEvent, lambdaContext } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedUser, testDeps, uniqueName } from '../support/tokens.ts';

const FORM = 'application/x-www-form-urlencoded';
const PASSWORD = `Pw-${randomBytes(9).toString('base64url')}!9a`;
const CLIENT_SECRET = `cs-${randomBytes(12).toString('hex')}`;
/** The settings a deployment gets when it sets none (lockout threshold and minutes). */
const DEFAULTS = loadConfig({});
/** The login throttle's defaults (shared/config.ts), spelled out so the test reads alone. */
const LIMITS = { addressRate: 30, addressBurst: 20, nameRate: 6, nameBurst: 10 };

let t: TestDb;
let clockOffsetMs = 0;
let deps: CoreDeps;
let handler: (e: APIGatewayProxyEventV2, c: Context) => Promise<APIGatewayProxyStructuredResultV2>;
let medium: StoredObject;
let realUser: string;
let passwordless: string;

beforeAll(async () => {
  t = await createTestDb({
    GATEHOUSE_CLIENT_SECRET: CLIENT_SECRET,
    GATEHOUSE_LOGIN_ADDRESS_RATE: String(LIMITS.addressRate),
    GATEHOUSE_LOGIN_ADDRESS_BURST: String(LIMITS.addressBurst),
    GATEHOUSE_LOGIN_NAME_RATE: String(LIMITS.nameRate),
    GATEHOUSE_LOGIN_NAME_BURST: String(LIMITS.nameBurst),
  });
  deps = testDeps(t, { now: () => new Date(Date.now() + clockOffsetMs) });
  handler = createHandler(() => deps);
  const rootName = uniqueName('Abuse');
  await seedDeployment(deps, { instanceName: rootName, adminUser: 'admin', adminPassword: PASSWORD, clientSecret: CLIENT_SECRET, dataDir: t.config.dataDir });
  const root = (await findInstanceByName(t.db, rootName))!;
  medium = await createInstance(t.db, { name: uniqueName('Medium'), parent: root, securityLevel: 'Medium' });
  realUser = uniqueName('alice');
  await createUser(t.db, { instance: medium, name: realUser, password: PASSWORD });
  passwordless = uniqueName('sso');
  await seedUser(t, medium, 'Operator', passwordless);
}, 60_000);

/** A password grant for `instance\user` from `sourceIp`, through the token function's handler. */
async function login(sourceIp: string, user: string, password: string, instance = medium) {
  const event = httpEvent('POST', '/token', {
    body: new URLSearchParams({ grant_type: 'password', username: `${instance.doc.CommonName as string}\\${user}`, password }).toString(),
    contentType: FORM,
  });
  const res = await handler({ ...event, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, sourceIp } } }, lambdaContext());
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers ?? {})) headers[k.toLowerCase()] = String(v);
  return { status: res.statusCode ?? 200, headers, body: JSON.parse(res.body ?? '{}') as Record<string, string> };
}

const address = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

describe('the login throttle', () => {
  it('answers a burst of unknown-name logins from one address 429 before reading or hashing, and lets a real user in from another', async () => {
    const attacker = address();
    const burst = LIMITS.addressBurst;
    // The address's bucket: its first `burst` logins are tried (each a full check), in parallel.
    const first = await Promise.all(Array.from({ length: burst }, () => login(attacker, uniqueName('ghost'), 'wrong')));
    expect(first.map((r) => r.body.error)).toEqual(Array(burst).fill('invalid_grant'));

    const before = t.calls.length;
    const rest = await Promise.all(Array.from({ length: 40 }, () => login(attacker, uniqueName('ghost'), 'wrong')));
    for (const r of rest) {
      expect(r.status).toBe(429);
      expect(r.body.error).toBe('too_many_requests');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(r.headers['cache-control']).toBe('no-store');
    }
    // Not one read: the throttled logins never got as far as a user, let alone a password hash.
    expect(t.calls.length - before).toBe(0);

    const real = await login(address(), realUser, PASSWORD);
    expect(real.status).toBe(200);
    expect(real.body.access_token).toEqual(expect.any(String));
  });

  it('answers a burst of single sign-on starts from one address 429 once its bucket is spent, before anything is read or written', async () => {
    const starter = address();
    const start = async (from: string) => {
      const query = { response_type: 'code', client_id: 'nobody', redirect_uri: 'https://nowhere.example/cb', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', state: 's', instance: medium.doc.CommonName as string };
      const event = httpEvent('GET', '/oauth/authorize', { query });
      const res = await handler({ ...event, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, sourceIp: from } } }, lambdaContext());
      return { status: res.statusCode ?? 200, retryAfter: res.headers?.['Retry-After'] ?? res.headers?.['retry-after'] };
    };
    // Each start of the bucket is checked (an unknown client: the 400 page).
    const first = await Promise.all(Array.from({ length: LIMITS.addressBurst }, () => start(starter)));
    expect(first.map((r) => r.status)).toEqual(Array(LIMITS.addressBurst).fill(400));
    const before = t.calls.length;
    const rest = await Promise.all(Array.from({ length: 10 }, () => start(starter)));
    for (const r of rest) {
      expect(r.status).toBe(429);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect(t.calls.length - before).toBe(0);
    // Another address starts at once.
    expect((await start(address())).status).toBe(400);
  });

  it('throttles one name tried from many addresses, and not the other names of those addresses', async () => {
    const target = uniqueName('bob');
    const answers = [];
    for (let i = 0; i < LIMITS.nameBurst + 3; i++) answers.push((await login(address(), target, 'wrong')).status);
    expect(answers.slice(0, LIMITS.nameBurst)).toEqual(Array(LIMITS.nameBurst).fill(400));
    expect(answers.slice(LIMITS.nameBurst)).toEqual([429, 429, 429]);
    expect((await login(address(), uniqueName('carol'), 'wrong')).status).toBe(400);
  });
});

describe('unknown names at Medium security', () => {
  /** The answers to `n` wrong-password logins of `user`, each from its own address. */
  async function answers(user: string, n: number) {
    const out = [];
    for (let i = 0; i < n; i++) {
      const r = await login(address(), user, `wrong-${i}`);
      out.push({ status: r.status, body: r.body });
    }
    return out;
  }

  it('answers an unknown name, a user without a password and a real user alike, through the lockout and after it', async () => {
    const threshold = DEFAULTS.lockoutThreshold;
    const known = await answers(realUser, threshold + 2);
    const nobody = uniqueName('nobody');
    const unknown = await answers(nobody, threshold + 2);
    const noPassword = await answers(passwordless, threshold + 2);

    expect(known.map((a) => a.body.error)).toEqual([...Array(threshold).fill('invalid_grant'), 'user_lockedout', 'user_lockedout']);
    expect(unknown).toEqual(known);
    expect(noPassword).toEqual(known);
    // Locked: the right password of the real user is refused the same way too.
    expect((await login(address(), realUser, PASSWORD)).body).toEqual(known.at(-1)!.body);

    // The lock lasts the lockout minutes, for all three; then each fails (or logs in) afresh.
    clockOffsetMs = (DEFAULTS.lockoutMinutes * 60 + 1) * 1000;
    try {
      const after = await Promise.all([nobody, passwordless].map((u) => login(address(), u, 'wrong')));
      expect(after.map((r) => [r.status, r.body.error])).toEqual([
        [400, 'invalid_grant'],
        [400, 'invalid_grant'],
      ]);
      expect((await login(address(), realUser, PASSWORD)).status).toBe(200);
    } finally {
      clockOffsetMs = 0;
    }
  });
});
