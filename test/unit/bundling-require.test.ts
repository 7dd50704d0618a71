/**
 * The functions ship as ESM without a `require` banner (infra/bundling.ts): a bundled module that
 * would call `require` at run time must fail the build, not the first request in Lambda.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFunctionSync, functionBundling } from '../../infra/bundling.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-require-'));
  // A CommonJS module requiring a Node builtin: esbuild leaves that require to run time.
  await writeFile(join(dir, 'legacy.cjs'), "module.exports = require('node:os').EOL;\n");
  await writeFile(join(dir, 'uses-legacy.ts'), "import eol from './legacy.cjs';\nexport const handler = async () => eol;\n");
  await writeFile(join(dir, 'plain.ts'), "import { EOL } from 'node:os';\nexport const handler = async () => EOL;\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('bundleFunctionSync', () => {
  it('refuses a bundle in which a module calls require at run time, and writes nothing', async () => {
    const out = join(dir, 'out-legacy');
    expect(() => bundleFunctionSync(functionBundling(join(dir, 'uses-legacy.ts'), '0.0.0'), out)).toThrow(/calls require\(\) at run time/);
    await expect(readdir(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes the bundle of a module that imports what it uses', async () => {
    const out = join(dir, 'out-plain');
    bundleFunctionSync(functionBundling(join(dir, 'plain.ts'), '0.0.0'), out);
    expect(await readdir(out)).toEqual(expect.arrayContaining(['index.mjs', 'index.mjs.map']));
    const mod = (await import(join(out, 'index.mjs'))) as { handler: () => Promise<string> };
    expect(await mod.handler()).toBe('\n');
  });
});
