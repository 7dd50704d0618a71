/**
 * The usage meter of an execution environment: counts per (instance, UTC day) held in memory and
 * handed out for writing at most once per flush interval, so metering never doubles the price of
 * a read. Pure: the clock is injected and nothing here touches the table (see `recorder.ts`).
 */

/** Counter names of a usage day (the usage item's attributes; see `shared/db/usage-repo.ts`). */
export type Counter = `Req_${string}` | 'EventsPublished' | 'AuditEvents' | 'ObjectsCreated' | 'ObjectsDeleted';

/** What one flush writes for one instance and day: one `UpdateItem ADD` (and the running total of stored objects). */
export interface UsageDelta {
  readonly instanceKey: string;
  /** UTC day, `yyyy-mm-dd`. */
  readonly day: string;
  readonly counts: Readonly<Partial<Record<Counter, number>>>;
}

/** The counter of requests answered by a family. */
export const requestCounter = (family: string): Counter => `Req_${family}`;

const DAY_MS = 86_400_000;

/** The UTC day (`yyyy-mm-dd`) of an instant. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export interface MeterOptions {
  /** Milliseconds between two flushes; 0 lets every call of {@link UsageMeter.takeDue} flush. */
  readonly flushEveryMs: number;
  /** Epoch milliseconds. */
  readonly now: () => number;
}

export class UsageMeter {
  private pending = new Map<string, { instanceKey: string; day: string; counts: Partial<Record<Counter, number>> }>();
  private lastFlush: number;
  private day = { start: Number.NaN, text: '' };

  constructor(private readonly opts: MeterOptions) {
    // The first flush comes one interval after the environment starts, like every later one.
    this.lastFlush = opts.now();
  }

  /** Adds counts for an instance on today's (UTC) date. */
  add(instanceKey: string, counts: Readonly<Partial<Record<Counter, number>>>): void {
    if (!instanceKey) return;
    this.merge(instanceKey, this.today(), counts);
  }

  /** The current UTC day, formatted once per day (every request asks). */
  private today(): string {
    const now = this.opts.now();
    if (!(now >= this.day.start && now < this.day.start + DAY_MS)) {
      const start = Math.floor(now / DAY_MS) * DAY_MS;
      this.day = { start, text: utcDay(start) };
    }
    return this.day.text;
  }

  /** True when counts are waiting; nothing is written for an idle environment. */
  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** True when counts are waiting and the last flush is at least one interval old. */
  isDue(): boolean {
    return this.hasPending && this.opts.now() - this.lastFlush >= this.opts.flushEveryMs;
  }

  /**
   * The counts to write when a flush is due (and forgets them), else an empty list. One delta per
   * instance and day, whatever the number of requests counted.
   */
  takeDue(): UsageDelta[] {
    return this.isDue() ? this.takeAll() : [];
  }

  /** Every waiting count, due or not (the local runtime's shutdown). */
  takeAll(): UsageDelta[] {
    this.lastFlush = this.opts.now();
    const out = [...this.pending.values()].map((p) => ({ instanceKey: p.instanceKey, day: p.day, counts: { ...p.counts } }));
    this.pending = new Map();
    return out;
  }

  /** Puts counts back that could not be written: the next flush tries them again. */
  putBack(deltas: readonly UsageDelta[]): void {
    for (const d of deltas) this.merge(d.instanceKey, d.day, d.counts);
  }

  private merge(instanceKey: string, day: string, counts: Readonly<Partial<Record<Counter, number>>>): void {
    const id = `${instanceKey}\u0000${day}`;
    let p = this.pending.get(id);
    for (const [name, n] of Object.entries(counts) as Array<[Counter, number | undefined]>) {
      if (!n) continue;
      p ??= this.pending.set(id, { instanceKey, day, counts: {} }).get(id)!;
      p.counts[name] = (p.counts[name] ?? 0) + n;
    }
  }
}
