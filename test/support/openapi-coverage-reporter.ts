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
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { OpenApiValidator, type Mismatch } from './openapi-validator.ts';

const REPO_ROOT = new URL('../..', import.meta.url).pathname;
const COLUMNS = 3;

export default class OpenApiCoverageReporter implements Reporter {
  private log: (text: string) => void = (text) => console.info(text);

  onInit(vitest: Vitest): void {
    this.log = (text) => vitest.logger.log(text);
  }

  async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    const validated = new Map<string, number>();
    const mismatches: Mismatch[] = [];
    let files = 0;
    for (const m of testModules) {
      const coverage = m.meta().openapiCoverage;
      if (!coverage) continue;
      files++;
      for (const [id, n] of Object.entries(coverage.validated)) validated.set(id, (validated.get(id) ?? 0) + n);
      mismatches.push(...coverage.mismatches);
    }
    if (files === 0) return;

    const operations = new OpenApiValidator().operations();
    const unexercised = operations.filter((o) => !validated.has(o.operationId)).map((o) => `${o.operationId} (${o.method.toUpperCase()} ${o.path})`);
    const total = [...validated.values()].reduce((a, b) => a + b, 0);
    const sorted = [...validated].sort(([a], [b]) => a.localeCompare(b));
    const width = Math.max(0, ...sorted.map(([id]) => id.length));
    const cells = sorted.map(([id, n]) => `${id.padEnd(width)} ${String(n).padStart(6)}`);
    const lines: string[] = [];
    for (let i = 0; i < cells.length; i += COLUMNS) lines.push(`  ${cells.slice(i, i + COLUMNS).join('   ')}`);
    this.log(
      [
        '',
        `OpenAPI: ${total} responses in ${files} test files validated against docs/openapi.json, ` +
          `${validated.size} of ${operations.length} operations exercised, ${mismatches.length} mismatches.`,
        'Responses validated per operation:',
        ...lines,
        `Operations no test exercised (${unexercised.length}):`,
        ...unexercised.map((u) => `  ${u}`),
        ...(mismatches.length ? ['Mismatches:', ...mismatches.map((x) => `  ${x.operationId} ${x.request} → ${x.status}: ${x.problem}`)] : []),
        '',
      ].join('\n'),
    );
    const out = join(REPO_ROOT, 'test-results');
    await mkdir(out, { recursive: true });
    await writeFile(
      join(out, 'openapi-coverage.json'),
      `${JSON.stringify({ files, total, validated: Object.fromEntries(sorted), unexercised, mismatches }, null, 2)}\n`,
    );
  }
}
