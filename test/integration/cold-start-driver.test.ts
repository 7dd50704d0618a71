/**
 * The cold-start driver (bench/cold-start-driver.mjs) run as the bench runs it, in fresh `node`
 * processes, on small handlers that call a local HTTP server answering after a known delay: the
 * first request is split at its outgoing requests, and left unsplit where there is nothing to split.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phasesOf, runDriver, type DriverRun } from '../../bench/measure-cold-start.ts';

/** How long the server waits before it answers. */
const DELAY_MS = 40;

/** A handler module making `calls` GET requests to `url`, one after another, reading each body. */
const handlerSource = (url: string, calls: number) => `
import { get } from 'node:http';
const call = () => new Promise((resolve, reject) => {
  get(${JSON.stringify(url)}, (res) => {
    let body = '';
    res.on('data', (d) => (body += d));
    res.on('end', () => resolve(body));
  }).on('error', reject);
});
export const handler = async () => {
  let body = '';
  for (let i = 0; i < ${calls}; i++) body = await call().catch((err) => err.code);
  return { statusCode: 200, body };
};
`;

describe('the cold-start driver', () => {
  let server: Server;
  let dir: string;
  let eventFile: string;
  const files: Record<string, string> = {};
  const run = (name: string): Promise<DriverRun> => runDriver(files[name]!, eventFile, process.env);

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      setTimeout(() => res.end('answered'), DELAY_MS);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    // A port nobody listens on: the request goes out and is refused.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const refusedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`;
    await new Promise<void>((r) => closed.close(() => r()));
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-driver-'));
    eventFile = join(dir, 'event.json');
    await writeFile(eventFile, '{}');
    for (const [name, source] of Object.entries({
      one: handlerSource(url, 1),
      two: handlerSource(url, 2),
      none: handlerSource(url, 0),
      refused: handlerSource(refusedUrl, 1),
    })) {
      files[name] = join(dir, `${name}.mjs`);
      await writeFile(files[name], source);
    }
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  it('splits the first request at its one request out: the wait holds the answer', async () => {
    const r = await run('one');
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(200);
    expect(r.sends).toBe(1);
    expect(r.waitMs).toBeGreaterThanOrEqual(DELAY_MS - 1);
    expect(r.beforeSendMs).toBeGreaterThanOrEqual(0);
    expect(r.afterMs).toBeGreaterThanOrEqual(0);
    expect(r.beforeSendMs! + r.waitMs! + r.afterMs!).toBeCloseTo(r.firstRequestMs, 6);
  });

  it('counts requests made one after another, and waits from the first out to the last answer', async () => {
    const r = await run('two');
    expect(r.sends).toBe(2);
    expect(r.waitMs).toBeGreaterThanOrEqual(2 * DELAY_MS - 1);
  });

  it('leaves the phases null when no request went out, or none was answered', async () => {
    const none = await run('none');
    expect(none.sends).toBe(0);
    expect([none.beforeSendMs, none.waitMs, none.afterMs]).toEqual([null, null, null]);
    expect(phasesOf([none])).toBeNull();

    const refused = await run('refused');
    expect(refused.status).toBe(200);
    expect(refused.sends).toBe(1);
    expect(refused.beforeSendMs).toBeGreaterThanOrEqual(0);
    expect([refused.waitMs, refused.afterMs]).toEqual([null, null]);
    expect(phasesOf([refused])).toBeNull();
  });

  it('reports the medians of the runs that were split, and the most requests a run sent', () => {
    const run = (beforeSendMs: number | null, waitMs: number | null, afterMs: number | null, sends: number): DriverRun => ({
      startedMs: 1,
      importMs: 20,
      firstRequestMs: 30,
      status: 200,
      beforeSendMs,
      waitMs,
      afterMs,
      sends,
    });
    expect(phasesOf([run(10, 8, 2, 1), run(12, 9, 3, 2), run(11, 20, 1, 2), run(null, null, null, 0)])).toEqual({
      beforeSendMs: 11,
      waitMs: 9,
      afterMs: 2,
      sends: 2,
      runs: 3,
    });
  });
});
