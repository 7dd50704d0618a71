import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every module of these folders, recursively (a function's entry is `handler.ts` by convention). */
function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? modules(join(dir, e.name)) : /\.(ts|mjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('module names', () => {
  it('gives no two modules the same file name, so a name says which module it is', () => {
    const files = ['shared', 'functions', 'local', 'infra', 'bench', 'openapi'].flatMap(modules).filter((f) => basename(f) !== 'handler.ts');
    const byName = new Map<string, string[]>();
    for (const f of files) byName.set(basename(f).replace(/\.mjs$/, '.ts'), [...(byName.get(basename(f).replace(/\.mjs$/, '.ts')) ?? []), f]);
    const shared = [...byName.values()].filter((paths) => paths.length > 1);
    // The aggregation worker's .mjs start file and its .ts module are one module in two files.
    expect(shared.filter((paths) => !paths.every((p) => p.includes('aggregate-worker')))).toEqual([]);
    expect(files.length).toBeGreaterThan(100);
  });
});
