/**
 * The local runtime serves nothing until it can serve logins: while it starts (and, for
 * `npm start`, until the first instance's administrator is seeded) every call answers 503
 * `ServiceUnavailable` with `Retry-After: 1`, so a client that polls sysinfo and then logs in
 * never meets an `invalid_grant` from a half-seeded deployment.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startRuntime } from '#local/server.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { OpenApiMismatchError } from '../support/openapi-validator.ts';
import { adminToken, freePort, newDataDir, newRuntimeAdmin, spawnMain } from '../support/runtime.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('readiness', () => {
  it('answers 503 with Retry-After: 1 until a gated runtime is opened, then serves', async () => {
    process.env.GATEHOUSE_TABLE_NAME = `gated-${randomBytes(4).toString('hex')}`;
    const dataDir = await newDataDir();
    dirs.push(dataDir);
    const served: string[] = [];
    const runtime = await startRuntime({
      port: 0,
      dataDir,
      dynamodbEndpoint: inject('runtimeDynamoEndpoint'),
      gated: true,
      families: {
        invoke: async (family) => {
          served.push(family);
          return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
        },
      },
    });
    try {
      const before = await documentedFetch(`${runtime.url}/api/sysinfo`);
      expect(before.status).toBe(503);
      expect(before.headers.get('retry-after')).toBe('1');
      expect(await before.json()).toEqual({ Error: 'ServiceUnavailable', Message: expect.any(String) });
      expect(served).toEqual([]);

      runtime.open();

      // The stand-in family answers `{}`, which is no SysInfo: not checked against the document.
      expect((await fetch(`${runtime.url}/api/sysinfo`)).status).toBe(200);
      expect(served).toEqual(['service']);
    } finally {
      await runtime.stop();
    }
  });

  it('lets a client log in as soon as `npm start` answers sysinfo 200', async () => {
    const admin = newRuntimeAdmin('Ready');
    const port = await freePort();
    const dataDir = await newDataDir();
    dirs.push(dataDir);
    const child = spawnMain(port, dataDir, {
      GATEHOUSE_DYNAMODB_ENDPOINT: inject('runtimeDynamoEndpoint'),
      GATEHOUSE_TABLE_NAME: `ready-${randomBytes(4).toString('hex')}`,
      GATEHOUSE_INSTANCE: admin.instanceName,
      GATEHOUSE_ADMIN_USER: admin.userName,
      GATEHOUSE_ADMIN_PASSWORD: admin.password,
      GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const url = `http://localhost:${port}`;
    const seen: Array<{ status: number; retryAfter: string | null }> = [];
    try {
      // Poll the way a deployment script does, from before the port is even open.
      const deadline = Date.now() + 90_000;
      for (;;) {
        expect(Date.now()).toBeLessThan(deadline);
        const res = await documentedFetch(`${url}/api/sysinfo`).catch((err: unknown) => {
          if (err instanceof OpenApiMismatchError) throw err;
          return undefined;
        });
        if (res) {
          seen.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
          if (res.status === 200) break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      // The very next call is a login, and it succeeds.
      expect(await adminToken(url, admin)).toMatch(/^ey/);
      // Seeding hashes the administrator's password (hundreds of ms): the poll met the gate.
      const waiting = seen.filter((s) => s.status !== 200);
      expect(waiting.length).toBeGreaterThan(0);
      expect(waiting.every((s) => s.status === 503 && s.retryAfter === '1')).toBe(true);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
