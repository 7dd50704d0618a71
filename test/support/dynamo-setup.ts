/**
 * Global setup of the integration project: one in-memory DynamoDB Local on a free loopback port
 * for the whole run (the local runtime's own launcher). Each test file creates its own table
 * (see `test/support/db.ts`).
 */
import type { TestProject } from 'vitest/node';
import { startDynamo } from '../../local/dynamo.ts';
import { useTestJvmOptions } from './jvm-options.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  useTestJvmOptions();
  const dynamo = await startDynamo({ dataDir: '', inMemory: true });
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return async () => {
    await dynamo.stop();
  };
}
