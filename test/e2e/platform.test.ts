/**
 * The local runtime as a client sees it: HTTP API behaviour of the platform (sysinfo, errors,
 * limits) against the shared e2e runtime, and process behaviour (port in use, restart, SIGTERM,
 * Java) against runtimes this file starts itself.
 */
import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDb } from '#shared/db/client.ts';
import { getObject } from '#shared/db/objects-repo.ts';
import { isAlive, newDataDir, runUntilExit, spawnRuntime, type SpawnedRuntime } from '../support/runtime.ts';
import { documentedFetch, documentedRequest } from '../support/documented-fetch.ts';

const url = inject('url');
const admin = inject('admin');

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** `node:http`, because fetch refuses GET bodies and hides connection handling. */
function send(method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<RawResponse> {
  // The server may answer (413) and close before it has read the whole body.
  return documentedRequest(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
}

async function login(base: string, password: string, instance = admin.instanceName): Promise<Response> {
  return documentedFetch(`${base}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      client_id: admin.clientId,
      client_secret: admin.clientSecret,
      instance,
      username: admin.userName,
      password,
    }),
  });
}

describe('HTTP API on the local runtime', () => {
  it('answers sysinfo with every SysInfo field', async () => {
    const res = await documentedFetch(`${url}/api/sysinfo`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const info = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(info).sort()).toEqual(
      [
        '$type',
        'Version',
        'ServerId',
        'ServerTime',
        'EventPublisherUrl',
        'MqttPublisherUrl',
        'FitScriptEngineUrl',
        'LicenseServerUrl',
        'UapBrokerUrl',
        'PrinterConnectApiUrl',
        'AacClientUrl',
        'GalleryIsEnabled',
        'ReleaseNotes',
      ].sort(),
    );
    expect(info.$type).toMatch(/^[\w.]+\.SysInfo, [\w.]+$/);
    expect(info.Version).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(info.EventPublisherUrl).toBe(inject('wsUrl'));
    expect(info.EventPublisherUrl).toMatch(/^ws:\/\/localhost:\d+\/events$/);
    expect(info.MqttPublisherUrl).toBe(String(inject('wsUrl')).replace(/\/events$/, '/mqtt'));
    expect(Math.abs(Date.parse(info.ServerTime as string) - Date.now())).toBeLessThan(60_000);
    expect(info.ReleaseNotes).toEqual([expect.objectContaining({ Name: expect.any(String), Url: expect.any(String) })]);
  });

  it('answers an unknown path with a JSON 404', async () => {
    const res = await documentedFetch(`${url}/no/such/path?x=1`);

    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ Error: 'NotFound', Message: expect.any(String) });
  });

  it('rejects a malformed JSON body with 400 InvalidJson before authentication', async () => {
    // The pipeline parses the body before it checks a token.
    const res = await documentedFetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{bad' });

    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ Error: 'InvalidJson', Message: expect.any(String) });
  });

  it('rejects a protected call without a token with 401 unauthorized', async () => {
    const res = await documentedFetch(`${url}/api`);

    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
  });

  it('rejects a body over 1 MiB with a JSON 413', async () => {
    const res = await send('POST', '/anything', Buffer.alloc(1024 * 1024 + 1, 'a'), { 'content-type': 'text/plain' });

    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toEqual({ Error: 'PayloadTooLarge', Message: expect.any(String) });
  });

  it('rejects a body over the read cap with a JSON 413 without reading it', async () => {
    // The server answers and closes without reading the body, so the client's write may fail
    // (EPIPE, ECONNRESET) before its parser has read the answer: that race is the client's; try again.
    const oversized = async (attempt = 1): Promise<RawResponse> => {
      try {
        return await send('POST', '/anything', Buffer.alloc(3 * 1024 * 1024, 'a'), { 'content-type': 'text/plain' });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (attempt < 5 && (code === 'EPIPE' || code === 'ECONNRESET')) return oversized(attempt + 1);
        throw err;
      }
    };
    const res = await oversized();

    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toEqual({ Error: 'PayloadTooLarge', Message: expect.any(String) });
  });

  it('keeps serving after a client sent a too-large body', async () => {
    const res = await documentedFetch(`${url}/api/sysinfo`);

    expect(res.status).toBe(200);
  });

  it('issues a token to the seeded administrator', async () => {
    const res = await login(url, admin.password);

    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'bearer', instance: admin.instanceKey });
    expect(body.access_token).toEqual(expect.any(String));
  });
});

describe('local runtime process', () => {
  const started: SpawnedRuntime[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.allSettled(started.map((r) => r.stop()));
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('rejects a second runtime on the same port with a one-line message and exit code 1', async () => {
    const port = Number(new URL(url).port);
    const dataDir = await newDataDir();
    dirs.push(dataDir);

    const run = await runUntilExit(port, dataDir);

    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`Port ${port} is already in use; set PORT to a free port`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('rejects start-up without Java with install advice and exit code 1', async () => {
    const dataDir = await newDataDir();
    dirs.push(dataDir);

    const run = await runUntilExit(0, dataDir, { PATH: '/nonexistent' });

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Java 17\+/);
    expect(run.stderr).toMatch(/apt-get install openjdk-17-jre-headless/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('keeps its data across a restart and exits cleanly on SIGTERM', async () => {
    const dataDir = await newDataDir();
    dirs.push(dataDir);
    const first = await spawnRuntime({ dataDir });
    started.push(first);
    const password = /Admin password:\s+(\S+)/.exec(first.output())?.[1];
    expect(password).toBeDefined();
    const firstServer = ((await (await documentedFetch(`${first.url}/api/sysinfo`)).json()) as { ServerId: string }).ServerId;

    const code = await first.stop();
    expect(code).toBe(0);
    expect(isAlive(first.pid)).toBe(false);
    expect(first.javaPid && isAlive(first.javaPid)).toBeFalsy();

    const second = await spawnRuntime({ dataDir });
    started.push(second);
    expect(second.instanceKey).toBe(first.instanceKey);
    // The generated password is shown on the first start only.
    expect(second.output()).not.toMatch(/Admin password:/);
    const secondServer = ((await (await documentedFetch(`${second.url}/api/sysinfo`)).json()) as { ServerId: string }).ServerId;
    expect(secondServer).not.toBe(firstServer);
    const db = createDb({ tableName: 'gatehouse', dynamodbEndpoint: second.dynamodbEndpoint, region: 'us-east-1' });
    expect(await getObject(db, second.instanceKey)).toMatchObject({ key: first.instanceKey, collection: 'instances' });
    db.raw.destroy();
    const res = await documentedFetch(`${second.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', client_id: 'consoleApp', client_secret: 'consoleSecret', instance: 'Gatehouse', username: 'admin', password: password! }),
    });
    expect(res.status).toBe(200);

    expect(await second.stop()).toBe(0);
  });

  it('uses GATEHOUSE_DYNAMODB_ENDPOINT instead of starting Java', async () => {
    const dataDir = await newDataDir();
    dirs.push(dataDir);

    const rt = await spawnRuntime({ dataDir, env: { GATEHOUSE_DYNAMODB_ENDPOINT: inject('runtimeDynamoEndpoint'), GATEHOUSE_TABLE_NAME: 'gatehouse-external' } });
    started.push(rt);

    expect(rt.javaPid).toBeNull();
    expect(rt.dynamodbEndpoint).toBe(inject('runtimeDynamoEndpoint'));
    expect((await documentedFetch(`${rt.url}/api/sysinfo`)).status).toBe(200);
    expect(await rt.stop()).toBe(0);
  });
});
