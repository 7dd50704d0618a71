/** The capacity scope of a request: per asynchronous call chain where requests overlap, one tally per invocation where they cannot. */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { createCapacityScope } from '#shared/db/capacity.ts';

describe('capacity scope', () => {
  it('keeps overlapping requests apart and leaves work outside the scope uncounted', async () => {
    const scope = createCapacityScope(false);
    const request = (units: number[]) =>
      scope.run(async () => {
        for (const u of units) {
          await sleep(1);
          scope.add(u);
        }
        await scope.exit(async () => {
          await sleep(1);
          scope.add(100);
        });
        return scope.consumed();
      });
    const [a, b] = await Promise.all([request([1, 2, 3]), request([0.5, 0.5])]);
    expect(a).toBe(6);
    expect(b).toBe(1);
    expect(scope.consumed()).toBeUndefined();
  });

  it('one invocation at a time: each invocation starts a new tally', async () => {
    const scope = createCapacityScope(true);
    expect(scope.consumed()).toBeUndefined();
    scope.add(7); // outside any invocation: nowhere to count it
    const first = await scope.run(async () => {
      await sleep(1);
      scope.add(2.5);
      scope.add(1.004);
      return scope.consumed();
    });
    expect(first).toBe(3.5);
    const second = await scope.run(async () => {
      scope.add(1);
      return scope.consumed();
    });
    expect(second).toBe(1);
    // Not a number: never counted.
    await scope.run(async () => scope.add(Number.NaN));
    expect(scope.consumed()).toBe(0);
  });

  it('counts one at a time only in a Lambda environment serving one invocation at a time', () => {
    const oneAtATime = (env: Record<string, string>) => loadConfig(env).invocationsOneAtATime;
    expect(oneAtATime({})).toBe(false);
    expect(oneAtATime({ AWS_LAMBDA_FUNCTION_NAME: 'people' })).toBe(true);
    expect(oneAtATime({ AWS_LAMBDA_FUNCTION_NAME: 'people', AWS_LAMBDA_MAX_CONCURRENCY: '1' })).toBe(true);
    expect(oneAtATime({ AWS_LAMBDA_FUNCTION_NAME: 'people', AWS_LAMBDA_MAX_CONCURRENCY: '8' })).toBe(false);
    expect(oneAtATime({ AWS_LAMBDA_FUNCTION_NAME: 'people', AWS_LAMBDA_MAX_CONCURRENCY: 'many' })).toBe(false);
  });
});
