/**
 * The runtime's own boundary, in-process (on the e2e runtime's DynamoDB, in a table of its own):
 * a family that crashes or does not exist fails only its own routes, with a JSON body and never a
 * stack trace; an occupied port rejects start-up with a clear error.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { Family } from '#shared/model/collections.ts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FamilyMissing } from '#local/lambda.ts';
import { PortInUseError, startRuntime, type Runtime } from '#local/server.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { newDataDir } from '../support/runtime.ts';

let runtime: Runtime;
let dataDir: string;
const invoked: Family[] = [];

beforeAll(async () => {
  // startRuntime configures this process's environment for the handlers.
  process.env.GATEHOUSE_TABLE_NAME = `inproc-${randomBytes(4).toString('hex')}`;
  dataDir = await newDataDir();
  runtime = await startRuntime({
    port: 0,
    dataDir,
    dynamodbEndpoint: inject('runtimeDynamoEndpoint'),
    families: {
      invoke: async (family) => {
        invoked.push(family);
        if (family === 'people') throw new FamilyMissing(family);
        if (family === 'service') throw new Error('internal detail /srv/secret.ts:12');
        return { statusCode: 200, body: '' };
      },
    },
  });
});

afterAll(async () => {
  await runtime?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('runtime boundary', () => {
  it('answers a crashing family with the generic JSON 500', async () => {
    const res = await documentedFetch(`${runtime.url}/api/sysinfo`);

    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ Error: 'InternalError', Message: 'An unexpected error occurred.' });
    expect(text).not.toMatch(/secret|detail|\bat\b/);
  });

  it('answers the routes of a missing family with a JSON 501, and the others still work', async () => {
    // This runtime is built without some families, which no deployment is: its 501 and the
    // stand-in token family's `{}` are not checked against the document.
    const missing = await fetch(`${runtime.url}/api/f/0123456789abcdef01234567/people`);
    const other = await fetch(`${runtime.url}/token`, { method: 'POST' });

    expect(missing.status).toBe(501);
    expect(await missing.json()).toEqual({ Error: 'NotImplemented', Message: expect.any(String) });
    expect(other.status).toBe(200);
    expect(invoked).toEqual(expect.arrayContaining(['people', 'token']));
  });

  it('reports the port it listens on when asked for port 0', () => {
    expect(runtime.port).toBeGreaterThan(0);
    expect(runtime.url).toBe(`http://localhost:${runtime.port}`);
    expect(runtime.wsUrl).toBe(`ws://localhost:${runtime.port}/events`);
  });

  it('rejects a start on an occupied port with PortInUseError', async () => {
    const dir = await newDataDir();

    const start = startRuntime({ port: runtime.port, dataDir: dir, dynamodbEndpoint: inject('runtimeDynamoEndpoint') });

    await expect(start).rejects.toEqual(new PortInUseError(runtime.port));
    await expect(start).rejects.toThrow(`Port ${runtime.port} is already in use; set PORT to a free port`);
    await rm(dir, { recursive: true, force: true });
  });
});
