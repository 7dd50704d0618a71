/**
 * Global setup of the e2e project: one local runtime (`local/main.ts` as a child process, its own
 * port and data directory, a known administrator password) for the whole run. Tests read it with
 * `inject('url')`, `inject('wsUrl')`, `inject('dataDir')`, `inject('admin')` and
 * `inject('runtimeDynamoEndpoint')`.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import { newDataDir, spawnRuntime } from './runtime.ts';
import { useTestJvmOptions } from './jvm-options.ts';

export interface E2eAdmin {
  readonly instanceName: string;
  readonly instanceKey: string;
  readonly userName: string;
  readonly password: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** `http://localhost:<port>` of the e2e runtime. */
    url: string;
    /** `ws://localhost:<port>/events` of the e2e runtime. */
    wsUrl: string;
    /** The e2e runtime's data directory. */
    dataDir: string;
    /** The seeded root instance and its administrator's login. */
    admin: E2eAdmin;
    /** The e2e runtime's DynamoDB Local endpoint. */
    runtimeDynamoEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  useTestJvmOptions();
  const dataDir = await newDataDir();
  const admin = {
    instanceName: 'E2E',
    userName: 'admin',
    password: `Adm1n!${randomBytes(9).toString('base64url')}`,
    clientId: 'consoleApp',
    clientSecret: 'consoleSecret',
  };
  const runtime = await spawnRuntime({
    dataDir,
    env: {
      GATEHOUSE_INSTANCE: admin.instanceName,
      GATEHOUSE_ADMIN_USER: admin.userName,
      GATEHOUSE_ADMIN_PASSWORD: admin.password,
      GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
      // The e2e files run in parallel against this one runtime: the stage throttling stays on (so
      // every request goes through it) but far above what they send. reliability/throttle.test.ts
      // tests the 429s.
      GATEHOUSE_THROTTLE_RATE: '2000',
      GATEHOUSE_THROTTLE_BURST: '4000',
    },
  });
  project.provide('url', runtime.url);
  project.provide('wsUrl', runtime.wsUrl);
  project.provide('dataDir', runtime.dataDir);
  project.provide('admin', { ...admin, instanceKey: runtime.instanceKey });
  project.provide('runtimeDynamoEndpoint', runtime.dynamodbEndpoint);
  return async () => {
    await runtime.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
