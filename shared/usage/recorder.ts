/**
 * Writes an execution environment's usage counts: the {@link UsageMeter} decides when, this module
 * writes (one `UpdateItem ADD` per instance and day, plus the running stored-object total when
 * objects were created or deleted) outside the capacity scope of the request that happens to
 * trigger the flush, so no request's log line or metric carries the meter's writes.
 *
 * When: at the end of a request (or a stream batch) once the interval has passed. In Lambda there
 * is no reliable shutdown hook without an extension: counts of an environment that is shut down
 * before its next flush are lost (at most one interval of them). The local runtime flushes every
 * recorder on shutdown ({@link flushAllUsage}) and due ones on a timer ({@link flushDueUsage}).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { outsideCapacityScope } from '../db/capacity.ts';
import type { Db } from '../db/client.ts';
import { addStoredObjects, addUsage } from '../db/usage-repo.ts';
import { UsageMeter, type Counter, type UsageDelta } from './meter.ts';

export interface UsageRecorderDeps {
  readonly db: Db;
  readonly logger: Pick<Logger, 'warn'>;
  /** The server clock. */
  readonly now: () => Date;
  readonly config: { readonly usageFlushSeconds: number };
}

export interface UsageRecorder {
  /** Counts for an instance today (UTC). */
  add(instanceKey: string, counts: Readonly<Partial<Record<Counter, number>>>): void;
  /** Whether {@link flushIfDue} would write now (counts waiting, the interval passed, no write running). */
  isDue(): boolean;
  /** Writes the counts when the interval has passed; never throws (a failed write is retried at the next flush). */
  flushIfDue(): Promise<void>;
  /** Writes every waiting count now. */
  flush(): Promise<void>;
}

/** Every recorder of this process, for the local runtime's shutdown and timer. */
const recorders = new Set<UsageRecorder>();

export function createUsageRecorder(deps: UsageRecorderDeps): UsageRecorder {
  const meter = new UsageMeter({ flushEveryMs: deps.config.usageFlushSeconds * 1000, now: () => deps.now().getTime() });
  let writing: Promise<void> | undefined;

  async function write(deltas: UsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    const written: UsageDelta[] = [];
    const failed: UsageDelta[] = [];
    await outsideCapacityScope(async () => {
      await Promise.all(
        deltas.map((d) =>
          addUsage(deps.db, d.instanceKey, d.day, d.counts).then(
            () => written.push(d),
            (err: unknown) => {
              failed.push(d);
              deps.logger.warn('usage: writing counts failed; retried at the next flush', { instanceKey: d.instanceKey, error: (err as Error).message });
            },
          ),
        ),
      );
      // The running total follows the day counts that were written (a failed day comes back whole).
      const stored = new Map<string, number>();
      for (const d of written) {
        const net = (d.counts.ObjectsCreated ?? 0) - (d.counts.ObjectsDeleted ?? 0);
        if (net) stored.set(d.instanceKey, (stored.get(d.instanceKey) ?? 0) + net);
      }
      await Promise.all(
        [...stored].map(([instanceKey, n]) =>
          addStoredObjects(deps.db, instanceKey, n).catch((err: unknown) => {
            deps.logger.warn('usage: writing the stored-object total failed; it misses this change', { instanceKey, error: (err as Error).message });
          }),
        ),
      );
    });
    meter.putBack(failed);
  }

  const recorder: UsageRecorder = {
    add: (instanceKey, counts) => meter.add(instanceKey, counts),
    isDue: () => !writing && meter.isDue(),
    async flushIfDue() {
      if (writing || !meter.isDue()) return;
      writing = write(meter.takeDue()).finally(() => (writing = undefined));
      await writing;
    },
    async flush() {
      await writing;
      writing = write(meter.takeAll()).finally(() => (writing = undefined));
      await writing;
    },
  };
  recorders.add(recorder);
  return recorder;
}

/** Writes the waiting counts of every recorder of this process (the local runtime's shutdown). */
export async function flushAllUsage(): Promise<void> {
  await Promise.all([...recorders].map((r) => r.flush()));
}

/** Writes the counts of every recorder whose interval has passed (the local runtime's timer). */
export async function flushDueUsage(): Promise<void> {
  await Promise.all([...recorders].map((r) => r.flushIfDue()));
}
