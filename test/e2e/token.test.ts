/**
 * Logging in through the local runtime as clients in the field do, then calling the API with the
 * token; and the admin command against the running runtime's database, with a two-factor login
 * whose code is read from the runtime's outbox.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { adminCommand } from '../support/admin-cli.ts';
import { documentedFetch, documentedRequest } from '../support/documented-fetch.ts';

const url = inject('url');
const admin = inject('admin');
const dataDir = inject('dataDir');
const dynamoEndpoint = inject('runtimeDynamoEndpoint');

/** POST /token with a body exactly as given (field clients build it by hand), over node:http. */
async function postToken(body: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const res = await documentedRequest(`${url}/token`, { method: 'POST', headers, body });
  return { status: res.status, headers: res.headers, body: res.text ? JSON.parse(res.text) : undefined };
}

async function getApi(token: string) {
  const res = await documentedFetch(`${url}/api`, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
  return { status: res.status, body: (await res.json()) as any };
}

const runAdmin = adminCommand(dataDir, dynamoEndpoint);

describe('login through the local runtime', () => {
  it('logs in with Instance\\user, then GET /api answers the instance', async () => {
    const form = new URLSearchParams({
      grant_type: 'password',
      client_id: admin.clientId,
      client_secret: admin.clientSecret,
      username: `${admin.instanceName}\\${admin.userName}`,
      password: admin.password,
    });
    const res = await postToken(form.toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ userName: `${admin.instanceName}\\${admin.userName}`, token_type: 'bearer', instance: admin.instanceKey });
    const api = await getApi(res.body.access_token);
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ Key: admin.instanceKey, CommonName: admin.instanceName });
  });

  it('logs in with the bare user name and instance', async () => {
    const form = new URLSearchParams({ grant_type: 'password', instance: admin.instanceName, username: admin.userName, password: admin.password });
    const res = await postToken(form.toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(200);
    expect((await getApi(res.body.access_token)).status).toBe(200);
  });

  it('logs in with only instance, username and password, built by hand with a stray undefined= and no form content type', async () => {
    const body = `instance=${admin.instanceName}&username=${admin.userName}&password=${encodeURIComponent(admin.password)}&undefined=`;
    const asJson = await postToken(body, { 'content-type': 'application/json' });
    expect(asJson.status).toBe(200);
    const untyped = await postToken(body);
    expect(untyped.status).toBe(200);
    expect((await getApi(untyped.body.access_token)).status).toBe(200);
  });

  it('refreshes over HTTP and refuses the spent refresh token', async () => {
    const login = await postToken(`instance=${admin.instanceName}&username=${admin.userName}&password=${encodeURIComponent(admin.password)}`, {
      'content-type': 'application/x-www-form-urlencoded',
    });
    const rt = login.body.refresh_token as string;
    const next = await postToken(`grant_type=refresh_token&refresh_token=${rt}`, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(next.status).toBe(200);
    expect((await getApi(next.body.access_token)).status).toBe(200);
    const spent = await postToken(`grant_type=refresh_token&refresh_token=${rt}`, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(spent).toMatchObject({ status: 400, body: { error: 'RefreshTokenTicketNotValid' } });
  });

  it('publishes the JWKS', async () => {
    const res = await documentedFetch(`${url}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    const jwks = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });
});

describe('admin command against the running runtime', () => {
  it('creates a child instance and a two-factor user, who logs in with the code from the outbox', async () => {
    const child = `Child-${Date.now()}`;
    const made = await runAdmin(['create-instance', '--parent', admin.instanceName, '--name', child, '--security-level', 'High']);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ created: 'instance', name: child });
    const user = await runAdmin(['create-user', '--instance', child, '--name', 'carol', '--password', 'Car0l-Secret!', '--role', 'Administrator', '--two-factor']);
    expect(user.code, user.stderr).toBe(0);
    expect(user.stdout).not.toContain('Car0l-Secret!');

    const base = `username=${child}\\carol&password=${encodeURIComponent('Car0l-Secret!')}`;
    const type = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await postToken(base, type)).body.error).toBe('one_time_password_required');
    expect((await postToken(`${base}&sendonetimepassword=true`, type)).body.error).toBe('one_time_password_required');
    const lines = (await readFile(join(dataDir, 'outbox.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    const message = lines.filter((m) => m.instance === child && m.user === 'carol').pop();
    expect(message).toMatchObject({ kind: 'one-time-password', code: expect.stringMatching(/^\d{6}$/) });
    const ok = await postToken(`${base}&onetimepassword=${message.code}`, type);
    expect(ok.status).toBe(200);
    const api = await getApi(ok.body.access_token);
    expect(api.status).toBe(200);
    expect(api.body.CommonName).toBe(child);
  });

  it('rejects a weak password and an unknown instance with usage and error exits', async () => {
    const weak = await runAdmin(['create-user', '--instance', admin.instanceName, '--name', 'dave', '--password', 'weak']);
    expect(weak.code).toBe(2);
    expect(weak.stderr).toMatch(/password_doesnot_meet_minimum_length_rule/);
    const missing = await runAdmin(['issue-license', '--instance', 'NoSuchInstance']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no instance named/);
  });
});
