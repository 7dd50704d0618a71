/**
 * Setup file of the integration, reliability and e2e projects: after a test file, hands the
 * responses its call helpers validated (per operation) to the run's report through the file's
 * task meta (the worker sends it with the file's result; `openapi-coverage-reporter.ts` adds the
 * files up), and fails the file if any response the document does not describe was caught and
 * swallowed by a test instead of failing it.
 */
import { afterAll } from 'vitest';
import { sharedValidatorIfUsed, type Mismatch } from './openapi-validator.ts';

/** What one test file's helpers validated. */
export interface OpenApiCoverage {
  /** operationId → responses validated. */
  readonly validated: Record<string, number>;
  readonly mismatches: readonly Mismatch[];
}

declare module 'vitest' {
  interface TaskMeta {
    openapiCoverage?: OpenApiCoverage;
  }
}

// Registered first, so it runs after the file's own afterAll hooks (their cleanup calls count).
// Vitest reads a hook's first parameter as a fixture list, hence the empty pattern.
// eslint-disable-next-line no-empty-pattern
afterAll(({}, file) => {
  const v = sharedValidatorIfUsed();
  if (!v) return;
  file.meta.openapiCoverage = { validated: Object.fromEntries(v.counts), mismatches: v.mismatches };
  if (v.mismatches.length > 0) {
    const list = v.mismatches.map((m) => `${m.operationId} ${m.request} → ${m.status}: ${m.problem}`).join('\n  ');
    // Each also failed the test that received it, unless that test caught the error.
    throw new Error(`${v.mismatches.length} responses that the OpenAPI document does not describe:\n  ${list}`);
  }
});
