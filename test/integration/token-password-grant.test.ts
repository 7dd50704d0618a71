/**
 * POST /token, password grant, through the real token handler on DynamoDB Local: the success
 * response, every error of the spec's token table at each security level where it applies,
 * lockout (with a parallel burst), two-factor through the outbox, new and expired passwords, and
 * licences. It runs at the suite's lowered scrypt cost (GATEHOUSE_PASSWORD_HASH_COST); the timing of
 * an unknown user against a wrong password is measured at the production cost in
 * token-password-timing.test.ts. Users share one precomputed hash.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { getAuthState, lockUser } from '#shared/db/auth-repo.ts';
import { getObject } from '#shared/db/objects-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { replaceObject } from '#shared/db/object-writes.ts';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { hashPassword } from '#shared/auth/passwords.ts';
import { type SecurityLevel } from '#shared/auth/directory.ts';
import { createInstance } from '#shared/auth/provisioning.ts';
import { loadConfig } from '#shared/config.ts';
import { userNameClaim } from '#shared/model/claims.ts';
import { newKey } from '#shared/model/placement.ts';
import { createApi } from '../support/api.ts';
import { commandsOf, createTestDb, TEST_LOGIN_LIMITS, type TestDb } from '../support/db.ts';
import { seedUser } from '../support/tokens.ts';

const PASSWORD = 'Corr3ct-Horse!';
const LEVELS: readonly SecurityLevel[] = ['Low', 'Medium', 'High'];
const FORM = 'application/x-www-form-urlencoded';

let t: TestDb;
let hash: string;
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);
let deps: CoreDeps;
let api: ReturnType<typeof createApi>;
let authority: ReturnType<typeof localLicenseAuthority>;
const inst: Record<SecurityLevel, StoredObject> = {} as never;
let seq = 0;

/** Dependencies on the same table with other settings (lockout threshold, token lifetime). */
function variant(env: Record<string, string>) {
  const config = loadConfig({
    GATEHOUSE_DYNAMODB_ENDPOINT: t.config.dynamodbEndpoint!,
    GATEHOUSE_TABLE_NAME: t.config.tableName,
    GATEHOUSE_LOG_LEVEL: 'SILENT',
    GATEHOUSE_DATA_DIR: t.config.dataDir,
    ...TEST_LOGIN_LIMITS,
    ...env,
  });
  const d = createCoreDeps({ config, db: t.db, now });
  return createApi(d);
}

async function makeInstance(level: SecurityLevel, opts: { license?: 'valid' | 'none' | 'tampered' | 'expired' | 'other'; parent?: StoredObject; min?: number; disabled?: boolean } = {}) {
  const key = newKey();
  const name = `${level}-${++seq}`;
  let license: string | undefined;
  switch (opts.license ?? 'valid') {
    case 'valid':
      license = await authority.issue({ instanceKey: key });
      break;
    case 'tampered': {
      const [h, p, s] = (await authority.issue({ instanceKey: key, trial: true, days: 1 })).split('.');
      const claims = { ...JSON.parse(Buffer.from(p!, 'base64url').toString()), trial: false, exp: undefined };
      license = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
      break;
    }
    case 'expired':
      license = await authority.issue({ instanceKey: key, trial: true, days: 30, now: new Date(Date.now() - 31 * 86400_000) });
      break;
    case 'other':
      license = await authority.issue({ instanceKey: newKey() });
      break;
    case 'none':
      license = undefined;
  }
  let o = await createInstance(t.db, {
    key,
    name,
    securityLevel: level,
    ...(opts.parent ? { parent: opts.parent } : {}),
    ...(opts.min ? { minimumPasswordLength: opts.min } : {}),
    ...(license ? { license } : {}),
  });
  if (opts.disabled) o = await edit(o, { IsDisabled: true });
  return o;
}

const makeUser = (instance: StoredObject, doc: Record<string, unknown> = {}, withPassword = true) =>
  seedUser(t, instance, 'Operator', `user${++seq}`, { doc, passwordHash: withPassword ? hash : undefined });

async function edit(o: StoredObject, changes: Record<string, unknown>): Promise<StoredObject> {
  const current = (await getObject(t.db, o.key, true))!;
  const next = { ...current, version: current.version + 1, doc: { ...current.doc, ...changes } };
  await replaceObject(t.db, next, current.version);
  return next;
}

/** Renames a user as a PUT would: the name claim moves with the name. */
async function rename(user: StoredObject, name: string): Promise<StoredObject> {
  const current = (await getObject(t.db, user.key, true))!;
  const next = { ...current, version: current.version + 1, doc: { ...current.doc, CommonName: name } };
  const instanceKey = current.instances.at(-1)!;
  await replaceObject(t.db, next, current.version, [userNameClaim(instanceKey, name)], [userNameClaim(instanceKey, String(current.doc.CommonName))]);
  return next;
}

const measure = <T>(fn: () => Promise<T>) => commandsOf(t, fn);

type Fields = Record<string, string>;

function login(fields: Fields, client = api) {
  return client.post('/token', { body: new URLSearchParams(fields).toString(), contentType: FORM });
}

const as = (instance: StoredObject, user: StoredObject, extra: Fields = {}): Fields => ({
  grant_type: 'password',
  username: `${instance.doc.CommonName}\\${user.doc.CommonName}`,
  password: PASSWORD,
  ...extra,
});

function expectError(res: { status: number; body: any; headers: Record<string, string> }, code: string) {
  expect({ status: res.status, error: res.body?.error }).toEqual({ status: 400, error: code });
  expect(typeof res.body.error_description).toBe('string');
  expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description']);
  expect(res.headers['cache-control']).toBe('no-store');
}

async function outboxCodes(instance: StoredObject, user: StoredObject): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(join(t.config.dataDir, 'outbox.jsonl'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; instance: string; user: string; code: string; at: string })
    .filter((m) => m.instance === instance.doc.CommonName && m.user === user.doc.CommonName)
    .map((m) => {
      expect(Object.keys(m)).toEqual(['kind', 'instance', 'user', 'code', 'at']);
      expect(m.kind).toBe('one-time-password');
      expect(Number.isNaN(Date.parse(m.at))).toBe(false);
      return m.code;
    });
}

beforeAll(async () => {
  t = await createTestDb({ GATEHOUSE_CLIENTS: 'kiosk:kioskSecret' });
  deps = createCoreDeps({ config: t.config, db: t.db, now });
  api = createApi(deps);
  authority = localLicenseAuthority(t.config.dataDir);
  hash = await hashPassword(PASSWORD);
  for (const level of LEVELS) inst[level] = await makeInstance(level);
});

describe('password grant: success', () => {
  it('answers exactly the spec fields, no-store, with a verifiable ES256 access token', async () => {
    const user = await makeUser(inst.Medium, { Role: 'Administrator' });
    const res = await login(as(inst.Medium, user, { client_id: 'consoleApp', client_secret: 'consoleSecret' }));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(
      ['.expires', '.issued', 'access_token', 'as:client_id', 'expires_in', 'instance', 'refresh_token', 'token_type', 'userName'].sort(),
    );
    expect(res.body).toMatchObject({
      userName: `${inst.Medium.doc.CommonName}\\${user.doc.CommonName}`,
      'as:client_id': 'consoleApp',
      token_type: 'bearer',
      expires_in: 86399,
      instance: inst.Medium.key,
    });
    expect(res.body['.issued']).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect((Date.parse(res.body['.expires']) - Date.parse(res.body['.issued'])) / 1000).toBe(86399);
    expect(Buffer.from(res.body.refresh_token, 'base64url').length).toBeGreaterThanOrEqual(16);
    const principal = await deps.authenticator.authenticate(`Bearer ${res.body.access_token}`);
    expect(principal).toMatchObject({ userKey: user.key, instanceKey: inst.Medium.key, role: 'Administrator' });
    // The login's secrets are not stored in the clear.
    const state = await getAuthState(t.db, user.key);
    expect(JSON.stringify(state)).not.toContain(PASSWORD);
    expect(state?.failedLogins).toBe(0);
  });

  it('starts reading the signing key as soon as a login may succeed, and not for a user who cannot log in', async () => {
    // The key store sees when the grant first asks for the signing key (in AWS: a Secrets Manager read).
    let asked = 0;
    const keys = { signingKey: (at?: Date) => (asked++, deps.keys.signingKey(at)), publicKeys: deps.keys.publicKeys.bind(deps.keys) };
    const watched = createApi(createCoreDeps({ config: t.config, db: t.db, now, keys }));
    const user = await makeUser(inst.Low);

    expectError(await login({ ...as(inst.Low, user), username: `${inst.Low.doc.CommonName}\\nobody` }, watched), 'user_notfound');
    expect(asked).toBe(0);
    // A wrong password still reads it: the read starts beside the password check, before its verdict.
    expectError(await login(as(inst.Low, user, { password: 'Wr0ng-Horse!' }), watched), 'incorrect_password');
    expect(asked).toBe(1);
    expect((await login(as(inst.Low, user), watched)).status).toBe(200);
    expect(asked).toBe(3);
  });

  it('reads a returning user in one request, and never trusts that: a renamed user logs in by its new name only', async () => {
    const user = await makeUser(inst.Medium);
    const first = await measure(() => login(as(inst.Medium, user)));
    expect(first.result.status).toBe(200);
    // By name: the instance name's claim; the instance and the user name's claim; the user and its
    // AUTH item. Then the slot; then, sent together, the counter's reset and the refresh token.
    const last = (commands: string[]) => [...commands.slice(0, -2), ...commands.slice(-2).sort()];
    expect(last(first.commands)).toEqual(['GetItem', 'BatchGetItem', 'BatchGetItem', 'UpdateItem', 'TransactWriteItems', 'UpdateItem']);
    const again = await measure(() => login(as(inst.Medium, user)));
    expect(again.result.status).toBe(200);
    expect(last(again.commands)).toEqual(['BatchGetItem', 'UpdateItem', 'TransactWriteItems', 'UpdateItem']);

    const renamed = await rename(user, `${String(user.doc.CommonName)}-renamed`);
    expectError(await login(as(inst.Medium, user)), 'invalid_grant');
    const byNewName = await login(as(inst.Medium, renamed));
    expect(byNewName.status).toBe(200);
    expect(byNewName.body.userName).toBe(`${inst.Medium.doc.CommonName}\\${renamed.doc.CommonName}`);
  });

  it('accepts the field form: bare user name with instance only, a stray undefined= field, labelled as JSON', async () => {
    const user = await makeUser(inst.Low);
    const body = `instance=${inst.Low.doc.CommonName}&username=${user.doc.CommonName}&password=${encodeURIComponent(PASSWORD)}&undefined=`;
    const res = await api.post('/token', { body, contentType: 'application/json' });
    expect(res.status).toBe(200);
    expect(res.body.userName).toBe(`${inst.Low.doc.CommonName}\\${user.doc.CommonName}`);
  });

  it('accepts a confidential client with its secret and GATEHOUSE_ACCESS_TOKEN_TTL', async () => {
    const user = await makeUser(inst.High);
    const short = variant({ GATEHOUSE_CLIENTS: 'kiosk:kioskSecret', GATEHOUSE_ACCESS_TOKEN_TTL: '3600' });
    const res = await login(as(inst.High, user, { client_id: 'kiosk', client_secret: 'kioskSecret' }), short);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ 'as:client_id': 'kiosk', expires_in: 3600 });
  });
});

describe.each(LEVELS)('client, grant and instance errors at %s security', (level) => {
  let user: StoredObject;
  beforeAll(async () => {
    user = await makeUser(inst[level]);
  });

  it('rejects a wrong consoleApp secret, an unknown client and a confidential client without its secret with invalid_client', async () => {
    expectError(await login(as(inst[level], user, { client_secret: 'wrong' })), 'invalid_client');
    expectError(await login(as(inst[level], user, { client_id: 'mallory' })), 'invalid_client');
    expectError(await login(as(inst[level], user, { client_id: 'kiosk' })), 'invalid_client');
  });

  it('rejects another grant type with unsupported_grant_type', async () => {
    expectError(await login(as(inst[level], user, { grant_type: 'client_credentials' })), 'unsupported_grant_type');
  });

  it('rejects a login into a disabled instance with instance_disabled', async () => {
    const i = await makeInstance(level, { disabled: true });
    const u = await makeUser(i);
    expectError(await login(as(i, u)), 'instance_disabled');
  });

  it('rejects a login into an instance without a licence with instance_missing_license', async () => {
    const i = await makeInstance(level, { license: 'none' });
    expectError(await login(as(i, await makeUser(i))), 'instance_missing_license');
    const j = await makeInstance(level, { license: 'other' });
    expectError(await login(as(j, await makeUser(j))), 'instance_missing_license');
  });

  it('rejects a tampered licence with instance_license_tampered', async () => {
    const i = await makeInstance(level, { license: 'tampered' });
    expectError(await login(as(i, await makeUser(i))), 'instance_license_tampered');
  });

  it('rejects an expired trial licence with instance_license_expired', async () => {
    const i = await makeInstance(level, { license: 'expired' });
    expectError(await login(as(i, await makeUser(i))), 'instance_license_expired');
  });
});

describe('instance names', () => {
  it('rejects an unknown, a differently cased and an absent instance name with instance_not_found', async () => {
    const user = await makeUser(inst.Low);
    const name = String(inst.Low.doc.CommonName);
    expectError(await login({ username: `Nowhere\\${user.doc.CommonName}`, password: PASSWORD }), 'instance_not_found');
    expectError(await login({ username: `${name.toUpperCase()}\\${user.doc.CommonName}`, password: PASSWORD }), 'instance_not_found');
    expectError(await login({ username: String(user.doc.CommonName), password: PASSWORD }), 'instance_not_found');
  });

  it('uses the nearest ancestor licence: a child without one logs in, a child with a tampered one does not', async () => {
    const child = await makeInstance('Medium', { parent: inst.Medium, license: 'none' });
    const ok = await login(as(child, await makeUser(child)));
    expect(ok.status).toBe(200);
    expect(ok.body.instance).toBe(child.key);
    const grandchild = await makeInstance('Medium', { parent: child, license: 'tampered' });
    expectError(await login(as(grandchild, await makeUser(grandchild))), 'instance_license_tampered');
    const orphan = await makeInstance('Medium', { license: 'none' });
    const orphanChild = await makeInstance('Medium', { parent: orphan, license: 'none' });
    expectError(await login(as(orphanChild, await makeUser(orphanChild))), 'instance_missing_license');
  });

  it('refuses a child instance of a disabled parent with instance_disabled', async () => {
    const parent = await makeInstance('Low');
    const child = await makeInstance('Low', { parent, license: 'none' });
    await edit(parent, { IsDisabled: true });
    expectError(await login(as(child, await makeUser(child))), 'instance_disabled');
  });
});

// Independent users, no clock changes: these run concurrently (scrypt uses both cores).
describe.concurrent('user errors by security level', () => {
  const expected = {
    Low: { notFound: 'user_notfound', wrong: 'incorrect_password', disabled: 'user_disabled', locked: 'user_lockedout' },
    Medium: { notFound: 'invalid_grant', wrong: 'invalid_grant', disabled: 'user_disabled', locked: 'user_lockedout' },
    High: { notFound: 'invalid_grant', wrong: 'invalid_grant', disabled: 'invalid_grant', locked: 'invalid_grant' },
  } as const;

  it.each(LEVELS)('answers an unknown user at %s', async (level) => {
    expectError(await login({ username: `${inst[level].doc.CommonName}\\nobody${++seq}`, password: PASSWORD }), expected[level].notFound);
  });

  it.each(LEVELS)('answers a wrong password at %s', async (level) => {
    const user = await makeUser(inst[level]);
    expectError(await login(as(inst[level], user, { password: 'Wr0ng-password!' })), expected[level].wrong);
  });

  it.each(LEVELS)('answers a disabled user (right password) at %s', async (level) => {
    const user = await makeUser(inst[level], { IsDisabled: true });
    expectError(await login(as(inst[level], user)), expected[level].disabled);
  });

  it.each(LEVELS)('answers a locked-out user (right password) at %s', async (level) => {
    const user = await makeUser(inst[level]);
    await lockUser(t.db, user.key, Date.now() + 15 * 60_000);
    expectError(await login(as(inst[level], user)), expected[level].locked);
  });

  it('answers invalid_grant to a user without a password (single sign-on), even at Low', async () => {
    const user = await makeUser(inst.Low, {}, false);
    expectError(await login(as(inst.Low, user)), 'invalid_grant');
  });
});

describe('lockout', () => {
  it('locks after 5 wrong passwords: each answers its own error, the next right one user_lockedout; 15 minutes later it works', async () => {
    const user = await makeUser(inst.Low);
    for (let i = 0; i < 5; i++) expectError(await login(as(inst.Low, user, { password: `Wr0ng-${i}!` })), 'incorrect_password');
    expectError(await login(as(inst.Low, user)), 'user_lockedout');
    clockOffsetMs = 14 * 60_000;
    try {
      expectError(await login(as(inst.Low, user)), 'user_lockedout');
      clockOffsetMs = 15 * 60_000 + 1000;
      expect((await login(as(inst.Low, user))).status).toBe(200);
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('cannot be slipped past by a parallel burst of wrong passwords', async () => {
    const user = await makeUser(inst.Low);
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => login(as(inst.Low, user, { password: `Wr0ng-${i}!` }))));
    const codes = burst.map((r) => r.body.error as string);
    expect(codes.filter((c) => c === 'incorrect_password')).toHaveLength(5);
    expect(codes.filter((c) => c === 'user_lockedout')).toHaveLength(3);
    expectError(await login(as(inst.Low, user)), 'user_lockedout');
  });

  it('lets a parallel burst of right passwords in, more than the threshold at once', async () => {
    const user = await makeUser(inst.Low);
    const burst = await Promise.all(Array.from({ length: 8 }, () => login(as(inst.Low, user))));
    expect(burst.map((r) => r.status)).toEqual(Array(8).fill(200));
  });

  it('is reset by a successful login (threshold 2)', async () => {
    const two = variant({ GATEHOUSE_LOCKOUT_THRESHOLD: '2' });
    const user = await makeUser(inst.Medium);
    expectError(await login(as(inst.Medium, user, { password: 'Wr0ng-1!' }), two), 'invalid_grant');
    expect((await login(as(inst.Medium, user), two)).status).toBe(200);
    expectError(await login(as(inst.Medium, user, { password: 'Wr0ng-2!' }), two), 'invalid_grant');
    expect((await login(as(inst.Medium, user), two)).status).toBe(200);
  });

  it('still counts at High, where it answers invalid_grant (threshold 2)', async () => {
    const two = variant({ GATEHOUSE_LOCKOUT_THRESHOLD: '2' });
    const user = await makeUser(inst.High);
    expectError(await login(as(inst.High, user, { password: 'Wr0ng-1!' }), two), 'invalid_grant');
    expectError(await login(as(inst.High, user, { password: 'Wr0ng-2!' }), two), 'invalid_grant');
    expectError(await login(as(inst.High, user), two), 'invalid_grant');
    expect((await getAuthState(t.db, user.key))?.lockedUntil).toBeGreaterThan(Date.now());
    clockOffsetMs = 16 * 60_000;
    try {
      expect((await login(as(inst.High, user), two)).status).toBe(200);
    } finally {
      clockOffsetMs = 0;
    }
  });
});

describe('two-factor', () => {
  it('asks for a code, sends one through the outbox, refuses a wrong one, accepts it once (Medium)', async () => {
    const user = await makeUser(inst.Medium, { TwoFactorEnabled: true, Email: 'alice@example.com' });
    const first = await login(as(inst.Medium, user));
    expectError(first, 'one_time_password_required');
    expect(await outboxCodes(inst.Medium, user)).toEqual([]);

    const send = await login(as(inst.Medium, user, { sendonetimepassword: 'true' }));
    expectError(send, 'one_time_password_required');
    expect(send.body.error_description).toMatch(/sent/i);
    const codes = await outboxCodes(inst.Medium, user);
    expect(codes).toHaveLength(1);
    const code = codes[0]!;
    expect(code).toMatch(/^\d{6}$/);
    expect(JSON.stringify(await getAuthState(t.db, user.key))).not.toContain(`"${code}"`);

    const wrong = code === '000000' ? '111111' : '000000';
    expectError(await login(as(inst.Medium, user, { onetimepassword: wrong })), 'incorrect_tfacode');
    const ok = await login(as(inst.Medium, user, { onetimepassword: code }));
    expect(ok.status).toBe(200);
    expectError(await login(as(inst.Medium, user, { onetimepassword: code })), 'incorrect_tfacode');
  });

  it.each(['Low', 'High'] as const)('answers one_time_password_required and incorrect_tfacode at %s', async (level) => {
    const user = await makeUser(inst[level], { TwoFactorEnabled: true });
    expectError(await login(as(inst[level], user)), 'one_time_password_required');
    expectError(await login(as(inst[level], user, { onetimepassword: '123456' })), 'incorrect_tfacode');
  });

  it('refuses a code after 10 minutes', async () => {
    const user = await makeUser(inst.Low, { TwoFactorEnabled: true });
    expectError(await login(as(inst.Low, user, { sendonetimepassword: 'true' })), 'one_time_password_required');
    const [code] = await outboxCodes(inst.Low, user);
    clockOffsetMs = 10 * 60_000 + 1000;
    try {
      expectError(await login(as(inst.Low, user, { onetimepassword: code! })), 'incorrect_tfacode');
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('discards a code after 5 wrong tries (lockout threshold raised to 10)', async () => {
    const ten = variant({ GATEHOUSE_LOCKOUT_THRESHOLD: '10' });
    const user = await makeUser(inst.Low, { TwoFactorEnabled: true });
    expectError(await login(as(inst.Low, user, { sendonetimepassword: 'true' }), ten), 'one_time_password_required');
    const [code] = await outboxCodes(inst.Low, user);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expectError(await login(as(inst.Low, user, { onetimepassword: wrong }), ten), 'incorrect_tfacode');
    expectError(await login(as(inst.Low, user, { onetimepassword: code! }), ten), 'incorrect_tfacode');
  });

  it('counts wrong codes towards the lockout (threshold 2)', async () => {
    const two = variant({ GATEHOUSE_LOCKOUT_THRESHOLD: '2' });
    const user = await makeUser(inst.Low, { TwoFactorEnabled: true });
    expectError(await login(as(inst.Low, user, { sendonetimepassword: 'true' }), two), 'one_time_password_required');
    const [code] = await outboxCodes(inst.Low, user);
    const wrong = code === '000000' ? '111111' : '000000';
    expectError(await login(as(inst.Low, user, { onetimepassword: wrong }), two), 'incorrect_tfacode');
    expectError(await login(as(inst.Low, user, { onetimepassword: wrong }), two), 'incorrect_tfacode');
    expectError(await login(as(inst.Low, user, { onetimepassword: code! }), two), 'user_lockedout');
  });
});

describe.concurrent('new and expired passwords', () => {
  it('completes a first login with a new password that meets the rules (Low)', async () => {
    const user = await makeUser(inst.Low, { MustChangePassword: true });
    expectError(await login(as(inst.Low, user)), 'new_password_required');
    expectError(await login(as(inst.Low, user, { newpassword: 'Sh0rt!' })), 'password_doesnot_meet_minimum_length_rule');
    expectError(await login(as(inst.Low, user, { newpassword: 'alllowercase1!' })), 'password_doesnot_meet_complexity_rule');
    const ok = await login(as(inst.Low, user, { newpassword: 'N3w-Passw0rd!' }));
    expect(ok.status).toBe(200);
    const stored = await getObject(t.db, user.key, true);
    expect(stored?.doc.MustChangePassword).toBe(false);
    expect(stored?.version).toBe(2);
    expectError(await login(as(inst.Low, user)), 'incorrect_password');
    expect((await login(as(inst.Low, user, { password: 'N3w-Passw0rd!' }))).status).toBe(200);
  });

  it.each(['Medium', 'High'] as const)('answers new_password_required and the rules at %s', async (level) => {
    const user = await makeUser(inst[level], { MustChangePassword: true });
    expectError(await login(as(inst[level], user)), 'new_password_required');
    expectError(await login(as(inst[level], user, { newpassword: 'NoDigitsHere!' })), 'password_doesnot_meet_complexity_rule');
  });

  it.each(LEVELS)('answers password_expired at %s', async (level) => {
    const user = await makeUser(inst[level], { PasswordExpiresOn: new Date(Date.now() - 60_000).toISOString() });
    expectError(await login(as(inst[level], user)), 'password_expired');
  });

  it('replaces an expired password and honours the instance minimum length', async () => {
    const strict = await makeInstance('Medium', { min: 14 });
    const user = await makeUser(strict, { PasswordExpiresOn: new Date(Date.now() - 60_000).toISOString() });
    expectError(await login(as(strict, user, { newpassword: 'N3w-Passw0rd!' })), 'password_doesnot_meet_minimum_length_rule');
    expect((await login(as(strict, user, { newpassword: 'N3w-L0nger-Passw0rd!' }))).status).toBe(200);
    const stored = await getObject(t.db, user.key, true);
    expect(stored?.doc.PasswordExpiresOn).toBeUndefined();
  });
});
