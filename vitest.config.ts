import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Eight projects: `unit` (no network), `integration` (DynamoDB Local started once by a global
 * setup), `infra` (CDK template assertions, bundling skipped), `reliability` (fuzzing, tenant
 * isolation, races, faults: DynamoDB Local like integration), `security` (one tenant's attacks on
 * another or on the service: the same settings), `load` (the 60-second load run: not
 * in `npm test`, run by `npm run test:load` and CI), `bundles` (the deployment packages cdk.out
 * holds, run as Lambda runs them, on DynamoDB Local) and `e2e` (the local runtime booted on a free
 * port, spoken to over HTTP and WebSocket).
 */
const env = {
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  GATEHOUSE_LOG_LEVEL: 'SILENT',
  CDK_DISABLE_CLI_TELEMETRY: 'true',
};

/**
 * The projects that log in: new password hashes at scrypt N=2^12 instead of 2^17 (about 30 times
 * less CPU a login; the unit tests and token-password-grant keep the production cost).
 */
const loginEnv = { ...env, GATEHOUSE_PASSWORD_HASH_COST: '12' };

/**
 * The 60-second mixed load on the local runtime: its own project, `load`, which `npm test` leaves
 * out (`--project '!load'`) and `npm run test:load` and CI run.
 */
const LOAD_TEST = 'test/reliability/load.test.ts';

/** Hands what each file's call helpers validated against the OpenAPI document to the reporter. */
const openapiCoverage = './test/support/openapi-coverage-setup.ts';

/** What the reliability project and the load run split out of it share: DynamoDB Local, long timeouts. */
const reliabilitySettings = {
  globalSetup: ['test/support/dynamo-setup.ts'],
  setupFiles: [openapiCoverage],
  testTimeout: 180_000,
  hookTimeout: 120_000,
  env: loginEnv,
};

export default defineConfig({
  test: {
    env,
    pool: 'forks',
    // Two files at once. vitest's default is one fewer than the cores: one at a time on two cores,
    // where many files spend much of their time waiting on DynamoDB Local, a runtime, a receiver
    // or a retry schedule. (Three at once starved the runtime-driven live tests here.)
    maxWorkers: 2,
    // The second prints the responses validated per OpenAPI operation (see its header).
    reporters: ['default', './test/support/openapi-coverage-reporter.ts', './test/support/slowest-files-reporter.ts'],
    projects: [
      // 30 s, not vitest's 5: a few unit tests generate the typed client or lint the document, seconds
      // of CPU that a busy machine stretches.
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 30_000, env } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/dynamo-setup.ts'],
          setupFiles: [openapiCoverage],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          env: loginEnv,
        },
      },
      // infra's files share their worker's modules (isolate: false): they keep no state between
      // them, and each would otherwise import aws-cdk-lib again (137 s of CPU instead of 51 s).
      { test: { name: 'infra', include: ['test/infra/**/*.test.ts'], isolate: false, testTimeout: 120_000, env } },
      {
        test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'], exclude: [...configDefaults.exclude, LOAD_TEST], ...reliabilitySettings },
      },
      // Attacks one tenant could make on another or on the service (issue #34's findings): DynamoDB
      // Local and long timeouts, as reliability.
      { test: { name: 'security', include: ['test/security/**/*.test.ts'], ...reliabilitySettings } },
      {
        // One file: one worker, so one DynamoDB Local (dynamo-setup.ts starts one per worker).
        test: { name: 'load', include: [LOAD_TEST], ...reliabilitySettings, maxWorkers: 1 },
      },
      {
        // The deployment packages: the app synthesized with real bundling, each function loaded
        // from cdk.out as the Lambda runtime loads it, a whole flow through them on DynamoDB Local.
        test: {
          name: 'bundles',
          include: ['test/bundles/**/*.test.ts'],
          maxWorkers: 1, // one file (see load)
          globalSetup: ['test/support/dynamo-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          env: loginEnv,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/e2e-setup.ts'],
          setupFiles: [openapiCoverage],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          env: loginEnv,
        },
      },
    ],
  },
});
