/**
 * The aggregation worker thread (see aggregate-pool.ts): receives one aggregation's stages, then
 * its documents page by page as the main thread reads and filters them, then runs the pipeline
 * and posts the result back. One aggregation at a time; the state is reset after each.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { ApiError } from '../errors.ts';
import { loadRegexEngine } from '../query/matcher.ts';
import type { QueryDoc } from '../query/shape.ts';
import { engineEventData, runPipeline } from './aggregate-engine.ts';

/** A document of the pipeline's input: the event as the engine reads it, and its raw `EventData` when the pipeline reads it. */
export interface WorkerDoc {
  readonly sk: string;
  readonly doc: Record<string, unknown>;
  readonly data?: unknown;
}

export type ToWorker = { t: 'start'; stages: QueryDoc[] } | { t: 'docs'; docs: WorkerDoc[] } | { t: 'run' };

export type FromWorker =
  | { t: 'done'; result: unknown[] }
  | { t: 'error'; status: number; code: string; message: string }
  | { t: 'fail'; message: string };

let stages: QueryDoc[] = [];
let kept: WorkerDoc[] = [];

function run(): FromWorker {
  const docs = kept;
  kept = [];
  // The events list's order (newest first, ties by key), whatever the folders' interleaving.
  docs.sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0));
  const input = docs.map((d) => (d.data === undefined ? d.doc : Object.assign(d.doc, { EventData: engineEventData(d.data) })));
  try {
    return { t: 'done', result: runPipeline(stages, input) };
  } catch (err) {
    if (err instanceof ApiError) return { t: 'error', status: err.status, code: err.code, message: err.message };
    return { t: 'fail', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
}

/**
 * The niceness of the worker's thread: below the main thread, which serves every other request of
 * the process, so a pipeline takes only the CPU that request handling leaves.
 */
const NICENESS = 10;

// Linux schedules threads on their own: the worker lowers its own thread's priority, found by its
// id in /proc. Elsewhere (or where /proc is not mounted) it keeps the process's priority.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, NICENESS);
} catch {
  // Not Linux: the deadline and the heap limit still bound the worker.
}

const port = parentPort!;
// A `$match` after the first stages may hold a `$regex`: RE2 loads before the first message is read.
const ready = loadRegexEngine();
port.on('message', (m: ToWorker) => {
  if (m.t === 'start') {
    stages = m.stages;
    kept = [];
  } else if (m.t === 'docs') {
    for (const d of m.docs) kept.push(d);
  } else {
    void ready.then(() => port.postMessage(run()));
  }
});
