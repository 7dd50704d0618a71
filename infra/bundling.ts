/**
 * Where function code lives and how every function is bundled. The stack refers to function
 * code only by entry path: nothing under `functions/` is imported at synth time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

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

/**
 * esbuild options for every function: one minified ESM file with a source map, built by the
 * locally installed esbuild (never Docker: no `nodeModules`, nothing to install).
 *
 * Everything is bundled, `@aws-sdk/*` included, so a function runs the exact versions the
 * lockfile pins and the tests ran, not whatever SDK the runtime ships that week.
 */
export function bundlingOptions(version: string): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    sourceMap: true,
    // Maps without the sources: stack traces still name file and line, at a quarter of the size.
    sourcesContent: false,
    externalModules: [],
    // Some CommonJS dependencies call `require` (of node: builtins); ESM output has none.
    banner: "import { createRequire as __gatehouseCreateRequire } from 'node:module'; const require = __gatehouseCreateRequire(import.meta.url);",
    define: { __GATEHOUSE_VERSION__: JSON.stringify(version) },
  };
}
