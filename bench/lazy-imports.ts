/**
 * What each `import()` of the functions' code saves their cold starts: every function is built
 * with the deployed options (infra/bundling.ts) as it is, and again with one `import()` made a
 * static import (an esbuild plugin rewrites that one call site while the build loads its file),
 * for every site the function's build reaches. The difference of the bytes and files a cold start
 * loads (`loadedFiles` of bench/bundle.ts) is what the lazy import saves there. Issue #35 keeps an
 * `import()` only where it saves at least {@link LAZY_IMPORT_MIN_BYTES} of a family's start code
 * (or 2 ms of its cold start), or where making it static would carry a function over the bench's
 * bundle-size goal that it meets (issue #35: every goal met before is still met); the figures are printed by the bench and written in docs/cost.md,
 * never in code comments, where they would go stale.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { PROJECT_ROOT, esbuildOptions, functionBundling, functionEntry, packageVersion } from '../infra/bundling.ts';
import { functionNames, loadedFiles } from './bundle.ts';
import { LAZY_IMPORT_MIN_BYTES, type LazyImportFigures, type LazyImportSaving, type LazyImportSite } from './results.ts';

/** The folders whose modules the functions bundle. */
const SOURCE_FOLDERS = ['shared', 'functions'];

const CALL = /(?<!typeof\s)\bimport\(\s*(['"])([^'"]+)\1\s*\)/g;

/** The `import()` calls with a literal specifier in `source` (comments skipped), with their lines. */
export function lazyImportsIn(source: string): Array<{ line: number; specifier: string; index: number }> {
  const out: Array<{ line: number; specifier: string; index: number }> = [];
  const lines = source.split('\n');
  let offset = 0;
  lines.forEach((text, i) => {
    const trimmed = text.trimStart();
    if (!trimmed.startsWith('*') && !trimmed.startsWith('//') && !trimmed.startsWith('/*')) {
      for (const m of text.matchAll(CALL)) out.push({ line: i + 1, specifier: m[2]!, index: offset + m.index });
    }
    offset += text.length + 1;
  });
  return out;
}

/** Every `import()` with a literal specifier in the functions' code (shared/ and functions/). */
export async function findLazyImports(root = PROJECT_ROOT): Promise<LazyImportSite[]> {
  const sites: LazyImportSite[] = [];
  for (const folder of SOURCE_FOLDERS) {
    for (const entry of (await readdir(join(root, folder), { recursive: true })).sort()) {
      if (!entry.endsWith('.ts')) continue;
      const file = join(folder, entry);
      const source = await readFile(join(root, file), 'utf8');
      for (const { line, specifier } of lazyImportsIn(source)) sites.push({ file, line, specifier });
    }
  }
  return sites;
}

/**
 * An esbuild plugin that makes the `import()` calls of `site.file` with `site.specifier` static:
 * `import('x')` becomes `Promise.resolve(ns)` with `import * as ns from 'x'` on top, the same
 * module namespace the call would answer, loaded with the module instead of on first use.
 */
export function staticImportPlugin(site: LazyImportSite, root = PROJECT_ROOT): Plugin {
  const path = resolve(root, site.file);
  return {
    name: 'static-import',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path !== path) return undefined;
        const source = await readFile(path, 'utf8');
        let rewritten = source;
        for (const call of lazyImportsIn(source).filter((c) => c.specifier === site.specifier).reverse()) {
          const end = source.indexOf(')', call.index) + 1;
          rewritten = `${rewritten.slice(0, call.index)}Promise.resolve(__staticImport)${rewritten.slice(end)}`;
        }
        return { contents: `import * as __staticImport from ${JSON.stringify(site.specifier)};\n${rewritten}`, loader: 'ts', resolveDir: join(path, '..') };
      });
    },
  };
}

/** Whether start code within `limit` with an import lazy goes over it with the import static. */
export function breaksBytesGoal(lazyBytes: number, staticBytes: number, limit: number | undefined): boolean {
  return limit !== undefined && lazyBytes <= limit && staticBytes > limit;
}

interface StartCode {
  readonly bytes: number;
  readonly files: number;
  readonly inputs: ReadonlySet<string>;
  /** Bytes read beyond the start code by the first load of the chunk holding `module`. */
  readonly withModule: (module: string) => number;
}

async function startCode(name: string, version: string, plugins: Plugin[]): Promise<StartCode> {
  const options = esbuildOptions(functionBundling(functionEntry(name), version), join(PROJECT_ROOT, '.lazy-imports', name));
  const result = await build({ ...options, plugins, write: false });
  const meta: Metafile = result.metafile!;
  const files = loadedFiles(meta);
  const atStart = new Set(files.atStart);
  const code = Object.entries(meta.outputs).filter(([p]) => p.endsWith('.mjs'));
  const inputs = new Set(code.flatMap(([, o]) => Object.keys(o.inputs)));
  const withModule = (module: string): number => {
    const holder = code.find(([, o]) => module in o.inputs)?.[0];
    if (!holder || atStart.has(holder)) return 0;
    const seen = new Set<string>();
    const todo = [holder];
    while (todo.length) {
      const file = todo.pop()!;
      if (seen.has(file) || atStart.has(file)) continue;
      seen.add(file);
      for (const i of meta.outputs[file]!.imports) if (i.kind === 'import-statement' && !i.external && meta.outputs[i.path]) todo.push(i.path);
    }
    return [...seen].reduce((sum, p) => sum + meta.outputs[p]!.bytes, 0);
  };
  return { bytes: files.atStart.reduce((sum, p) => sum + meta.outputs[p]!.bytes, 0), files: files.atStart.length, inputs, withModule };
}

/**
 * Builds every function as deployed, then once per `import()` site its build reaches with that
 * site made static; `parallel` builds at once.
 */
export async function measureLazyImports(
  opts: { readonly parallel?: number; readonly families?: readonly string[]; /** The start bytes a function may load (the bench's goal). */ readonly maxStartBytes?: number } = {},
): Promise<LazyImportFigures[]> {
  const version = packageVersion();
  const sites = await findLazyImports();
  const families = opts.families ?? (await functionNames());
  const lazy = new Map(await Promise.all(families.map(async (f) => [f, await startCode(f, version, [])] as const)));
  const jobs: Array<{ site: LazyImportSite; family: string }> = [];
  for (const site of sites) for (const family of families) if (lazy.get(family)!.inputs.has(site.file)) jobs.push({ site, family });
  const savings = new Map<LazyImportSite, LazyImportSaving[]>(sites.map((s) => [s, []]));
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.parallel ?? 4 }, async () => {
      while (next < jobs.length) {
        const { site, family } = jobs[next++]!;
        const made = await startCode(family, version, [staticImportPlugin(site)]);
        const was = lazy.get(family)!;
        savings.get(site)!.push({
          family,
          startBytes: made.bytes - was.bytes,
          startFiles: made.files - was.files,
          withModuleBytes: made.withModule(site.file) - was.withModule(site.file),
          breaksBytesGoal: breaksBytesGoal(was.bytes, made.bytes, opts.maxStartBytes),
        });
      }
    }),
  );
  return sites.map((site) => {
    const s = savings.get(site)!.sort((a, b) => b.startBytes - a.startBytes || a.family.localeCompare(b.family));
    const maxStartBytes = Math.max(0, ...s.map((x) => x.startBytes));
    const maxWithModuleBytes = Math.max(0, ...s.map((x) => x.withModuleBytes));
    return { ...site, savings: s, maxStartBytes, maxWithModuleBytes, pays: Math.max(maxStartBytes, maxWithModuleBytes) >= LAZY_IMPORT_MIN_BYTES || s.some((x) => x.breaksBytesGoal) };
  });
}

/** One line per site: where, what, the largest saving and the functions it saves. */
function describeLazyImports(figures: readonly LazyImportFigures[]): string {
  return figures
    .map((f) => {
      const where = `${f.file}:${f.line} import('${f.specifier}')`;
      const per = f.savings.map((s) => `${s.family} ${s.startBytes} B${s.withModuleBytes ? ` (with its module ${s.withModuleBytes} B)` : ''}, ${s.startFiles >= 0 ? '+' : ''}${s.startFiles} files${s.breaksBytesGoal ? ', over the size goal if static' : ''}`).join('; ');
      return `${f.pays ? 'pays ' : 'folds'} ${where}: ${per || 'in no function'}`;
    })
    .join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(PROJECT_ROOT, 'bench', 'lazy-imports.ts')) {
  const t0 = performance.now();
  const figures = await measureLazyImports({ maxStartBytes: Number(process.argv[2]) || undefined });
  process.stdout.write(`${describeLazyImports(figures)}\n(${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
}
