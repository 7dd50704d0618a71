/**
 * A Vitest reporter (named in vitest.config.ts besides the default one): at the end of a run of
 * more than one file it prints the ten slowest test files, with their project and time (setup,
 * import, tests and hooks; files run in parallel, so the times add up to more than the run), so a
 * change that slows the suite shows where.
 */
import type { Reporter, TestModule, Vitest } from 'vitest/node';

const SHOWN = 10;

export interface FileTiming {
  readonly project: string;
  readonly file: string;
  readonly ms: number;
}

/** The `n` slowest files, slowest first (ties by name, so the list is stable). */
export function slowest(timings: readonly FileTiming[], n = SHOWN): FileTiming[] {
  return [...timings].sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file)).slice(0, n);
}

export function formatSlowest(top: readonly FileTiming[], total: number): string {
  const width = Math.max(0, ...top.map((t) => `${t.project} ${t.file}`.length));
  return [
    '',
    `Slowest ${top.length} of ${total} test files:`,
    ...top.map((t) => `  ${`${t.project} ${t.file}`.padEnd(width)} ${(t.ms / 1000).toFixed(1).padStart(7)} s`),
    '',
  ].join('\n');
}

/** A file's own time: its environment, harness, setup file and import, then its tests and hooks. */
function fileMs(m: TestModule): number {
  const d = m.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
}

export default class SlowestFilesReporter implements Reporter {
  private log: (text: string) => void = (text) => console.info(text);
  private root = '';

  onInit(vitest: Vitest): void {
    this.log = (text) => vitest.logger.log(text);
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (testModules.length < 2) return;
    const timings = testModules.map((m) => ({
      project: m.project.name,
      file: m.moduleId.startsWith(`${this.root}/`) ? m.moduleId.slice(this.root.length + 1) : m.moduleId,
      ms: fileMs(m),
    }));
    this.log(formatSlowest(slowest(timings), timings.length));
  }
}
