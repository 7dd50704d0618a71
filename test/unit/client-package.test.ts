/**
 * `@gatehouse/client` builds into what its package.json publishes: its own `tsc` (no Node types,
 * the DOM's fetch) writes JS and declarations, the JS imports nothing at run time but
 * openapi-fetch, a strict consumer typechecks against the declarations alone, and the built
 * module logs in through the fetch it is given.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE = join(ROOT, 'clients/typescript');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const run = promisify(execFile);

/** Runs tsc; rejects with its diagnostics. */
async function tsc(args: string[]): Promise<void> {
  try {
    await run(process.execPath, [TSC, ...args], { cwd: ROOT });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`tsc ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
}

let out = '';

beforeAll(async () => {
  // Under node_modules so the built module finds openapi-fetch as an installed package would.
  await mkdir(join(ROOT, 'node_modules/.cache'), { recursive: true });
  out = await mkdtemp(join(ROOT, 'node_modules/.cache/gatehouse-client-'));
  await tsc(['-p', join(PACKAGE, 'tsconfig.json'), '--outDir', out]);
}, 180_000);

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

describe('@gatehouse/client package', () => {
  it('builds the files its exports name, as JS and declarations', () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>>; files: string[]; dependencies: Record<string, string> };
    expect(pkg.files).toEqual(['dist']);
    for (const target of Object.values(pkg.exports['.']!)) expect(existsSync(join(out, target.replace(/^\.\/dist\//, ''))), target).toBe(true);
    expect(Object.keys(pkg.dependencies)).toEqual(['openapi-fetch']);
  });

  it('imports nothing at run time but openapi-fetch and its own modules', () => {
    const specifiers = readdirSync(out)
      .filter((f) => f.endsWith('.js'))
      .flatMap((f) => [...readFileSync(join(out, f), 'utf8').matchAll(/^(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!));
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => !s.startsWith('./'))).toEqual(['openapi-fetch']);
  });

  it('gives a strict consumer its types from the declarations alone', async () => {
    writeFileSync(
      join(out, 'consumer.ts'),
      `import { GatehouseClient, GatehouseError, type ListItem } from './index.js';
export async function keys(gh: GatehouseClient): Promise<string[]> {
  const found: string[] = [];
  for await (const person of gh.list('people', gh.instanceKey, { pageSize: 50 })) found.push(person.Key);
  const created = await gh.POST('/api/f/{folderKey}/people', { params: { path: { folderKey: gh.instanceKey } }, body: { CommonName: 'Ada' } });
  found.push(created.Key);
  return found;
}
export const codeOf = (e: unknown): string | undefined => (e instanceof GatehouseError ? e.code : undefined);
export const keyOf = (level: ListItem<'accesslevels'>): string => level.Key;
// @ts-expect-error not a collection that lists
export const wrong = (gh: GatehouseClient) => gh.list('sysinfo', 'x');
`,
    );
    writeFileSync(
      join(out, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [], strict: true, noEmit: true, skipLibCheck: false },
        files: ['consumer.ts'],
      }),
    );
    await tsc(['-p', join(out, 'tsconfig.json')]);
  }, 180_000);

  it('logs in with the built module through the fetch it is given', async () => {
    const built = (await import(pathToFileURL(join(out, 'index.js')).href)) as typeof import('../../clients/typescript/src/index.ts');
    const sent: string[] = [];
    const gh = await built.GatehouseClient.login({
      baseUrl: 'http://gatehouse.test',
      username: 'Acme\\admin',
      password: 'secret',
      fetch: async (request) => {
        sent.push(`${request.method} ${request.url} ${await request.text()}`);
        const tokens = { userName: 'Acme\\admin', access_token: 'a', token_type: 'bearer', refresh_token: 'r', expires_in: 60, '.issued': '', '.expires': '', instance: 'k' };
        return new Response(JSON.stringify(tokens), { headers: { 'content-type': 'application/json' } });
      },
    });
    expect(gh.instanceKey).toBe('k');
    expect(sent).toEqual(['POST http://gatehouse.test/token grant_type=password&client_id=consoleApp&username=Acme%5Cadmin&password=secret']);
  });
});
