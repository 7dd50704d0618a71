import { inject } from 'vitest';

/**
 * This worker's DynamoDB Local (see `dynamo-setup.ts`): vitest numbers its workers 1..maxWorkers
 * in `VITEST_POOL_ID`, and a worker runs one file at a time.
 */
export function dynamoEndpoint(): string {
  const endpoints = inject('dynamoEndpoints');
  const pool = Number(process.env.VITEST_POOL_ID ?? '1');
  return endpoints[(Math.max(1, pool) - 1) % endpoints.length]!;
}
