/**
 * Logged stacks name the TypeScript although the functions run without --enable-source-maps: a
 * fixture bundled exactly as CDK bundles a function throws, and its stack is mapped with the map
 * shipped beside the bundle (shared/source-mapped-stack.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esbuildOptions, functionBundling, packageVersion, PROJECT_ROOT } from '../../infra/bundling.ts';
import { sourceMappedStack } from '#shared/source-mapped-stack.ts';

const run = promisify(execFile);
const IN_BUNDLE = /fixture\/index\.mjs:\d+:\d+/;
const IN_CHUNK = /fixture\/chunk-\w+\.mjs:\d+:\d+/;

// Loaded through import(): bundled into a chunk of its own. The throw is on line 3, column 9.
const LAZY = `export function failLater(): never {
  if (Date.now() > 0)
    throw new Error('later');
  return undefined as never;
}
`;

// The throw is on line 7 of the fixture, column 9.
const FIXTURE = `import { mappingErrorStacks } from ${JSON.stringify(join(PROJECT_ROOT, 'shared/error-stacks.ts'))};
import { sourceMappedStack } from ${JSON.stringify(join(PROJECT_ROOT, 'shared/source-mapped-stack.ts'))};

const pad = [1, 2, 3].map((n) => n * 2);
function failDeep(): never {
  if (pad.length > 0)
    throw new Error('boom');
  return undefined as never;
}
const handler = mappingErrorStacks(async () => failDeep());
try {
  failDeep();
} catch (err) {
  const stack = (err as Error).stack;
  const thrown = await handler().catch((e: Error) => e.stack);
  const lazy = await import('./stack-lazy.ts').then((m) => m.failLater()).catch((e: Error) => e.stack);
  process.stdout.write(JSON.stringify({ raw: stack, mapped: sourceMappedStack(stack), thrown, lazyRaw: lazy, lazy: sourceMappedStack(lazy) }));
}
`;

let dir: string;
let bundle: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-stack-'));
  const entry = join(dir, 'stack-fixture.ts');
  await writeFile(entry, FIXTURE);
  await writeFile(join(dir, 'stack-lazy.ts'), LAZY);
  await build(esbuildOptions(functionBundling(entry, packageVersion()), join(dir, 'out', 'fixture')));
  bundle = join(dir, 'out', 'fixture', 'index.mjs');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Stacks {
  raw: string;
  mapped: string;
  thrown: string;
  lazyRaw: string;
  lazy: string;
}

async function runBundle(): Promise<Stacks> {
  const { stdout } = await run(process.execPath, [bundle], { env: { ...process.env, NODE_OPTIONS: '' } });
  return JSON.parse(stdout) as Stacks;
}

describe('sourceMappedStack', () => {
  it('maps the frames of a minified bundle to the TypeScript, reading the map beside it', async () => {
    const out = await runBundle();
    // Unmapped, the stack names only positions in the minified bundle.
    expect(out.raw).toMatch(IN_BUNDLE);
    expect(out.raw).not.toContain('stack-fixture.ts');
    expect(out.mapped).toMatch(/stack-fixture\.ts:7:11\b/);
    expect(out.mapped).not.toMatch(IN_BUNDLE);
    // A handler's thrown error reaches the runtime mapped too.
    expect(out.thrown).toMatch(/stack-fixture\.ts:7:11\b/);
  });

  it('maps the frames of a lazily loaded chunk with the map beside that chunk', async () => {
    const out = await runBundle();
    expect(out.lazyRaw).toMatch(IN_CHUNK);
    expect(out.lazy).toMatch(/stack-lazy\.ts:3:11\b/);
    expect(out.lazy).not.toMatch(IN_CHUNK);
    // The frame of the entry that awaited it is mapped with the entry's own map.
    expect(out.lazy).not.toMatch(IN_BUNDLE);
  });

  it('leaves the stack as it is when no map ships beside the bundle', async () => {
    await rm(`${bundle}.map`);
    const out = await runBundle();
    expect(out.raw).toMatch(IN_BUNDLE);
    expect(out.mapped).toBe(out.raw);
  });

  it('leaves stacks outside a bundle unchanged', () => {
    const stack = new Error('here').stack;
    expect(stack).toContain('stack.test.ts');
    expect(sourceMappedStack(stack)).toBe(stack);
    expect(sourceMappedStack(undefined)).toBeUndefined();
  });
});
