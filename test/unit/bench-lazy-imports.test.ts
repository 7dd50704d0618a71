/**
 * The bench's measure of what each `import()` saves (bench/lazy-imports.ts): finding the calls,
 * making one of them static in a real esbuild build, and the section of docs/cost.md.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMarkdown, lazyImportsMarkdown } from '../../bench/cost.ts';
import { breaksBytesGoal, findLazyImports, lazyImportsIn, staticImportPlugin } from '../../bench/lazy-imports.ts';
import { LAZY_IMPORT_MIN_BYTES, type LazyImportFigures } from '../../bench/results.ts';

describe('lazyImportsIn', () => {
  it('finds the import() calls with a literal specifier, with their lines, and skips comments and type queries', () => {
    const source = [
      "/** Loaded with `import('./not-a-call.ts')` on first use. */",
      "// import('./commented.ts')",
      "type T = typeof import('./types-only.ts');",
      "const a = onFirstUse(() => import('./a.ts'));",
      'const b = () => import("@scope/pkg").then((m) => m.x);',
      'const c = (name: string) => import(name);',
    ].join('\n');
    expect(lazyImportsIn(source).map(({ line, specifier }) => ({ line, specifier }))).toEqual([
      { line: 4, specifier: './a.ts' },
      { line: 5, specifier: '@scope/pkg' },
    ]);
  });

  it('lists the calls of the functions\' code, each file under shared/ or functions/', async () => {
    const sites = await findLazyImports();
    expect(sites.length).toBeGreaterThan(0);
    for (const s of sites) expect(s.file).toMatch(/^(shared|functions)\/.+\.ts$/);
    expect(sites).toContainEqual(expect.objectContaining({ file: 'shared/metrics.ts', specifier: '@aws-lambda-powertools/metrics' }));
  });
});

describe('staticImportPlugin', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lazy-imports-'));
    await writeFile(join(dir, 'entry.ts'), "export const load = () => import('./big.ts').then((m) => m.big);\n");
    await writeFile(join(dir, 'big.ts'), `export const big = ${JSON.stringify('x'.repeat(2000))};\n`);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const entryCode = async (plugins: Parameters<typeof build>[0]['plugins']) => {
    const r = await build({ entryPoints: [join(dir, 'entry.ts')], bundle: true, splitting: true, format: 'esm', outdir: join(dir, 'out'), write: false, plugins, metafile: true });
    const entry = Object.entries(r.metafile.outputs).find(([, o]) => o.entryPoint)!;
    return { entry: entry[1], files: Object.keys(r.metafile.outputs).length };
  };

  it('makes the one call static: the module it loads joins the entry instead of a chunk of its own', async () => {
    const lazy = await entryCode([]);
    const made = await entryCode([staticImportPlugin({ file: 'entry.ts', line: 1, specifier: './big.ts' }, dir)]);
    expect(Object.keys(lazy.entry.inputs).some((i) => i.endsWith('big.ts'))).toBe(false);
    expect(Object.keys(made.entry.inputs).some((i) => i.endsWith('big.ts'))).toBe(true);
    expect(made.files).toBeLessThan(lazy.files);
    expect(made.entry.bytes - lazy.entry.bytes).toBeGreaterThan(2000);
  });

  it('leaves other files and other specifiers as they are', async () => {
    const other = await entryCode([staticImportPlugin({ file: 'entry.ts', line: 1, specifier: './other.ts' }, dir)]);
    expect(Object.keys(other.entry.inputs).some((i) => i.endsWith('big.ts'))).toBe(false);
  });
});

describe('the "Lazy loading" section of docs/cost.md', () => {
  const site = (file: string, startBytes: number, withModuleBytes = 0, breaksBytesGoal = false): LazyImportFigures => ({
    file,
    line: 7,
    specifier: './x.ts',
    savings: [{ family: 'people', startBytes, startFiles: 0, withModuleBytes, breaksBytesGoal }],
    maxStartBytes: startBytes,
    maxWithModuleBytes: withModuleBytes,
    pays: Math.max(startBytes, withModuleBytes) >= LAZY_IMPORT_MIN_BYTES || breaksBytesGoal,
  });

  it('lists every site with what it saves, and names those that save too little', () => {
    const md = lazyImportsMarkdown([site('shared/a.ts', 33_236), site('shared/b.ts', 61, 151_246), site('shared/c.ts', 813), site('shared/d.ts', 7_038, 0, true)]).join('\n');
    expect(md).toContain('people 7.0 KB, +0, over the goal if static |');
    expect(md).not.toContain('`shared/d.ts:7`.');
    expect(md).toContain('## Lazy loading');
    expect(md).toContain('| `shared/a.ts:7` | `./x.ts` | 33.2 KB | 0.0 KB | people 33.2 KB, +0 |');
    expect(md).toContain('people 0.1 KB (first load 151.2 KB), +0');
    expect(md).toContain('to be made static: `shared/c.ts:7`.');
    expect(md).not.toContain('`shared/a.ts:7`.');
  });

  it('is left out of the document when nothing was measured', () => {
    const md = costMarkdown({ generatedAt: 'x', mode: 'quick', loadavg: [0], operations: [], fanoutMessageBytes: null, notes: [] });
    expect(md).not.toContain('## Lazy loading');
    expect(costMarkdown({ generatedAt: 'x', mode: 'quick', loadavg: [0], operations: [], fanoutMessageBytes: null, lazyImports: [site('shared/a.ts', 20_000)], notes: [] })).toContain('## Lazy loading');
  });
});

describe('breaksBytesGoal', () => {
  it('is true only where the start code meets the limit with the import lazy and not with it static', () => {
    expect(breaksBytesGoal(340_000, 347_000, 346_265)).toBe(true);
    expect(breaksBytesGoal(340_000, 346_265, 346_265)).toBe(false);
    // A function already over the limit is not broken by the import.
    expect(breaksBytesGoal(348_000, 355_000, 346_265)).toBe(false);
    expect(breaksBytesGoal(340_000, 347_000, undefined)).toBe(false);
  });
});
