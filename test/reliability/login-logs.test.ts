/**
 * Secrets stay out of the logs: a password grant, a refresh grant, a two-factor login with a code
 * sent through the outbox, a wrong code and the right one, through the real token handler with
 * DEBUG logging, while everything written to stdout, stderr and the console is captured. The
 * password, the client secret, the tokens issued and the one-time codes never appear in it (but for
 * the local outbox's own `outbox: ` delivery line), and something was logged (so the capture is real).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { seedDeployment } from '#shared/auth/bootstrap.ts';
import { findInstanceByName } from '#shared/auth/directory.ts';
import { createUser } from '#shared/auth/provisioning.ts';
import type { CoreDeps } from '#shared/core-deps.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { testDeps, uniqueName } from '../support/tokens.ts';

const FORM = 'application/x-www-form-urlencoded';
const PASSWORD = `Pw-${randomBytes(9).toString('base64url')}!9a`;
const CLIENT_SECRET = `cs-${randomBytes(12).toString('hex')}`;

let t: TestDb;
let deps: CoreDeps;
let api: ReturnType<typeof createApi>;
let instanceName: string;
let adminName: string;
let twoFactorName: string;
const captured: string[] = [];

const chunk = (c: unknown) => (typeof c === 'string' ? c : Buffer.isBuffer(c) || c instanceof Uint8Array ? Buffer.from(c).toString('utf8') : String(c));

beforeAll(async () => {
  t = await createTestDb({ GATEHOUSE_LOG_LEVEL: 'DEBUG', GATEHOUSE_CLIENT_SECRET: CLIENT_SECRET });
  deps = testDeps(t);
  api = createApi(deps);
  instanceName = uniqueName('Logs');
  adminName = uniqueName('admin');
  await seedDeployment(deps, { instanceName, adminUser: adminName, adminPassword: PASSWORD, clientSecret: CLIENT_SECRET, dataDir: t.config.dataDir });
  const instance = (await findInstanceByName(t.db, instanceName))!;
  twoFactorName = uniqueName('tfa');
  await createUser(t.db, { instance, name: twoFactorName, password: PASSWORD, twoFactorEnabled: true, email: 'tfa@example.com' });
}, 60_000);

/** Captures (and holds back) everything written to stdout, stderr and the console until `stop`. */
function capture(): { stop: () => void } {
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation(((c: unknown) => {
      captured.push(chunk(c));
      return true;
    }) as typeof stream.write);
  }
  for (const m of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      captured.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
    });
  }
  return { stop: () => vi.restoreAllMocks() };
}


const post = (fields: Record<string, string>) => api.post('/token', { body: new URLSearchParams(fields).toString(), contentType: FORM });
const client = { client_id: 'consoleApp', client_secret: CLIENT_SECRET };

async function outboxCodes(user: string): Promise<string[]> {
  const text = await readFile(join(t.config.dataDir, 'outbox.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { instance: string; user: string; code: string })
    .filter((m) => m.instance === instanceName && m.user === user)
    .map((m) => m.code);
}

describe('secrets in logs', () => {
  it('never logs the password, client secret, tokens or one-time codes of real logins at DEBUG', async () => {
    const secrets: Record<string, string> = { password: PASSWORD, 'client secret': CLIENT_SECRET };
    const tfa = { grant_type: 'password', username: `${instanceName}\\${twoFactorName}`, password: PASSWORD, ...client };
    /** The one-time codes sent and tried, by what they are. */
    const otp: Array<[string, string]> = [];
    const capturing = capture();
    try {
      const login = await post({ grant_type: 'password', username: `${instanceName}\\${adminName}`, password: PASSWORD, ...client });
      expect(login.status, login.text).toBe(200);
      secrets['access token'] = login.body.access_token;
      secrets['refresh token'] = login.body.refresh_token;

      const refreshed = await post({ grant_type: 'refresh_token', refresh_token: login.body.refresh_token, ...client });
      expect(refreshed.status, refreshed.text).toBe(200);
      secrets['refreshed access token'] = refreshed.body.access_token;
      secrets['rotated refresh token'] = refreshed.body.refresh_token;

      const send = await post({ ...tfa, sendonetimepassword: 'true' });
      expect(send.body.error, send.text).toBe('one_time_password_required');
      const codes = await outboxCodes(twoFactorName);
      expect(codes).toHaveLength(1);
      const code = codes[0]!;
      expect(code).toMatch(/^\d{6}$/);
      let wrong = code;
      while (wrong === code) wrong = String(100_000 + Math.floor(Math.random() * 900_000));
      otp.push(['one-time code', code], ['wrong one-time code', wrong]);
      const bad = await post({ ...tfa, onetimepassword: wrong });
      expect(bad.body.error).toBe('incorrect_tfacode');
      const good = await post({ ...tfa, onetimepassword: code });
      expect(good.status, good.text).toBe(200);
      secrets['two-factor access token'] = good.body.access_token;
      secrets['two-factor refresh token'] = good.body.refresh_token;
    } finally {
      capturing.stop();
    }

    // The local outbox says on the console that a code arrived, and where; not the code.
    const output = captured.join('\n');
    expect(output).toContain(`outbox: a one-time-password for ${instanceName}\\${twoFactorName} is in `);
    // The capture is real: the request lines and the code notice were logged.
    expect(output).toContain('"request"');
    expect(output).toContain('one-time code sent');
    for (const [what, value] of Object.entries(secrets)) {
      expect(typeof value === 'string' && value.length > 8, what).toBe(true);
      expect(output.includes(value), `${what} appears in the log`).toBe(false);
      // Nor a telling fragment (a JWT's signature, the end of a password).
      expect(output.includes(value.slice(-16)), `the end of the ${what} appears in the log`).toBe(false);
    }
    expect(otp).toHaveLength(2);
    for (const [what, value] of otp) {
      expect(new RegExp(`(^|\\D)${value}(\\D|$)`).test(output), `${what} appears in the log`).toBe(false);
    }
    const logLines = output.split('\n').filter(Boolean).length;
    console.info(`[reliability/login-logs] log lines captured: ${logLines}, secrets checked: ${Object.keys(secrets).length + otp.length}, leaked: 0`);
  });
});
