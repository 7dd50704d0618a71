/**
 * Stack traces that name the TypeScript, with the bundle's source map read only when a stack is
 * written. A function ships `index.mjs` and its chunks, each with its `.map` beside it. Node's
 * `--enable-source-maps` reads and decodes the whole map when the bundle loads: time of every cold
 * start, for the rare error. The functions run without it, and the stacks that reach the logs (the pipeline's
 * unexpected errors, the errors a non-HTTP function throws to the runtime) are mapped here, the
 * map read on the first of them.
 *
 * Outside a bundle (the local runtime, tests) there is no map beside the module, and stacks
 * already name the TypeScript: they are returned unchanged.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The URL of the file this code runs from: the bundle, once bundled. */
const SELF = import.meta.url;
/** The folder of the function's code: `index.mjs` and its chunks, each with its map beside it. */
const FOLDER = SELF.slice(0, SELF.lastIndexOf('/') + 1);

const maps = new Map<string, SourceMap | null>();

function mapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(FOLDER + file)}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      map = null;
    }
    maps.set(file, map);
  }
  return map;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
let frame: RegExp | undefined;

/**
 * `stack` with every position in the function's code files (`index.mjs` and the chunks beside it)
 * replaced by its source file, line and column.
 */
export function sourceMappedStack(stack: string | undefined): string | undefined {
  if (!stack || !stack.includes(FOLDER)) return stack;
  frame ??= new RegExp(`${escapeRegExp(FOLDER)}([\\w.-]+\\.m?js):(\\d+):(\\d+)`, 'g');
  return stack.replace(frame, (whole, file: string, line: string, column: string) => {
    const m = mapOf(file);
    if (!m) return whole;
    const e = m.findEntry(Number(line) - 1, Number(column) - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number };
    if (!e.originalSource || e.originalLine === undefined || e.originalColumn === undefined) return whole;
    // Sources are relative to the bundle's folder at build time: only the project path is useful.
    return `${e.originalSource.replace(/^(\.\.\/)+/, '')}:${e.originalLine + 1}:${e.originalColumn + 1}`;
  });
}

/** The same error, its stack mapped (see {@link sourceMappedStack}): for errors handed to the runtime. */
export function withSourceMappedStack<T>(err: T): T {
  if (err instanceof Error) {
    try {
      err.stack = sourceMappedStack(err.stack);
    } catch {
      // A read-only stack stays as it was.
    }
  }
  return err;
}
