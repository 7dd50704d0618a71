/**
 * Each AWS client is bundled only into the functions that call its service: every function built
 * with the deployed options (infra/bundling.ts), each build's metafile read for the clients' inputs
 * in any of its files, lazily loaded chunks included. A client in a function that never calls it
 * is bytes every cold start parses (issue #17).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionNames } from '../../bench/bundle.ts';
import { esbuildOptions, functionBundling, functionEntry, packageVersion } from '../../infra/bundling.ts';

let outdir: string;
/** Function name → the code files of its asset. */
let outputs: Array<[string, Array<Metafile['outputs'][string]>]>;

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'gatehouse-bundles-'));
  const version = packageVersion();
  outputs = await Promise.all(
    (await functionNames()).map(async (name) => {
      const result = await build({ ...esbuildOptions(functionBundling(functionEntry(name), version), join(outdir, name)), write: false });
      const code = Object.entries(result.metafile!.outputs).filter(([path]) => path.endsWith('.mjs'));
      return [name, code.map(([, out]) => out)] as [string, Array<Metafile['outputs'][string]>];
    }),
  );
}, 120_000);

afterAll(async () => {
  if (outdir) await rm(outdir, { recursive: true, force: true });
});

/** The functions whose bundle holds `pkg` (or imports it from the runtime, when the SDK is left out). */
const using = (pkg: string) =>
  outputs
    .filter(([, files]) => files.some((out) => Object.keys(out.inputs).some((i) => i.includes(`${pkg}/`)) || out.imports.some((i) => i.path.startsWith(pkg))))
    .map(([name]) => name)
    .sort();

describe('the AWS clients', () => {
  it('bundles every function', async () => {
    expect(outputs.map(([name]) => name).sort()).toEqual((await functionNames()).sort());
    for (const [name, files] of outputs) expect(files.length, name).toBeGreaterThan(0);
  });

  it('SQS: the fan-out (queues jobs) and the webhooks function (re-queues them) only', () => {
    expect(using('@aws-sdk/client-sqs')).toEqual(['fanout', 'webhooks']);
  });

  it('Secrets Manager: the token function (signs) and the key manager only; verifiers read the JWKS from the table', () => {
    expect(using('@aws-sdk/client-secrets-manager')).toEqual(['keygen', 'token']);
  });

  it('SNS: the token function (sends one-time codes) only', () => {
    expect(using('@aws-sdk/client-sns')).toEqual(['token']);
  });
});
