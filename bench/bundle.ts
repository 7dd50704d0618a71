/**
 * Bundles each function as CDK ships it: `esbuildOptions` of infra/bundling.ts, the same options
 * the stack's local bundler builds every code asset with, one build per function (`index.mjs` and
 * the chunks it loads), with esbuild's metafile to say which packages make up the bytes.
 */
import { mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { HANDLER_FILE, PROJECT_ROOT, checkNoDynamicRequire, esbuildOptions, functionBundling, functionEntry, packageVersion, workerOptions } from '../infra/bundling.ts';

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
  /**
   * Bytes a cold start loads: `index.mjs` and every chunk it imports statically, transitively.
   * The chunks reached only through `import()` are read when first called, not at start.
   */
  readonly bundleBytes: number;
  /** Bytes of all the code the function ships: every `.mjs` of its asset, lazily loaded chunks included. */
  readonly assetBytes: number;
  /**
   * How many code files a cold start loads (`index.mjs` and its static imports): each costs the
   * ESM loader a read, a compile and a link of its own, whatever its size.
   */
  readonly startFiles: number;
  /** Bytes of the source maps shipped beside the code (read only when a stack is logged: shared/source-mapped-stack.ts). */
  readonly sourceMapBytes: number;
  /** The packages (or `(project)`) contributing most bytes of what a cold start loads, largest first. */
  readonly topPackages: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  /** Bytes a cold start loads per package, or per module of ours (`shared/config.ts`): every contributor, largest first. */
  readonly contributors: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  /** Wall time of building every bundle. */
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

type Output = Metafile['outputs'][string];

/** Bytes in output files per package (or per `by` of each input), from esbuild's metafile. */
export function bytesByPackage(outputs: readonly Output[], by: (input: string) => string = packageOf): Array<{ name: string; bytes: number }> {
  const sums = new Map<string, number>();
  for (const output of outputs) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const pkg = by(input);
      sums.set(pkg, (sums.get(pkg) ?? 0) + bytesInOutput);
    }
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
async function linkNodeModules(outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  try {
    await symlink(join(PROJECT_ROOT, 'node_modules'), join(outDir, 'node_modules'), 'dir');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** The code files of one build, split into what a cold start loads and what it leaves for later. */
export interface LoadedFiles {
  /** Output paths (as the metafile names them) of `index.mjs` and its static imports, transitively. */
  readonly atStart: readonly string[];
  /** Every other code file: chunks reached only through `import()`. */
  readonly lazy: readonly string[];
}

/**
 * Which code files of a one-function build a cold start loads: the handler file, and every chunk
 * it imports with an `import` statement, transitively (the ESM loader reads them before the
 * handler runs); the chunks only `import()` reaches are read when first called.
 */
export function loadedFiles(metafile: Metafile): LoadedFiles {
  const outputs = metafile.outputs;
  const code = Object.keys(outputs).filter((p) => p.endsWith('.mjs') || p.endsWith('.js'));
  const entry = code.find((p) => p === HANDLER_FILE || p.endsWith(`/${HANDLER_FILE}`));
  if (!entry) throw new Error(`no ${HANDLER_FILE} among the outputs: ${code.join(', ')}`);
  const atStart = new Set<string>();
  const todo = [entry];
  while (todo.length) {
    const file = todo.pop()!;
    if (atStart.has(file)) continue;
    atStart.add(file);
    for (const i of outputs[file]!.imports) if (i.kind === 'import-statement' && !i.external && outputs[i.path]) todo.push(i.path);
  }
  return { atStart: [...atStart], lazy: code.filter((p) => !atStart.has(p)) };
}

/**
 * Bundles every function, and the `extra` entries, into `<outDir>/<name>/` with the options CDK
 * uses (one build per function, run side by side); the external packages resolve from the
 * repository's node_modules.
 */
export async function bundleAll(outDir: string, extra: Readonly<Record<string, string>> = {}): Promise<Map<string, BundleResult>> {
  const entries: Record<string, string> = {};
  for (const name of await functionNames()) entries[name] = functionEntry(name);
  Object.assign(entries, extra);
  const version = packageVersion();
  const t0 = performance.now();
  const builds = await Promise.all(
    Object.entries(entries).map(async ([name, entry]) => {
      const dir = join(outDir, name);
      const bundling = functionBundling(entry, version);
      const result = await build({ ...esbuildOptions(bundling, dir), write: false });
      // The family's worker threads (the events family's aggregation), beside its code as CDK ships them.
      const workers = await Promise.all(workerOptions(bundling, dir).map((o) => build({ ...o, write: false })));
      const outputs = [result, ...workers].flatMap((r) => r.outputFiles);
      checkNoDynamicRequire(outputs);
      for (const f of outputs) {
        await mkdir(dirname(f.path), { recursive: true });
        await writeFile(f.path, f.contents);
      }
      return { name, dir, metafile: result.metafile! };
    }),
  );
  const buildMs = performance.now() - t0;
  await linkNodeModules(outDir);
  const results = new Map<string, BundleResult>();
  for (const { name, dir, metafile } of builds) {
    const files = loadedFiles(metafile);
    const bytesOf = (paths: readonly string[]) => paths.reduce((sum, p) => sum + metafile.outputs[p]!.bytes, 0);
    const maps = Object.entries(metafile.outputs).filter(([p]) => p.endsWith('.map'));
    const atStart = files.atStart.map((p) => metafile.outputs[p]!);
    results.set(name, {
      name,
      file: join(dir, HANDLER_FILE),
      bundleBytes: bytesOf(files.atStart),
      assetBytes: bytesOf([...files.atStart, ...files.lazy]),
      startFiles: files.atStart.length,
      sourceMapBytes: maps.reduce((sum, [, o]) => sum + o.bytes, 0),
      topPackages: bytesByPackage(atStart).slice(0, 6),
      contributors: bytesByPackage(atStart, contributorOf),
      buildMs,
    });
  }
  return results;
}
