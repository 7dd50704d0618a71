/**
 * Builds the operator console (console/src) with esbuild into content-hashed files: one script and
 * one stylesheet, and the `index.html` that names them. Nothing else is loaded by the page: no
 * CDN, no fonts, no scripts from other origins.
 *
 * In AWS the files ship beside the service function's code (infra/bundling.ts writes them at
 * synth); the local runtime builds them in memory on the first console request
 * (local/console-build.ts), so a change under console/src shows on the next start.
 */
import { build, buildSync, type BuildOptions, type OutputFile } from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_ASSET_PATH, consoleIndexHtml, type ConsoleFiles } from '#shared/console/console-assets.ts';

const SOURCE = fileURLToPath(new URL('./src/', import.meta.url));

function options(): BuildOptions & { write: false } {
  return {
    entryPoints: { console: join(SOURCE, 'main.ts') },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    entryNames: '[name]-[hash]',
    outdir: '/console-out',
    write: false,
    logLevel: 'silent',
  };
}

function assemble(outputs: readonly OutputFile[]): ConsoleFiles {
  const assets = new Map<string, Uint8Array>();
  for (const f of outputs) assets.set(basename(f.path), f.contents);
  const names = [...assets.keys()];
  const script = names.find((n) => n.endsWith('.js'));
  const style = names.find((n) => n.endsWith('.css'));
  if (!script || !style) throw new Error(`the console build made ${names.join(', ')}: a script and a stylesheet expected`);
  return { index: consoleIndexHtml(`${CONSOLE_ASSET_PATH}${script}`, `${CONSOLE_ASSET_PATH}${style}`), assets };
}

/** The console's files, built in memory. */
export async function buildConsole(): Promise<ConsoleFiles> {
  return assemble((await build(options())).outputFiles);
}

/** Builds the console into `dir` (`index.html` and `assets/`), synchronously (CDK's local bundling is). */
export function writeConsoleSync(dir: string): void {
  const files = assemble(buildSync(options()).outputFiles);
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), files.index);
  for (const [name, bytes] of files.assets) writeFileSync(join(dir, 'assets', name), bytes);
}
