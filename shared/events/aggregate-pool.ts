/**
 * The worker threads aggregation pipelines run in: off the event loop, so a pipeline never stalls
 * the other requests of the process (the local runtime serves every family and tenant in one), and
 * in a heap of its own with a fixed limit, so no pipeline can exhaust the process's memory.
 *
 * Memory bound: at most {@link MAX_WORKERS} workers per process, each with at most
 * {@link WORKER_RESOURCE_LIMITS} (old and young generation, stack), so aggregations hold at most
 * {@link WORKER_MEMORY_BOUND_MB} MB beyond the process's own heap. A worker that reaches its heap
 * limit is ended by Node (400 QueryTooExpensive naming the memory limit); one still running at the
 * request's deadline is terminated (400 QueryTooExpensive naming queryTimeout). A fresh worker is
 * started in the place of one that ended; an idle one is kept for the next aggregation.
 */
import { Worker } from 'node:worker_threads';
import { ApiError } from '../errors.ts';
import type { QueryDoc } from '../query/shape.ts';
import { tooExpensive } from './aggregate-engine.ts';
import type { FromWorker, ToWorker, WorkerDoc } from './aggregate-worker.ts';

/** Heap and stack of one aggregation worker (MB): room for the whole events an aggregation may hold (`MAX_WHOLE_EVENTS`). */
const WORKER_RESOURCE_LIMITS = Object.freeze({ maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 });

/** Aggregations that run at once in one process; more wait for a worker within their deadline. */
const MAX_WORKERS = 2;

/**
 * What the aggregation workers of a process may hold at most (MB): their heap limits plus each
 * thread's fixed cost (its own V8 isolate, code and stack), which the heap limits do not count.
 */
export const WORKER_MEMORY_BOUND_MB =
  MAX_WORKERS * (WORKER_RESOURCE_LIMITS.maxOldGenerationSizeMb + WORKER_RESOURCE_LIMITS.maxYoungGenerationSizeMb + WORKER_RESOURCE_LIMITS.stackSizeMb + 64);

/**
 * The worker's entry beside this module: in a bundle, the worker built beside the function's code
 * (infra/bundling.ts); from the sources, a stub that loads aggregate-worker.ts through tsx.
 */
const WORKER_ENTRY = new URL('./aggregate-worker.mjs', import.meta.url);

const idle: Worker[] = [];
const waiting: Array<() => void> = [];
let live = 0;

function spawn(): Worker {
  const w = new Worker(WORKER_ENTRY, { resourceLimits: { ...WORKER_RESOURCE_LIMITS } });
  live++;
  w.once('exit', () => {
    live--;
    const i = idle.indexOf(w);
    if (i >= 0) idle.splice(i, 1);
    // A worker ends when an aggregation crossed a limit: the next one finds a fresh worker started.
    const next = waiting.shift();
    if (next) next();
    else if (idle.length === 0) spawnIdle();
  });
  // An error the worker's own code did not catch (out of memory, a failed start) is reported to
  // the aggregation running in it, if any; the exit above keeps the pool's count.
  w.on('error', () => undefined);
  return w;
}

/** Keeps a started worker ready for the next aggregation, so it does not pay the worker's start. */
function spawnIdle(): void {
  if (live >= MAX_WORKERS) return;
  const w = spawn();
  w.unref();
  idle.push(w);
}

async function acquire(waitMs: number): Promise<Worker> {
  const until = Date.now() + waitMs;
  for (;;) {
    const w = idle.pop();
    if (w) {
      w.ref();
      return w;
    }
    if (live < MAX_WORKERS) return spawn();
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(wake), 1);
        reject(new ApiError(503, 'QueryTimeout', 'Every aggregation worker stayed busy within queryTimeout: retry shortly.'));
      }, Math.max(0, until - Date.now()));
      waiting.push(wake);
    });
  }
}

/** One aggregation's use of a worker: its documents as they are read, then the run. */
export interface AggregationJob {
  /** Sends documents to the worker; throws when the worker has failed already (out of memory). */
  push(docs: WorkerDoc[]): void;
  /** Runs the pipeline within `budgetMs` (what `queryTimeoutMs` leaves) and answers its result; the worker returns to the pool. */
  finish(budgetMs: number, queryTimeoutMs: number): Promise<unknown[]>;
  /** Gives up (the reads failed): the worker drops what it was sent and returns to the pool. */
  abort(): void;
}

/** Starts an aggregation of `stages` in a worker, waiting at most `waitMs` for one. */
export async function startAggregation(stages: readonly QueryDoc[], waitMs: number): Promise<AggregationJob> {
  const w = await acquire(waitMs);
  let failure: Error | undefined;
  let settle: ((m: FromWorker | Error) => void) | undefined;
  const fail = (err: Error) => {
    failure ??= err;
    settle?.(failure);
  };
  const onError = (err: Error & { code?: string }) =>
    fail(
      err.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? tooExpensive(`it would need more than the ${WORKER_RESOURCE_LIMITS.maxOldGenerationSizeMb} MB of memory an aggregation may use`)
        : err,
    );
  const onExit = () => fail(new Error('the aggregation worker exited'));
  const onMessage = (m: FromWorker) => settle?.(m);
  w.on('error', onError);
  w.on('exit', onExit);
  w.on('message', onMessage);
  const detach = () => {
    w.off('error', onError);
    w.off('exit', onExit);
    w.off('message', onMessage);
  };
  const end = () => {
    detach();
    void w.terminate();
  };
  const release = () => {
    detach();
    w.unref();
    idle.push(w);
    waiting.shift()?.();
  };
  const post = (m: ToWorker) => w.postMessage(m);
  post({ t: 'start', stages: [...stages] });
  return {
    push(docs) {
      if (failure) {
        end();
        throw failure;
      }
      post({ t: 'docs', docs });
    },
    abort() {
      if (failure) return end();
      // The worker only held the documents sent so far: it drops them and serves the next aggregation.
      post({ t: 'start', stages: [] });
      release();
    },
    finish: (budgetMs, queryTimeoutMs) =>
      new Promise<unknown[]>((resolve, reject) => {
        const timer = setTimeout(() => fail(tooExpensive(`it did not finish within queryTimeout (${queryTimeoutMs / 1000} s)`)), Math.max(0, budgetMs));
        settle = (m) => {
          clearTimeout(timer);
          settle = undefined;
          if (m instanceof Error) {
            end();
            return reject(m);
          }
          release();
          if (m.t === 'done') resolve(m.result);
          else if (m.t === 'error') reject(new ApiError(m.status, m.code, m.message));
          else reject(new Error(`the aggregation worker failed: ${m.message}`));
        };
        if (failure) return settle(failure);
        post({ t: 'run' });
      }),
  };
}
