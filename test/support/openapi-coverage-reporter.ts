/**
 * A Vitest reporter (named in vitest.config.ts besides the default one): at the end of a run it
 * adds up what every test file's call helpers validated against the OpenAPI document (the
 * `openapiCoverage` meta that `openapi-coverage-setup.ts` attaches to each file, whichever worker
 * process ran it), prints the responses validated per operation and the operations no test
 * exercised, and writes the same as `test-results/openapi-coverage.json`. A run of projects
 * without that setup file (unit, infra) prints nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import type { OpenApiCoverage } from './openapi-coverage-setup.ts';
import { OpenApiValidator, type Mismatch } from './openapi-validator.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COLUMNS = 3;

export interface CoverageSummary {
  readonly files: number;
  readonly total: number;
  /** operationId → responses validated, sorted by operationId. */
  readonly validated: Readonly<Record<string, number>>;
  /** `operationId (METHOD path)` of each operation no response exercised, in document order. */
  readonly unexercised: readonly string[];
  readonly mismatches: readonly Mismatch[];
}

/** Adds up the files' counts and lists the document's operations none of them exercised. */
export function summarize(
  files: readonly OpenApiCoverage[],
  operations: ReadonlyArray<{ operationId: string; method: string; path: string }>,
): CoverageSummary {
  const counts = new Map<string, number>();
  for (const f of files) for (const [id, n] of Object.entries(f.validated)) counts.set(id, (counts.get(id) ?? 0) + n);
  return {
    files: files.length,
    total: [...counts.values()].reduce((a, b) => a + b, 0),
    validated: Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b))),
    unexercised: operations.filter((o) => !counts.has(o.operationId)).map((o) => `${o.operationId} (${o.method.toUpperCase()} ${o.path})`),
    mismatches: files.flatMap((f) => f.mismatches),
  };
}

/** The summary as the run prints it: a table of counts in columns, then the unexercised operations. */
export function formatSummary(s: CoverageSummary, operationCount: number): string {
  const rows = Object.entries(s.validated);
  const width = Math.max(0, ...rows.map(([id]) => id.length));
  const cells = rows.map(([id, n]) => `${id.padEnd(width)} ${String(n).padStart(6)}`);
  const lines: string[] = [];
  for (let i = 0; i < cells.length; i += COLUMNS) lines.push(`  ${cells.slice(i, i + COLUMNS).join('   ')}`);
  return [
    '',
    `OpenAPI: ${s.total} responses in ${s.files} test files validated against docs/openapi.json, ` +
      `${rows.length} of ${operationCount} operations exercised, ${s.mismatches.length} mismatches.`,
    'Responses validated per operation:',
    ...lines,
    `Operations no test exercised (${s.unexercised.length}):`,
    ...s.unexercised.map((u) => `  ${u}`),
    ...(s.mismatches.length ? ['Mismatches:', ...s.mismatches.map((x) => `  ${x.operationId} ${x.request} → ${x.status}: ${x.problem}`)] : []),
    '',
  ].join('\n');
}

export default class OpenApiCoverageReporter implements Reporter {
  private log: (text: string) => void = (text) => console.info(text);

  onInit(vitest: Vitest): void {
    this.log = (text) => vitest.logger.log(text);
  }

  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    const files = testModules.flatMap((m) => m.meta().openapiCoverage ?? []);
    if (files.length === 0) return;
    const operations = new OpenApiValidator().operations();
    const summary = summarize(files, operations);
    this.log(formatSummary(summary, operations.length));
    const out = join(REPO_ROOT, 'test-results');
    await mkdir(out, { recursive: true });
    await writeFile(join(out, 'openapi-coverage.json'), `${JSON.stringify(summary, null, 2)}\n`);
  }
}
