/**
 * Signing keys and sessions through a local runtime of its own (key cache 1 s, so a rollover
 * signs 2 s after it is published): `npm run admin -- rotate-signing-key` against the running
 * runtime's data directory, the JWKS it serves, tokens of both keys accepted over HTTP; and an
 * administrator's `POST <user Href>/revokesessions` over HTTP.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REPO_ROOT, adminToken, newRuntimeAdmin, spawnSeededRuntime, type RuntimeAdmin, type SpawnedRuntime } from '../support/runtime.ts';

let runtime: SpawnedRuntime;
let dataDir: string;
let admin: RuntimeAdmin;
const ENV = { GATEHOUSE_KEY_CACHE_SECONDS: '1', GATEHOUSE_ACCESS_TOKEN_TTL: '60' };

beforeAll(async () => {
  admin = newRuntimeAdmin('Keys');
  ({ runtime, dataDir } = await spawnSeededRuntime(inject('runtimeDynamoEndpoint'), admin, ENV));
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
});

function runAdmin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(REPO_ROOT, 'local/admin.ts'), ...args],
      { cwd: REPO_ROOT, timeout: 60_000, env: { ...process.env, ...ENV, GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_LOG_LEVEL: 'SILENT' } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const api = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${runtime.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
const jwksKids = async () => ((await (await fetch(`${runtime.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);

describe('signing key rollover on the local runtime', () => {
  it('rotate-signing-key publishes the next key at once; it signs two seconds later; tokens of both keys work', async () => {
    const oldToken = await adminToken(runtime.url, admin);
    const oldKid = decodeProtectedHeader(oldToken).kid!;
    expect(await jwksKids()).toEqual([oldKid]);

    const out = await runAdmin(['rotate-signing-key']);
    expect(out.code, out.stderr).toBe(0);
    const result = JSON.parse(out.stdout) as { rotated: boolean; next: { kid: string; signsFrom: string }; signing: { kid: string; dropAfter: string }; published: string[] };
    expect(result).toMatchObject({ rotated: true, signing: { kid: oldKid }, published: [oldKid, result.next.kid] });
    const signsFrom = Date.parse(result.next.signsFrom);
    // Dropped one access-token lifetime (60 s) plus one cache lifetime after the switch.
    expect(Date.parse(result.signing.dropAfter) - signsFrom).toBe(61_000);
    expect(JSON.stringify(result)).not.toMatch(/"d":/);

    await sleep(1_100);
    expect(await jwksKids()).toEqual([oldKid, result.next.kid]);

    await sleep(Math.max(0, signsFrom - Date.now()) + 100);
    const newToken = await adminToken(runtime.url, admin);
    expect(decodeProtectedHeader(newToken).kid).toBe(result.next.kid);
    expect((await api('/api', oldToken)).status).toBe(200);
    expect((await api('/api', newToken)).status).toBe(200);
  }, 60_000);
});

describe('sign out everywhere over HTTP', () => {
  it('answers 204 and refuses the user refresh token at once', async () => {
    const token = await adminToken(runtime.url, admin);
    const root = (await (await api('/api', token)).json()) as { Key: string };
    const name = `bob-${Date.now()}`;
    const created = await api(`/api/f/${root.Key}/users`, token, {
      method: 'POST',
      body: JSON.stringify({ $type: 'UserInfo', CommonName: name, Role: 'Operator', Password: 'Corr3ct-Horse!' }),
    });
    expect(created.status).toBe(201);
    const bob = (await created.json()) as { Href: string };
    const login = await fetch(`${runtime.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', client_id: 'consoleApp', client_secret: admin.clientSecret, username: `${admin.instanceName}\\${name}`, password: 'Corr3ct-Horse!' }),
    });
    expect(login.status).toBe(200);
    const { refresh_token: refreshToken } = (await login.json()) as { refresh_token: string };

    expect((await api(`${bob.Href}/revokesessions`, token, { method: 'POST' })).status).toBe(204);

    const refreshed = await fetch(`${runtime.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'consoleApp', client_secret: admin.clientSecret, refresh_token: refreshToken }),
    });
    expect(refreshed.status).toBe(400);
    expect(await refreshed.json()).toMatchObject({ error: 'RefreshTokenTicketNotValid' });
  }, 60_000);
});
