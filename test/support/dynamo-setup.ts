/**
 * Global setup of the projects on DynamoDB Local (integration, reliability, load, bundles): one
 * in-memory DynamoDB Local per worker, on free loopback ports, for the whole run (the local
 * runtime's own launcher). A test file uses its worker's (`dynamo-endpoint.ts`), so it shares a
 * DynamoDB Local only with the files its worker runs before and after it, never with one running
 * beside it. With two files on one instance, the stream-driven tests (live-poller-wake,
 * fanout-dead-letters) went 15–30 s without their records in every such run here: DynamoDB Local
 * writes stream records behind its answers, and a busy instance falls behind. Each test file
 * creates its own table (see `test/support/db.ts`).
 */
import type { TestProject } from 'vitest/node';
import { startDynamo } from '../../local/dynamo.ts';
import { useTestJvmOptions } from './jvm-options.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One endpoint per worker (`VITEST_POOL_ID` 1 uses the first). */
    dynamoEndpoints: string[];
  }
}

export default async function setup(project: TestProject) {
  useTestJvmOptions();
  const workers = Math.max(1, project.config.maxWorkers || project.globalConfig.maxWorkers || 1);
  const dynamos = await Promise.all(Array.from({ length: workers }, () => startDynamo({ dataDir: '', inMemory: true })));
  project.provide(
    'dynamoEndpoints',
    dynamos.map((d) => d.endpoint),
  );
  return async () => {
    await Promise.all(dynamos.map((d) => d.stop()));
  };
}
