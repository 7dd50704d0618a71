/**
 * Bundles each function as CDK ships it: the `bundlingOptions` of infra/bundling.ts (their
 * defaults, as `cdk synth` without context uses them), translated to esbuild's API the way
 * `NodejsFunction` translates them to its command line (`--bundle --platform=node --format=esm
 * --outfile=index.mjs --minify --sourcemap --external:@aws-sdk/* ...`), with esbuild's metafile
 * to say which packages make up the bytes.
 */
import { mkdir, readdir, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { PROJECT_ROOT, bundlingOptions, functionEntry, packageVersion } from '../infra/bundling.ts';

/**
 * The esbuild options `NodejsFunction` derives from `b` (see aws-lambda-nodejs `buildEsbuildArgs`),
 * for the entries `{ name: entry }`, each written to `<outdir>/<name>/index.mjs`. One build of
 * several entries without code splitting writes the same files as one build per entry (each
 * entry is bundled on its own); esbuild just parses the shared modules once.
 */
export function esbuildOptionsFrom(b: BundlingOptions, entries: Readonly<Record<string, string>>, outdir: string): BuildOptions {
  return {
    entryPoints: { ...entries },
    bundle: true,
    splitting: false,
    platform: 'node',
    outdir,
    entryNames: '[name]/index',
    outExtension: { '.js': b.format === 'esm' ? '.mjs' : '.js' },
    absWorkingDir: PROJECT_ROOT,
    ...(b.target ? { target: b.target } : {}),
    ...(b.format ? { format: b.format as 'esm' | 'cjs' } : {}),
    ...(b.mainFields ? { mainFields: [...b.mainFields] } : {}),
    minify: b.minify ?? false,
    sourcemap: b.sourceMap ?? false,
    sourcesContent: b.sourcesContent ?? true,
    external: [...(b.externalModules ?? [])],
    ...(b.define ? { define: { ...b.define } } : {}),
    ...(b.banner ? { banner: { js: b.banner } } : {}),
    ...(b.keepNames ? { keepNames: true } : {}),
    metafile: true,
    logLevel: 'silent',
  };
}

/** The function folders CDK bundles: every `functions/<name>/handler.ts`. */
export async function functionNames(): Promise<string[]> {
  const dir = join(PROJECT_ROOT, 'functions');
  const names: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    try {
      if ((await stat(functionEntry(name))).isFile()) names.push(name);
    } catch {
      // a folder without handler.ts is not a function
    }
  }
  return names;
}

export interface BundleResult {
  readonly name: string;
  /** The bundle file (`<outDir>/<name>/index.mjs`). */
  readonly file: string;
  /** Bytes of index.mjs: what the runtime loads. */
  readonly bundleBytes: number;
  /** Bytes of the source map shipped beside it (read only when a stack is logged: shared/stack.ts). */
  readonly sourceMapBytes: number;
  /** The packages (or `(project)`) contributing most bytes to the bundle, largest first. */
  readonly topPackages: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  /** Bytes per package, or per module of ours (`shared/config.ts`): every contributor, largest first. */
  readonly contributors: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  /** Wall time of the one build of every bundle. */
  readonly buildMs: number;
}

/** `node_modules/@aws-sdk/client-dynamodb/dist-es/x.js` → `@aws-sdk/client-dynamodb`. */
export function packageOf(input: string): string {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return '(project)';
  const rest = input.slice(at + 'node_modules/'.length).split('/');
  return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
}

/** The package an input belongs to, or the input itself when it is a module of ours (`shared/config.ts`). */
export function contributorOf(input: string): string {
  const pkg = packageOf(input);
  return pkg === '(project)' ? input : pkg;
}

/** Bytes in one output file per package (or per `by` of each input), from esbuild's metafile. */
export function bytesByPackage(output: Metafile['outputs'][string] | undefined, by: (input: string) => string = packageOf): Array<{ name: string; bytes: number }> {
  const sums = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const pkg = by(input);
    sums.set(pkg, (sums.get(pkg) ?? 0) + bytesInOutput);
  }
  return [...sums.entries()].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/**
 * What a bundle carries beyond the baseline's: per contributor, its bytes minus the baseline's
 * bytes of the same contributor (a package both bundle, in part or whole), largest first; only
 * contributors adding at least `minBytes`.
 */
export function beyondBaseline(
  contributors: ReadonlyArray<{ readonly name: string; readonly bytes: number }>,
  baseline: ReadonlyArray<{ readonly name: string; readonly bytes: number }>,
  minBytes = 1,
): Array<{ name: string; bytes: number }> {
  const base = new Map(baseline.map((c) => [c.name, c.bytes]));
  return contributors
    .map((c) => ({ name: c.name, bytes: c.bytes - (base.get(c.name) ?? 0) }))
    .filter((c) => c.bytes >= minBytes)
    .sort((a, b) => b.bytes - a.bytes);
}

/**
 * Makes the packages the bundles leave external (the AWS SDK, which the Lambda runtime provides)
 * importable from `<outDir>/<name>/index.mjs` wherever `outDir` is: `<outDir>/node_modules`
 * links to the repository's, which holds the versions the lockfile pins.
 */
export async function linkNodeModules(outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  try {
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(outDir, 'node_modules'), 'dir');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * Bundles every function, and the `extra` entries, into `<outDir>/<name>/index.mjs` with the
 * options CDK uses; the external packages resolve from the repository's node_modules.
 */
export async function bundleAll(outDir: string, extra: Readonly<Record<string, string>> = {}): Promise<Map<string, BundleResult>> {
  const entries: Record<string, string> = {};
  for (const name of await functionNames()) entries[name] = functionEntry(name);
  Object.assign(entries, extra);
  const t0 = performance.now();
  const result = await build(esbuildOptionsFrom(bundlingOptions(packageVersion()), entries, outDir));
  const buildMs = performance.now() - t0;
  await linkNodeModules(outDir);
  const outputs = result.metafile!.outputs;
  const results = new Map<string, BundleResult>();
  for (const name of Object.keys(entries)) {
    const file = join(outDir, name, 'index.mjs');
    const [js, map] = await Promise.all([stat(file), stat(`${file}.map`).catch(() => undefined)]);
    const output = Object.entries(outputs).find(([path]) => path.endsWith(`${name}/index.mjs`))?.[1];
    results.set(name, {
      name,
      file,
      bundleBytes: js.size,
      sourceMapBytes: map?.size ?? 0,
      topPackages: bytesByPackage(output).slice(0, 6),
      contributors: bytesByPackage(output, contributorOf),
      buildMs,
    });
  }
  return results;
}
