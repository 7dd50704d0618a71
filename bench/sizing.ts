/**
 * The memory each function is deployed with, read from the stack's source: `SIZING` in
 * infra/gatehouse-stack.ts (per family) and the default of infra/gatehouse-function.ts. Neither
 * is exported (and importing the stack would build CDK constructs), so the source is parsed; a
 * change of shape there fails the benchmark loudly instead of pricing the wrong memory.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../infra/bundling.ts';

export interface Sizing {
  readonly defaultMb: number;
  readonly byFamily: Readonly<Record<string, number>>;
}

/** Parses the `SIZING` table and the default memory out of the two source texts. */
export function parseSizing(stackSource: string, functionSource: string): Sizing {
  const def = /memorySize:\s*props\.memorySize\s*\?\?\s*(\d+)/.exec(functionSource);
  if (!def) throw new Error('infra/gatehouse-function.ts: the default memorySize could not be found');
  const block = /const SIZING[^=]*=\s*\{([\s\S]*?)\n\};/.exec(stackSource);
  if (!block) throw new Error('infra/gatehouse-stack.ts: the SIZING table could not be found');
  const byFamily: Record<string, number> = {};
  for (const m of block[1]!.matchAll(/^\s*(\w+):\s*\{[^}]*memorySize:\s*(\d+)/gm)) byFamily[m[1]!] = Number(m[2]);
  return { defaultMb: Number(def[1]), byFamily };
}

export async function readSizing(): Promise<Sizing> {
  const [stack, fn] = await Promise.all([
    readFile(join(PROJECT_ROOT, 'infra', 'gatehouse-stack.ts'), 'utf8'),
    readFile(join(PROJECT_ROOT, 'infra', 'gatehouse-function.ts'), 'utf8'),
  ]);
  return parseSizing(stack, fn);
}

export const memoryOf = (s: Sizing, family: string): number => s.byFamily[family] ?? s.defaultMb;
