/**
 * The JSON WebSocket subscribers of each instance, kept by the fan-out between batches (one cache
 * per execution environment: a Lambda instance, or the local runtime's process), so a batch does
 * not Query `SUB#<instance>` for every instance of its events.
 *
 * How it stays correct:
 *
 * - The subscription and connection items go through the same table stream the fan-out reads. The
 *   fan-out applies each subscription change to the cache in stream order ({@link SubscriberCache.apply}),
 *   before it delivers the events after it. Locally (one shard at a time, read in order) the
 *   cache is then exactly what a Query at each event would have read.
 * - In AWS a table has several stream shards, each read by its own invocations, possibly in
 *   another Lambda instance: a subscription's record may never reach the instance that delivers
 *   an event. So an entry is used for at most {@link SUBSCRIBERS_MAX_AGE_MS} after the read it
 *   started from; after half of that it is read again in the background while the batch goes on
 *   with it, and changes seen meanwhile are applied to the new read too.
 * - Subscriptions carry their TTL, checked at each delivery: an expired one is never delivered.
 * - Reads are strongly consistent: a subscription answered before the read began is in it.
 */
import type { Db } from '../../db/client.ts';
import { subscriptionsOf, type Subscription, type SubscriptionChange } from '../../db/live-repo.ts';

/**
 * The longest a cached list of subscribers is used (from the start of the Query it came from): in
 * AWS, a subscription, unsubscribe or disconnect recorded on another stream shard applies within
 * it. Locally the stream order applies it at once.
 */
export const SUBSCRIBERS_MAX_AGE_MS = 1000;
/** Instances kept per execution environment (least recently used dropped first). */
const MAX_INSTANCES = 10_000;

interface Read {
  /** `Date.now()` when the Query began. */
  readonly startedAt: number;
  /** Changes applied while the Query runs: applied again to its answer. */
  readonly changes: SubscriptionChange[];
  /** Settles (never rejects) when the read has answered and been applied, or failed. */
  done: Promise<void>;
}

interface Entry {
  /** By `<connectionId>#<topic>`; undefined until the first read answers. */
  subs: Map<string, Subscription> | undefined;
  /** `Date.now()` when the read `subs` came from began. */
  readAt: number;
  /** Reads in flight (usually none or one). */
  readonly reading: Set<Read>;
  /** The last read's error, until a read answers. */
  error: Error | undefined;
}

/** The subscribers of a batch's instances, as {@link SubscriberCache.load} made them current. */
export interface Subscribers {
  /**
   * The live subscribers of an instance as known now (changes applied since the load included):
   * their connections' lifetime not over at `nowSeconds`. An Error when they could not be read.
   */
  of(instanceKey: string, nowSeconds: number): Subscription[] | Error;
}

const idOf = (connectionId: string, topic: string): string => `${connectionId}#${topic}`;

function applyTo(subs: Map<string, Subscription>, change: SubscriptionChange): void {
  switch (change.kind) {
    case 'put':
      subs.set(idOf(change.subscription.connectionId, change.subscription.topic), change.subscription);
      return;
    case 'delete':
      subs.delete(idOf(change.connectionId, change.topic));
      return;
    case 'disconnect':
      for (const [id, s] of subs) if (s.connectionId === change.connectionId) subs.delete(id);
  }
}

export interface SubscriberCacheOptions {
  readonly maxAgeMs?: number;
  readonly maxInstances?: number;
  readonly clock?: () => number;
}

export class SubscriberCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxAgeMs: number;
  private readonly maxInstances: number;
  private readonly clock: () => number;
  /** Queries made, for the benchmark's breakdown and tests. */
  reads = 0;

  constructor(opts: SubscriberCacheOptions = {}) {
    this.maxAgeMs = opts.maxAgeMs ?? SUBSCRIBERS_MAX_AGE_MS;
    this.maxInstances = opts.maxInstances ?? MAX_INSTANCES;
    this.clock = opts.clock ?? Date.now;
  }

  /**
   * Makes the subscribers of these instances current enough to deliver with: reads (and waits
   * for) the instances unknown or older than the maximum age, and starts a background read of
   * those past half of it. Answers synchronously when nothing had to be waited for, so the
   * fan-out's posts start before the other channels' work of the batch is queued.
   */
  load(db: Db, instances: Iterable<string>): Subscribers | Promise<Subscribers> {
    const now = this.clock();
    const waits: Promise<void>[] = [];
    const loaded = new Map<string, Entry>();
    for (const instanceKey of new Set(instances)) {
      const id = this.id(db, instanceKey);
      let e = this.entries.get(id);
      if (e) this.entries.delete(id); // most recently used last
      e ??= { subs: undefined, readAt: 0, reading: new Set(), error: undefined };
      this.entries.set(id, e);
      loaded.set(instanceKey, e);
      const age = now - e.readAt;
      const usable = e.subs !== undefined && age < this.maxAgeMs;
      if (usable && age < this.maxAgeMs / 2) continue;
      // A read in flight that began recently enough is as good as a new one.
      let read = [...e.reading].find((r) => now - r.startedAt < this.maxAgeMs / 2);
      read ??= this.read(db, instanceKey, e);
      if (!usable) waits.push(read.done);
    }
    while (this.entries.size > this.maxInstances) this.entries.delete(this.entries.keys().next().value!);
    const maxAgeMs = this.maxAgeMs;
    const view: Subscribers = {
      of(instanceKey, nowSeconds) {
        const e = loaded.get(instanceKey);
        // Read too long before this load (the reads it waited for failed): not used.
        if (!e?.subs || e.readAt <= now - maxAgeMs) return e?.error ?? new Error('the subscribers of the instance could not be read');
        const live: Subscription[] = [];
        for (const s of e.subs.values()) if (s.ttl > nowSeconds) live.push(s);
        return live;
      },
    };
    return waits.length ? Promise.all(waits).then(() => view) : view;
  }

  /** Applies a change read from the stream (in stream order) to what is known of its instance(s). */
  apply(db: Db, change: SubscriptionChange): void {
    if (change.kind === 'disconnect') {
      const prefix = `${db.tableName}\u0000`;
      for (const [id, e] of this.entries) if (id.startsWith(prefix)) this.applyToEntry(e, change);
      return;
    }
    const e = this.entries.get(this.id(db, change.instanceKey));
    // An instance not known is read when an event needs it, after this change was written.
    if (e) this.applyToEntry(e, change);
  }

  /** Forgets every subscription of a connection that is gone. */
  forgetConnection(db: Db, connectionId: string): void {
    this.apply(db, { kind: 'disconnect', connectionId });
  }

  /** Resolves when no read is in flight (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const reads = [...this.entries.values()].flatMap((e) => [...e.reading].map((r) => r.done));
      if (!reads.length) return;
      await Promise.all(reads);
    }
  }

  private applyToEntry(e: Entry, change: SubscriptionChange): void {
    if (e.subs) applyTo(e.subs, change);
    for (const r of e.reading) r.changes.push(change);
  }

  private id(db: Db, instanceKey: string): string {
    return `${db.tableName}\u0000${instanceKey}`;
  }

  private read(db: Db, instanceKey: string, e: Entry): Read {
    const startedAt = this.clock();
    const changes: SubscriptionChange[] = [];
    this.reads++;
    const read: Read = { startedAt, changes, done: Promise.resolve() };
    read.done = subscriptionsOf(db, instanceKey, Math.floor(startedAt / 1000)).then(
      (list) => {
        e.reading.delete(read);
        // A read that began later and answered first wins.
        if (e.subs && e.readAt > startedAt) return;
        const subs = new Map(list.map((s) => [idOf(s.connectionId, s.topic), s]));
        // What the stream said while the Query ran may be missing from its answer.
        for (const c of changes) applyTo(subs, c);
        e.subs = subs;
        e.readAt = startedAt;
        e.error = undefined;
      },
      (err: unknown) => {
        e.reading.delete(read);
        e.error = err instanceof Error ? err : new Error(String(err));
      },
    );
    e.reading.add(read);
    return read;
  }
}

/** The fan-out's cache: one per execution environment, keyed by table and instance. */
export const subscriberCache = new SubscriberCache();
