/**
 * Where function code lives and how every function is bundled. The stack refers to function
 * code only by entry path: nothing under `functions/` is imported at synth time.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { OutputFormat, type BundlingOptions, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { DOCUMENT_ASSET, repositoryDocument } from '#shared/docs/openapi.ts';
import { REFERENCE_ASSET, packagedReferenceBundle } from '#shared/docs/page.ts';
import type { Family } from '#shared/model/collections.ts';

/** The repository root (holds package.json, package-lock.json, functions/ and shared/). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The lock file NodejsFunction hashes; named explicitly so synth does not depend on the cwd. */
export const LOCK_FILE = join(PROJECT_ROOT, 'package-lock.json');

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
 * (docs/openapi.json, ~340 KB) and the reference page's script (4.3 MB, from the
 * `@scalar/api-reference` package): files read on first use, not imports, so neither grows the
 * bundle that every cold start loads, and the other families never carry them.
 */
export function familyFiles(family: Family): BundledFile[] {
  return family === 'service'
    ? [
        { from: repositoryDocument(), to: DOCUMENT_ASSET },
        { from: packagedReferenceBundle(), to: REFERENCE_ASSET },
      ]
    : [];
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Copies the files into the bundle's output folder once esbuild is done. */
export function copyFilesHooks(files: readonly BundledFile[]): ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) =>
      files.map((f) => `cp ${quote(join(inputDir, relative(PROJECT_ROOT, f.from)))} ${quote(join(outputDir, f.to))}`),
  };
}

/**
 * The packages left to the runtime when an operator opts out of bundling the SDK. Lambda's
 * Node.js runtimes (18 and later) ship AWS SDK v3 and resolve ES module imports of it (CDK's own
 * default for those runtimes). Our code imports nothing from `@smithy/*` directly; the SDK's own
 * imports of it resolve inside the runtime's copy.
 */
export const AWS_SDK_EXTERNALS: readonly string[] = Object.freeze(['@aws-sdk/*']);

/**
 * esbuild options for every function: one minified ESM file with a source map, built by the
 * locally installed esbuild (never Docker: no `nodeModules`, nothing to install).
 *
 * Everything is bundled, `@aws-sdk/*` included: a function runs the exact SDK versions the
 * lockfile pins and the tests ran, not whatever the runtime ships that week, and it starts faster.
 * The SDK is most of a bundle's bytes (the DynamoDB client alone is ~340 KB minified), but the
 * runtime's copy is CommonJS spread over many packages, and importing it from there took longer
 * than importing the bundled, minified copy: on Node 20 here the bare DynamoDB client's import
 * went from 73 ms to 184 ms, a family's from 132 ms to 251 ms. Operators who prefer the runtime's
 * SDK (smaller packages, SDK fixes without a redeploy) set the CDK context `gatehouse:bundleAwsSdk`
 * to false (infra/context.ts).
 */
export function bundlingOptions(version: string, choices: BundlingChoices = {}): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    sourceMap: true,
    // Maps without the sources: stack traces still name file and line, at a quarter of the size.
    sourcesContent: false,
    externalModules: choices.bundleAwsSdk === false ? [...AWS_SDK_EXTERNALS] : [],
    // Some CommonJS dependencies call `require` (of node: builtins); ESM output has none.
    banner: "import { createRequire as __gatehouseCreateRequire } from 'node:module'; const require = __gatehouseCreateRequire(import.meta.url);",
    define: { __GATEHOUSE_VERSION__: JSON.stringify(version) },
    ...(choices.files?.length ? { commandHooks: copyFilesHooks(choices.files) } : {}),
  };
}
