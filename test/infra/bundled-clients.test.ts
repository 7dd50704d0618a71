/**
 * Each AWS client is bundled only into the functions that call its service: every function built
 * with the deployed options (infra/bundling.ts), each build's metafile read for the clients' inputs
 * in any of its files, lazily loaded chunks included. A client in a function that never calls it
 * is bytes every cold start parses (issue #17). And what only some requests need (body validation,
 * the SNS and SQS clients, the query engine, RE2, BSON) sits in chunks a cold start does not load.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionNames, loadedFiles } from '../../bench/bundle.ts';
import { PROJECT_ROOT, esbuildOptions, functionBundling, functionEntry, packageVersion } from '../../infra/bundling.ts';

let outdir: string;
/** Function name → the code files of its asset. */
let outputs: Array<[string, Array<Metafile['outputs'][string]>]>;
/** Function name → the inputs of the files a cold start loads, and of those it leaves for later. */
const inputs = new Map<string, { atStart: string[]; lazy: string[] }>();
/** Function name → how many code files a cold start loads. */
const startFiles = new Map<string, number>();
/** Function name → the code a cold start loads, as text. */
const startCode = new Map<string, string>();

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'gatehouse-bundles-'));
  const version = packageVersion();
  outputs = await Promise.all(
    (await functionNames()).map(async (name) => {
      const result = await build({ ...esbuildOptions(functionBundling(functionEntry(name), version), join(outdir, name)), write: false });
      const meta = result.metafile!;
      const files = loadedFiles(meta);
      const inputsOf = (paths: readonly string[]) => paths.flatMap((p) => Object.keys(meta.outputs[p]!.inputs));
      inputs.set(name, { atStart: inputsOf(files.atStart), lazy: inputsOf(files.lazy) });
      startFiles.set(name, files.atStart.length);
      const text = new Map(result.outputFiles!.map((f) => [relative(PROJECT_ROOT, f.path), f.text]));
      startCode.set(name, files.atStart.map((p) => text.get(p) ?? '').join('\n'));
      const code = Object.entries(meta.outputs).filter(([path]) => path.endsWith('.mjs'));
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

  it('Secrets Manager: the token function (signs), the key manager, the webhook secrets\' readers (the fan-out and the webhooks function) and the identity providers\' writer (folders); verifiers read the JWKS from the table', () => {
    expect(using('@aws-sdk/client-secrets-manager')).toEqual(['fanout', 'folders', 'keygen', 'token', 'webhooks']);
  });

  it('SNS: the token function (sends one-time codes) only', () => {
    expect(using('@aws-sdk/client-sns')).toEqual(['token']);
  });
});

describe('what a cold start loads', () => {
  const atStart = (name: string, pkg: string) => inputs.get(name)!.atStart.some((i) => i.includes(`node_modules/${pkg}/`));
  const later = (name: string, pkg: string) => inputs.get(name)!.lazy.some((i) => i.includes(`node_modules/${pkg}/`));

  it('no function loads body validation (zod) or the SNS and SQS clients at start', () => {
    for (const name of inputs.keys()) for (const pkg of ['zod', '@aws-sdk/client-sns', '@aws-sdk/client-sqs']) expect(atStart(name, pkg), `${name}: ${pkg}`).toBe(false);
    // The token function loads the Secrets Manager client with the first read of the signing key.
    expect(atStart('token', '@aws-sdk/client-secrets-manager')).toBe(false);
  });

  it('loads them with the first request that needs them: the chunks ship in the functions that use them', () => {
    expect(later('people', 'zod')).toBe(true);
    expect(later('apps', 'zod')).toBe(true);
    expect(later('token', '@aws-sdk/client-sns')).toBe(true);
    expect(later('webhooks', '@aws-sdk/client-sqs')).toBe(true);
    expect(later('fanout', '@aws-sdk/client-sqs')).toBe(true);
  });

  it('leaves the query engine and RE2 of events and search, and the SDK credential providers, to first use', () => {
    for (const name of ['events', 'search']) {
      for (const pkg of ['mingo', 're2js']) {
        expect(atStart(name, pkg), `${name}: ${pkg}`).toBe(false);
        expect(later(name, pkg), `${name}: ${pkg}`).toBe(true);
      }
    }
    expect(atStart('events', 'bson')).toBe(false);
    expect(later('people', '@aws-sdk/credential-provider-sso')).toBe(true);
    expect(atStart('people', '@aws-sdk/credential-provider-sso')).toBe(false);
  });

  it('the fan-out writes BSON without the bson package, and loads its WebSocket and IoT clients with the first message', () => {
    // The package reads the BSON clients post (events/event-data.ts), which no cold start does.
    for (const name of inputs.keys()) expect(atStart(name, 'bson'), name).toBe(false);
    for (const pkg of ['@aws-sdk/client-apigatewaymanagementapi', '@aws-sdk/client-iot-data-plane']) {
      expect(atStart('fanout', pkg), pkg).toBe(false);
      expect(later('fanout', pkg), pkg).toBe(true);
    }
    expect(atStart('websocket', '@aws-sdk/client-apigatewaymanagementapi')).toBe(false);
  });

  it("keeps each function's own rows of the route table only (API Gateway chose among all of them)", () => {
    const rows = (name: string, ...paths: string[]) => paths.map((p) => startCode.get(name)!.includes(p));
    expect(startCode.get('people')!.length).toBeGreaterThan(0);
    expect(rows('people', '/bycard', '/eventmessagesink', '/revokesessions', '/.well-known/jwks.json')).toEqual([true, false, false, false]);
    expect(rows('events', '/eventmessagesink', '/bycard', '/rotatesecret')).toEqual([true, false, false]);
    expect(rows('token', '/.well-known/jwks.json', '/api/sysinfo', '/eventmessagesink')).toEqual([true, false, false]);
    expect(rows('folders', '/revokesessions', '/usage', '/bycard')).toEqual([true, true, false]);
  });

  const ours = (name: string, module: string, when: 'atStart' | 'lazy') => inputs.get(name)![when].includes(module);
  const CRUD = ['access', 'alarms', 'apps', 'devices', 'folders', 'people', 'schedules'];
  /** The write path of the object families: a cold start serving a read never needs it. */
  const WRITE_PATH = ['shared/objects/write-operations.ts', 'shared/objects/collection.ts', 'shared/objects/registry.ts', 'shared/relations/relation-links.ts'];
  /** The validators and the repository's writes too, except in apps and alarms, whose event type calls still load them at start. */
  const WRITE_PATH_EXCEPT_EVENT_TYPES = ['shared/objects/validate.ts', 'shared/db/object-writes.ts'];

  it('leaves the write path of the object families to the first write', () => {
    for (const name of CRUD) {
      const eventTypes = name === 'apps' || name === 'alarms';
      for (const module of [...WRITE_PATH, ...(eventTypes ? [] : WRITE_PATH_EXCEPT_EVENT_TYPES)]) {
        expect(ours(name, module, 'atStart'), `${name}: ${module}`).toBe(false);
        expect(ours(name, module, 'lazy'), `${name}: ${module}`).toBe(true);
      }
      // ...but reads what a GET needs at start.
      for (const module of ['shared/objects/object-operations.ts', 'shared/objects/tenant-scope.ts', 'shared/db/objects-repo.ts']) {
        expect(ours(name, module, 'atStart'), `${name}: ${module}`).toBe(true);
      }
    }
    expect(ours('people', 'shared/relations/calls.ts', 'lazy')).toBe(true);
  });

  it('leaves the webhooks calls that write or send, and the queue consumer, to first use', () => {
    // Each alone would carry the webhooks function over the bench's bundle-size goal (docs/cost.md, "Lazy loading").
    for (const module of ['shared/live/webhooks/webhook-writes.ts', 'shared/live/webhooks/settings.ts', 'shared/live/webhooks/sender.ts', 'shared/live/webhooks/consumer.ts', 'shared/live/webhooks/ssrf.ts']) {
      expect(ours('webhooks', module, 'atStart'), module).toBe(false);
      expect(ours('webhooks', module, 'lazy'), module).toBe(true);
    }
  });

  it('bundles no access-token verification in the functions whose routes are all public (token, service)', () => {
    for (const name of ['token', 'service']) {
      for (const module of ['shared/auth/authenticator.ts', 'shared/auth/status-check.ts']) {
        expect(ours(name, module, 'atStart') || ours(name, module, 'lazy'), `${name}: ${module}`).toBe(false);
      }
      // The token function checks identity providers' ID tokens (single sign-on), loaded with the first sign-in only.
      expect(inputs.get(name)!.atStart.some((i) => i.endsWith('jose/dist/webapi/jwt/verify.js')), name).toBe(false);
      if (name !== 'token') expect(inputs.get(name)!.lazy.some((i) => i.endsWith('jose/dist/webapi/jwt/verify.js')), name).toBe(false);
    }
    expect(ours('token', 'shared/auth/sso/flow.ts', 'atStart')).toBe(false);
    expect(ours('token', 'shared/auth/sso/flow.ts', 'lazy')).toBe(true);
    expect(ours('people', 'shared/auth/authenticator.ts', 'atStart')).toBe(true);
  });

  it('leaves the event types of apps and alarm definitions, reads and writes, to the first call on them', () => {
    for (const name of ['apps', 'alarms']) {
      for (const module of ['shared/events/event-type-operations.ts', 'shared/events/event-types.ts', 'shared/events/event-type-writes.ts', 'shared/events/event-type-body.ts', 'shared/db/alarm-link-writes.ts', 'shared/db/object-writes.ts']) {
        expect(ours(name, module, 'atStart'), `${name}: ${module}`).toBe(false);
        expect(ours(name, module, 'lazy'), `${name}: ${module}`).toBe(true);
      }
    }
  });

  it('leaves Powertools Metrics to first use in the HTTP families', () => {
    // Metrics load with the first request (shared/metrics.ts), beside it: no start file holds them.
    const metrics = (i: string) => i.includes('@aws-lambda-powertools/metrics/');
    for (const name of [...CRUD, 'events', 'search', 'token', 'service', 'webhooks']) {
      expect(inputs.get(name)!.atStart.some(metrics), name).toBe(false);
      expect(inputs.get(name)!.lazy.some(metrics), name).toBe(true);
    }
  });

  it('bundles the licence check in the token function only, and leaves the local key files to the local runtime', () => {
    for (const name of inputs.keys()) {
      const lazyOrStart = ours(name, 'shared/auth/licenses.ts', 'atStart') || ours(name, 'shared/auth/licenses.ts', 'lazy');
      expect(lazyOrStart, name).toBe(name === 'token');
      expect(ours(name, 'shared/auth/license-authority.ts', 'atStart') || ours(name, 'shared/auth/license-authority.ts', 'lazy'), name).toBe(false);
      // Only the key manager makes keys (it takes the maker from key-files.ts).
      if (name === 'keygen') continue;
      expect(ours(name, 'shared/auth/key-files.ts', 'atStart'), name).toBe(false);
      expect(inputs.get(name)!.atStart.some((i) => i.endsWith('jose/dist/webapi/key/generate_key_pair.js')), name).toBe(false);
      // The ring's keys are imported with WebCrypto: no function bundles jose's key import, but for
      // the identity providers' JWKS in the token function's single sign-on, loaded with its first call.
      expect(inputs.get(name)!.atStart.some((i) => i.endsWith('jose/dist/webapi/key/import.js')), name).toBe(false);
      if (name !== 'token') expect(inputs.get(name)!.lazy.some((i) => i.endsWith('jose/dist/webapi/key/import.js')), name).toBe(false);
    }
    expect(ours('token', 'shared/auth/licenses.ts', 'atStart')).toBe(true);
  });

  it('loads few files at start: the lazily loaded modules do not split the start code into many chunks', () => {
    // Each file a cold start loads costs time of its own (the ESM loader reads, compiles and links
    // it), and each lazily loaded module splits the start code by what it shares with it: the
    // object write side (one module: shared/objects/write-operations.ts); the local key files;
    // Powertools Metrics, loaded with the first request, which splits off Powertools' commons and
    // the SDK's invoke store that Logger and the SDK load at start; the Idempotency-Key protocol,
    // which shares the table declaration; and the card-number rules the card writes share with the
    // body checks. Apps and alarms have a second lazy module (their event types), access its decision
    // calls (the engine and the facts it reads); folders has SCIM
    // (with its filter and PATCH libraries) and single sign-on's sealing of identity providers'
    // secrets. What each import() adds or saves, in bytes and files, is the bench's (docs/cost.md,
    // "Lazy loading").
    const most: Readonly<Record<string, number>> = { apps: 18, alarms: 18, access: 18, folders: 19 };
    for (const name of CRUD) expect(startFiles.get(name), name).toBeLessThanOrEqual(most[name] ?? 16);
    expect(startFiles.get('service')).toBeLessThanOrEqual(12);
  });
});
