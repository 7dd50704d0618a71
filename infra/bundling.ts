/**
 * Where function code lives and how every function is bundled. The stack refers to function
 * code only by entry path: nothing under `functions/` is imported at synth time.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { Architecture, Code, Runtime } from 'aws-cdk-lib/aws-lambda';
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { DOCUMENT_ASSET, repositoryDocument } from '#shared/docs/openapi.ts';
import { REFERENCE_ASSET, packagedReferenceBundle } from '#shared/docs/page.ts';
import type { Family } from '#shared/model/collections.ts';
import { CONSOLE_DIR } from '#shared/console/console-assets.ts';
import { writeConsoleSync } from '../console/build.ts';

/** The repository root (holds package.json, package-lock.json, functions/ and shared/). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The entry file of a function folder: `functions/<name>/handler.ts`, exporting `handler`. */
export function functionEntry(name: string): string {
  return join(PROJECT_ROOT, 'functions', name, 'handler.ts');
}

/** The package version, baked into every bundle as `__GATEHOUSE_VERSION__` (see shared/config.ts). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof pkg.version !== 'string') throw new Error('package.json has no version');
  return pkg.version;
}

/**
 * Node.js 22: the newest runtime the local toolchain (Node 20, esbuild target node22) is checked
 * against. Bump runtime and target together.
 */
export const RUNTIME = Runtime.NODEJS_22_X;
export const ARCHITECTURE = Architecture.ARM_64;

/** What may change how a function is bundled. */
export interface BundlingChoices {
  /**
   * Bundle the AWS SDK into every function (the exact versions the lockfile pins and the tests
   * ran) instead of importing the one the Lambda runtime ships.
   * @default true
   */
  readonly bundleAwsSdk?: boolean;
  /**
   * Files shipped beside the bundled code (read at run time, not imported).
   * @default - none
   */
  readonly files?: readonly BundledFile[];
}

/** A file of the repository (or of an installed package) copied into a function's asset. */
export interface BundledFile {
  /** Absolute path on the synthesizing machine, inside the project root. */
  readonly from: string;
  /** File name beside the bundled `index.mjs`. */
  readonly to: string;
}

/**
 * The files each family ships beside its code. The service family serves the OpenAPI document
 * (docs/openapi.json) and the reference page's script (from the `@scalar/api-reference` package),
 * both large: files read on first use, not imports, so neither grows the bundle that every cold
 * start loads, and the other families never carry them.
 */
export function familyFiles(family: Family): BundledFile[] {
  return family === 'service'
    ? [
        { from: repositoryDocument(), to: DOCUMENT_ASSET },
        { from: packagedReferenceBundle(), to: REFERENCE_ASSET },
      ]
    : [];
}

/**
 * The packages left to the runtime when an operator opts out of bundling the SDK. Lambda's
 * Node.js runtimes (18 and later) ship AWS SDK v3 and resolve ES module imports of it (CDK's own
 * default for those runtimes). Our code imports nothing from `@smithy/*` directly; the SDK's own
 * imports of it resolve inside the runtime's copy.
 */
const AWS_SDK_EXTERNALS: readonly string[] = Object.freeze(['@aws-sdk/*']);

/** What one function's code asset is built from. */
export interface FunctionBundling {
  /** The entry module (`functions/<name>/handler.ts`), exporting `handler`. */
  readonly entry: string;
  /** The package version baked in as `__GATEHOUSE_VERSION__`. */
  readonly version: string;
  /**
   * The function's name when the entry is `functions/<name>/handler.ts`, baked in as
   * `__GATEHOUSE_FAMILY__`: the bundle keeps that family's rows of the route table only
   * (shared/routes.ts). Undefined for other entries (the bench's references, test fixtures).
   */
  readonly family?: string;
  /** Packages imported from the runtime instead of bundled (`@aws-sdk/*` when the SDK is left out). */
  readonly externalModules: readonly string[];
  /** Files copied beside the code. */
  readonly files: readonly BundledFile[];
}

/**
 * How every function is bundled: minified ESM for Node.js 22 with source maps, by the locally
 * installed esbuild (never Docker, nothing to install).
 *
 * Everything is bundled, `@aws-sdk/*` included: a function runs the exact SDK versions the
 * lockfile pins and the tests ran, not whatever the runtime ships that week, and it starts faster.
 * The SDK is most of a bundle's bytes, but the runtime's copy is CommonJS spread over many
 * packages, and importing it from there took longer than importing the bundled, minified copy,
 * for the bare client and for a family alike. Operators who prefer the runtime's
 * SDK (smaller packages, SDK fixes without a redeploy) set the CDK context `gatehouse:bundleAwsSdk`
 * to false (infra/cdk-context.ts).
 */
export function functionBundling(entry: string, version: string, choices: BundlingChoices = {}): FunctionBundling {
  const family = /[\\/]functions[\\/]([^\\/]+)[\\/]handler\.ts$/.exec(entry)?.[1];
  return {
    entry,
    version,
    ...(family ? { family } : {}),
    externalModules: choices.bundleAwsSdk === false ? [...AWS_SDK_EXTERNALS] : [],
    files: [...(choices.files ?? [])],
  };
}

/** The file the runtime loads (`index.handler` names its `handler` export). */
export const HANDLER_FILE = 'index.mjs';

/**
 * The esbuild options of one function, written to `outdir`: `index.mjs`, and beside it the chunks
 * it imports. Code splitting puts every module reached only through `import()` in a chunk of its
 * own, which a cold start never reads: the SDK's credential providers other than the
 * environment's (SSO, INI files, processes, web identity: a large part of the bare DynamoDB
 * client), and our own lazily loaded parts (the query engine, RE2, the BSON codec, body
 * validation; what each saves: docs/cost.md, "Lazy loading"). One file with those modules inlined
 * made V8 scan all of them at every cold start.
 */
export function esbuildOptions(b: FunctionBundling, outdir: string): BuildOptions {
  return {
    entryPoints: { index: b.entry },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    mainFields: ['module', 'main'],
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    absWorkingDir: PROJECT_ROOT,
    minify: true,
    sourcemap: true,
    // Maps without the sources: stack traces still name file and line, at a quarter of the size.
    sourcesContent: false,
    external: [...b.externalModules],
    // No `require` banner: no bundled module calls `require` at run time (esbuild resolves the
    // CommonJS ones' requires at build time), and a banner would be read by every chunk of every
    // cold start. A dependency that starts to is refused by `bundleFunctionSync` (see below).
    define: {
      __GATEHOUSE_VERSION__: JSON.stringify(b.version),
      ...(b.family ? { __GATEHOUSE_FAMILY__: JSON.stringify(b.family) } : {}),
    },
    metafile: true,
    logLevel: 'silent',
  };
}

/**
 * The worker threads a family starts, by the file name (without `.mjs`) its code looks for beside
 * itself, and their entry modules. Each is built on its own, one file without splitting: its code
 * never joins the chunks of the function's cold start, and the function's chunks stay as they
 * were without it. The events family runs aggregation pipelines in one (shared/events/aggregate-pool.ts).
 */
const FAMILY_WORKERS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  events: { 'aggregate-worker': join(PROJECT_ROOT, 'shared', 'events', 'aggregate-worker.ts') },
};

/** The esbuild options of the worker threads of a function's family (see {@link FAMILY_WORKERS}), written to `outdir` beside its code. */
export function workerOptions(b: FunctionBundling, outdir: string): BuildOptions[] {
  return Object.entries(FAMILY_WORKERS[b.family ?? ''] ?? {}).map(([name, entry]) => ({
    ...esbuildOptions(b, outdir),
    entryPoints: { [name]: entry },
    splitting: false,
  }));
}

/** What esbuild's shim throws where a bundled module calls `require` at run time, which ESM output cannot serve. */
const DYNAMIC_REQUIRE = 'Dynamic require of "';

/**
 * Throws when a built code file would call `require` at run time (a CommonJS dependency requiring
 * a package esbuild left to run time, a Node builtin): it would fail in Lambda, on first call.
 */
export function checkNoDynamicRequire(files: ReadonlyArray<{ readonly path: string; readonly text: string }>): void {
  const bad = files.filter((f) => f.path.endsWith('.mjs') && f.text.includes(DYNAMIC_REQUIRE)).map((f) => f.path);
  if (bad.length > 0) throw new Error(`a bundled module calls require() at run time, which ESM output cannot serve: ${bad.join(', ')}`);
}

/** Bundles one function into `outdir` and copies its files beside the code; the build's metafile. */
export function bundleFunctionSync(b: FunctionBundling, outdir: string): Metafile {
  const result = buildSync({ ...esbuildOptions(b, outdir), write: false });
  const workers = workerOptions(b, outdir).map((o) => buildSync({ ...o, write: false }));
  const outputs = [result, ...workers].flatMap((r) => r.outputFiles);
  checkNoDynamicRequire(outputs);
  for (const f of outputs) {
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, f.contents);
  }
  for (const f of b.files) copyFileSync(f.from, join(outdir, f.to));
  // The operator console's page and hashed files, served by this family (shared/console/console-assets.ts).
  if (b.family === 'service') writeConsoleSync(join(outdir, CONSOLE_DIR));
  return result.metafile!;
}

/**
 * CDK's local bundler for one function. Its fields are what CDK's asset cache keys the output on
 * (the bundling options, serialized as JSON): a bundler of functions alone, without them, would
 * key every function alike and ship the first function's code as all of them.
 */
class LocalEsbuild implements ILocalBundling {
  constructor(readonly bundling: FunctionBundling) {}

  tryBundle(outputDir: string): boolean {
    bundleFunctionSync(this.bundling, outputDir);
    return true;
  }
}

/**
 * The code asset of a function: bundled on the synthesizing machine when the stack is
 * synthesized (as NodejsFunction does, which ships one file and so cannot split code), hashed
 * by its output.
 */
export function functionCode(b: FunctionBundling): Code {
  for (const f of b.files) {
    if (relative(PROJECT_ROOT, f.from).startsWith('..')) throw new Error(`${f.from} is outside the project: a function ships files of the repository only`);
  }
  return Code.fromAsset(PROJECT_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: the local bundler always answers (or throws with esbuild's errors), and
      // CDK only turns to an image when it answers false.
      image: DockerImage.fromRegistry('scratch'),
      local: new LocalEsbuild(b),
    },
  });
}
