/**
 * The operator console of the local runtime: built in memory by esbuild (console/build.ts) on
 * the first console request and kept for the process, so a change under console/src shows on
 * the next start with no build step. A failed build is not kept: the next request tries again.
 */
import type { ConsoleFiles } from '#shared/console/console-assets.ts';

let built: Promise<ConsoleFiles> | undefined;

export function localConsoleFiles(): Promise<ConsoleFiles> {
  if (!built) {
    built = import('../console/build.ts').then((m) => m.buildConsole());
    built.catch(() => {
      built = undefined;
    });
  }
  return built;
}
