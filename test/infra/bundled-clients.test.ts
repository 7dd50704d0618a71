/**
 * Each AWS client is bundled only into the functions that call its service: one esbuild run of
 * every function with the deployed options (infra/bundling.ts), its metafile read for the clients'
 * inputs. A client in a function that never calls it is bytes every cold start parses (issue #17).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptionsFrom, functionNames } from '../../bench/bundle.ts';
import { bundlingOptions, functionEntry, packageVersion } from '../../infra/bundling.ts';

let outdir: string;
let outputs: Array<[string, Metafile['outputs'][string]]>;

beforeAll(async () => {
  const entries: Record<string, string> = {};
  for (const name of await functionNames()) entries[name] = functionEntry(name);
  outdir = await mkdtemp(join(tmpdir(), 'gatehouse-bundles-'));
  const result = await build({ ...esbuildOptionsFrom(bundlingOptions(packageVersion()), entries, outdir), write: false });
  outputs = Object.entries(result.metafile!.outputs).filter(([path]) => path.endsWith('index.mjs'));
}, 120_000);

afterAll(async () => {
  if (outdir) await rm(outdir, { recursive: true, force: true });
});

/** The functions whose bundle holds `pkg` (or imports it from the runtime, when the SDK is left out). */
const using = (pkg: string) =>
  outputs
    .filter(([, out]) => Object.keys(out.inputs).some((i) => i.includes(`${pkg}/`)) || out.imports.some((i) => i.path.startsWith(pkg)))
    .map(([path]) => path.split('/').at(-2))
    .sort();

describe('the AWS clients', () => {
  it('bundles every function', async () => {
    expect(outputs.map(([path]) => path.split('/').at(-2)).sort()).toEqual((await functionNames()).sort());
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
