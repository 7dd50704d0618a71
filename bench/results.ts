/**
 * The shape of `bench/results/latest.json`: exactly the top-level entries of
 * {@link RESULT_KEYS}, each (and each
 * family or operation inside `coldStart` and `capacity`) with its raw figures beside `floor`,
 * `ratio` (figure / floor), `goal` and `meetsGoal`. A figure that could not be measured is null,
 * its verdict is `meetsGoal: false`, and `note` says why: numbers are never made up.
 */
import { availableParallelism, loadavg } from 'node:os';
import type { Summary } from './stats.ts';

interface Verdict {
  /** The physical floor the figure is compared with (same unit as the figure), or null. */
  readonly floor: number | null;
  /** figure / floor (lower is better), or null when either is missing. */
  readonly ratio: number | null;
  readonly goal: string;
  readonly meetsGoal: boolean;
  readonly note?: string;
}

/** When and under which load an entry was measured (other sessions share this machine). */
export interface Measured {
  readonly mode: 'quick' | 'full';
  readonly startedAt: string;
  /** 1, 5 and 15 minute load averages when the entry started and ended. */
  readonly loadavgStart: readonly number[];
  readonly loadavgEnd: readonly number[];
  readonly wallMs: number;
  readonly node: string;
  readonly cpus: number;
}

export interface HandlerOverhead extends Verdict {
  readonly unit: 'ms';
  /** p50 of GET person through the real handler (warm). */
  readonly p50Ms: number | null;
  readonly handler: Summary | null;
  /** The bare GetItem of the same item with the same SDK client, interleaved with the handler calls. */
  readonly bareGetItem: Summary | null;
  /** DynamoDB requests of one warm GET person. */
  readonly commandsPerCall: readonly string[];
  readonly measured: Measured;
}

/**
 * A cold start's first request split at its outgoing HTTP requests (the DynamoDB calls, and any
 * other it makes), medians over the runs: from the handler's call to its first request out, from
 * there to its last answer (what the function does between its requests included), and from that
 * answer to its result. Says whether a function's excess over a floor is CPU before or after its
 * reads, or reads made one after another.
 */
export interface ColdStartPhases {
  readonly beforeSendMs: number;
  readonly waitMs: number;
  readonly afterMs: number;
  /** Requests that went out during the first request. */
  readonly sends: number;
  /** Runs the medians are of. */
  readonly runs: number;
}

export interface ColdStartFamily extends Verdict {
  /** Bytes of code a cold start loads: `index.mjs` and the chunks it imports statically. */
  readonly bundleBytes: number;
  /** Bytes of all the code the function ships, the chunks loaded on first use included. */
  readonly assetBytes: number;
  /** Code files a cold start loads (each costs the ESM loader time of its own). */
  readonly startFiles: number;
  readonly sourceMapBytes: number;
  /** Median over the runs: import of the bundle in a fresh process. */
  readonly importMs: number | null;
  /** Median over the runs: the first invocation, from the end of the import. */
  readonly firstRequestMs: number | null;
  /** importMs + firstRequestMs (median of the per-run sums): the figure compared with the floor. */
  readonly totalMs: number | null;
  /**
   * Median CPU time (user + system) of the import and the first request, and its ratio to the
   * baseline's: reported beside the wall-time ratio (the goal's), which a loaded machine inflates.
   */
  readonly cpuMs: number | null;
  readonly cpuRatio: number | null;
  /** The first request by phase; null when it sent no request, or none was answered. */
  readonly firstRequestPhases: ColdStartPhases | null;
  readonly runs: number;
  readonly firstRequest: string;
  readonly firstStatus: string | number | null;
  readonly topPackages: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  /** The bundle analysis: the largest contributors (a package, or a module of ours), bytes in the bundle. */
  readonly topContributors: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  /** What the bundle carries beyond the baseline's: in all, and the largest contributors of it. */
  readonly beyondBaseline: { readonly bytes: number; readonly top: ReadonlyArray<{ readonly name: string; readonly bytes: number }> };
  /**
   * The same function against the protected floor ({@link ColdStart.protectedFloor}): bytes beyond
   * the floor's bundle and their largest contributors, and (import + first request) / the floor's
   * (wall and CPU). Reported, not a goal (the goal stays the baseline's); null when the floor could
   * not be measured. It says what a function that verifies tokens carries beyond what it must.
   */
  readonly overProtectedFloor: {
    readonly bytes: number;
    readonly ratio: number | null;
    readonly cpuRatio: number | null;
    readonly top: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  } | null;
  /**
   * A function whose first request carries an access token, against the floor of the same kind of
   * request ({@link ColdStart.listFloor} for one that sends a Query beside the BatchGetItem,
   * {@link ColdStart.statusFloor} otherwise): (import + first request) / the floor's. Reported, not
   * a goal; null for the functions without a token.
   */
  readonly overFloorOfKind: { readonly floor: string; readonly ratio: number | null } | null;
}

/**
 * The protected floor (bench/cold-start-floor.ts): the smallest function doing what every
 * protected HTTP family must on its first request (verify the ES256 access token against the
 * deployment's public keys, log through Powertools Logger, one GetItem, a JSON answer), bundled
 * and run exactly as the functions are. Its figures are measured, beside the baseline's.
 */
export interface ColdStartProtectedFloor {
  readonly bundleBytes: number;
  readonly startFiles: number;
  readonly topContributors: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  /** What its bundle carries beyond the baseline's. */
  readonly beyondBaseline: { readonly bytes: number; readonly top: ReadonlyArray<{ readonly name: string; readonly bytes: number }> };
  readonly importMs: number | null;
  readonly firstRequestMs: number | null;
  readonly totalMs: number | null;
  readonly cpuMs: number | null;
  /** totalMs / the baseline's totalMs, and the same of the CPU time. */
  readonly ratio: number | null;
  readonly cpuRatio: number | null;
  readonly firstRequestPhases: ColdStartPhases | null;
  readonly runs: number;
  readonly firstRequest: string;
  readonly firstStatus: string | number | null;
  readonly what: string;
  readonly note?: string;
}

/** The least a kept `import()` must save of some family's start code (issue #35: 10 KB). */
export const LAZY_IMPORT_MIN_BYTES = 10_000;

/** One `import()` call with a literal specifier, in a module of the functions' code. */
export interface LazyImportSite {
  /** The module holding the call, relative to the repository (`shared/metrics.ts`). */
  readonly file: string;
  readonly line: number;
  /** What it imports, as written (`./stack.ts`, `@aws-lambda-powertools/metrics`). */
  readonly specifier: string;
}

/** What one site saves one function. */
export interface LazyImportSaving {
  readonly family: string;
  /** Bytes of code a cold start loads with the import made static, minus with it lazy. */
  readonly startBytes: number;
  /** Files a cold start loads with the import made static, minus with it lazy. */
  readonly startFiles: number;
  /**
   * Where the module holding the call is itself loaded on first use (a chunk a cold start does not
   * read): the bytes its first load reads beyond the start code, with the import made static,
   * minus with it lazy. 0 where that module is start code.
   */
  readonly withModuleBytes: number;
  /**
   * Made static, the import would carry this function's start code over the bench's bundle-size
   * goal (the baseline's bytes + `BUNDLE_BYTES_OVER_BASELINE` of bench/measure-cold-start.ts)
   * that it meets with the import lazy.
   */
  readonly breaksBytesGoal: boolean;
}

export interface LazyImportFigures extends LazyImportSite {
  /** Per function whose build reaches the site, largest saving first. */
  readonly savings: readonly LazyImportSaving[];
  /** The largest saving of start bytes over those functions (0 when none reaches the site). */
  readonly maxStartBytes: number;
  /** The largest saving of bytes read with the holding module's first load (0 where none is lazy). */
  readonly maxWithModuleBytes: number;
  /**
   * It saves at least {@link LAZY_IMPORT_MIN_BYTES} somewhere (of a start, or of its module's first
   * load), or made static it would break a function's bundle-size goal.
   */
  readonly pays: boolean;
}

export interface ColdStart extends Verdict {
  readonly families: Readonly<Record<string, ColdStartFamily>>;
  readonly baseline: {
    readonly bundleBytes: number;
    readonly startFiles: number;
    readonly topContributors: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
    readonly importMs: number | null;
    readonly firstRequestMs: number | null;
    readonly totalMs: number | null;
    readonly cpuMs: number | null;
    readonly firstRequestPhases: ColdStartPhases | null;
    readonly what: string;
  };
  /** The protected floor, measured beside the baseline; null when it could not be bundled. */
  readonly protectedFloor: ColdStartProtectedFloor | null;
  /**
   * The protected floor with the caller's status check beside it (bench/cold-start-floor-status.ts):
   * what any protected function that refuses disabled callers costs; null when it could not be bundled.
   */
  readonly statusFloor: ColdStartProtectedFloor | null;
  /**
   * The status floor serving the first page of a collection (bench/cold-start-floor-list.ts): the
   * least a protected function whose first request is a list costs; null when it could not be bundled.
   */
  readonly listFloor: ColdStartProtectedFloor | null;
  /** The family the top-level ratio is of (the worst). */
  readonly worst: string | null;
  readonly maxBundleBytes: number;
  readonly buildMs: number;
  /**
   * What each `import()` of the functions' code saves their start code (bench/lazy-imports.ts):
   * every function built with that one call made static, against as deployed. Reported, not a goal.
   */
  readonly lazyImports: readonly LazyImportFigures[];
  readonly measured: Measured;
}

export interface CapacityOperation extends Verdict {
  readonly what: string;
  readonly requests: number | null;
  readonly commands: readonly string[];
  readonly rcu: number | null;
  readonly wcu: number | null;
  /** In-process duration through the real handler (for the cost model). */
  readonly durationMs: Summary | null;
  readonly family: string;
  readonly [extra: string]: unknown;
}

export interface Capacity extends Verdict {
  readonly operations: Readonly<Record<string, CapacityOperation>>;
  readonly worst: string | null;
  /** What was warmed before measuring. */
  readonly warmed: string;
  readonly measured: Measured;
}

export interface Paging extends Verdict {
  readonly people: number;
  readonly pageSize: number;
  readonly pages: number;
  readonly requests: number | null;
  readonly rcu: number | null;
  readonly rawQuery: { readonly requests: number | null; readonly rcu: number | null; readonly items: number | null };
  readonly measured: Measured;
}

export interface TokenGrant {
  readonly latency: Summary | null;
  readonly requests: number | null;
  readonly commands: readonly string[];
  readonly rcu: number | null;
  readonly wcu: number | null;
}

export interface Token extends Verdict {
  readonly unit: 'ms';
  readonly passwordGrant: TokenGrant;
  readonly refreshGrant: TokenGrant;
  /** One `hashPassword` (scrypt N=2^17, r=8, p=1), interleaved with the password grants. */
  readonly scryptHash: Summary | null;
  readonly measured: Measured;
}

export interface Fanout extends Verdict {
  readonly events: number;
  readonly published: number;
  readonly delivered: number;
  readonly lost: number | null;
  readonly duplicates: number | null;
  readonly clients: number;
  /** From the start of the publishing HTTP request to the event's arrival on the WebSocket. */
  readonly latencyMs: Summary | null;
  /** The publishing HTTP request alone. */
  readonly publishMs: Summary | null;
  /** From the publish's 201 answer to the WebSocket message (negative: delivered before the answer arrived). */
  readonly afterAnswerMs: Summary | null;
  /** Mean size of a delivered WebSocket message (bytes): API Gateway bills messages per 32 KB. */
  readonly messageBytes: number | null;
  readonly streamPollIdleMs: number;
  /** Where the time from the publish's answer to the WebSocket message went, per event. */
  readonly breakdown: FanoutBreakdown | null;
  /** What the same path costs in AWS (documented figures, not measured here). */
  readonly aws: FanoutAws;
  /** The same events as received by one MQTT subscriber of the same topic, in the same run. */
  readonly mqtt: MqttFanout | null;
  readonly measured: Measured;
}

/**
 * The local path of a delivered event after its publish was answered, from the stream poller's
 * own timings: publish answered -> the GetRecords call that returned its record starts -> that
 * call ends -> the WebSocket message arrives (the fan-out invocation: decode, subscribers (cached),
 * Management API POST, send).
 */
export interface FanoutBreakdown {
  /** Events the breakdown covers (delivered, and seen by the poller's observer). */
  readonly events: number;
  /** Publish answered -> its read starts (negative: the read began before the client had the answer). */
  readonly waitForReadMs: Summary | null;
  /** The GetRecords call that returned the record (DynamoDB Local). */
  readonly getRecordsMs: Summary | null;
  /** That read's end -> the WebSocket message. */
  readonly fanoutToReceiveMs: Summary | null;
  /** The whole fan-out invocation of the event's batch (all channels: WebSocket, MQTT, webhooks, audit). */
  readonly invocationMs: Summary | null;
  /** Records per batch of those events. */
  readonly batchRecords: Summary | null;
  /** Events by what triggered the read that returned them (`wake`: a write woke the poller). */
  readonly readTriggers: Readonly<Record<'start' | 'more' | 'wake' | 'idle', number>>;
  /**
   * The idle interval's measured contribution: waitForReadMs of the events read after an idle
   * wait ran out (null when none was: every record was read on a wake or right after a batch).
   */
  readonly idleWaitMs: Summary | null;
  /** The poller's GetRecords calls during the phase, by trigger (empty reads included). */
  readonly reads: Readonly<Record<'start' | 'more' | 'wake' | 'idle', number>>;
  /**
   * The fan-out's Queries of WebSocket subscribers during the phase (`shared/live/websocket/subscriber-cache.ts`)
   * against the batches it delivered: without the cache, one per instance per batch.
   */
  readonly subscriberReads: { readonly queries: number; readonly batches: number };
}

/** The event source mapping's part of the path in AWS, from its documentation. */
export interface FanoutAws {
  /** How often Lambda polls each shard with no records (documented: 4 times a second). */
  readonly pollIntervalMs: number;
  /** The wait that polling adds to an event written while the poller waits: mean and worst case. */
  readonly addedMeanMs: number;
  readonly addedMaxMs: number;
  readonly what: string;
}

/** One MQTT subscriber (`/<instance>/$`, QoS 0) beside the WebSocket subscriber of {@link Fanout}. */
interface MqttFanout {
  readonly delivered: number;
  readonly lost: number;
  readonly duplicates: number;
  /** From the start of the publishing HTTP request to the MQTT message. */
  readonly latencyMs: Summary | null;
  /** Mean size of a delivered MQTT payload (BSON bytes): IoT Core bills messages per 5 KB. */
  readonly messageBytes: number | null;
}

/**
 * The AWS side of the fan-out path: the Lambda event source mapping polls each shard of the
 * table's stream 4 times a second (AWS Lambda Developer Guide, "Using Lambda with DynamoDB",
 * polling and batching streams), and DynamoDB does not charge the GetRecords calls a Lambda
 * trigger makes (DynamoDB pricing, DynamoDB Streams). Locally, a write wakes the poller instead.
 */
export const AWS_STREAM_POLLING: FanoutAws = {
  pollIntervalMs: 250,
  addedMeanMs: 125,
  addedMaxMs: 250,
  what:
    'Lambda polls each stream shard 4 times a second: an event written while the mapping waits is read 0-250 ms later ' +
    '(about 125 ms on average), plus the stream\'s own propagation and the invocation; the polling is free ' +
    '(GetRecords calls made by a Lambda trigger are not charged). Locally the write wakes the poller, so this wait is absent.',
};

/** Webhook deliveries to one loopback receiver (verified with the standardwebhooks package). */
export interface Webhooks extends Verdict {
  readonly events: number;
  readonly published: number;
  /** Distinct events delivered (by webhook-id). */
  readonly delivered: number;
  readonly lost: number | null;
  readonly duplicates: number | null;
  /** Deliveries whose signature did not verify. */
  readonly invalid: number | null;
  readonly clients: number;
  /** From the start of the publishing HTTP request to the verified delivery's arrival. */
  readonly latencyMs: Summary | null;
  /** The sender's own attempt (POST and answer), as the deliveries list records it. */
  readonly attemptMs: Summary | null;
  readonly measured: Measured;
}

export interface HttpScenario extends Verdict {
  readonly rps: number | null;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly requests: number | null;
  readonly errors: number | null;
  readonly non2xx: number | null;
  /** p99 / the floor's p99. */
  readonly p99Ratio: number | null;
  readonly floorIs: string;
}

export interface HttpFloor {
  readonly rps: number | null;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly errors: number | null;
  readonly non2xx: number | null;
}

export interface Http extends Verdict {
  readonly getPerson: HttpScenario;
  readonly publish: HttpScenario;
  readonly bareGetItem: HttpFloor;
  readonly barePublishWrite: HttpFloor;
  readonly connections: number;
  /** Seconds of each autocannon run; each figure combines `rounds` runs. */
  readonly durationSeconds: number;
  /** Rounds of the same runs made first and not measured (warm-up under load). */
  readonly warmRounds: number;
  readonly rounds: number;
  readonly measured: Measured;
}

/** One aggregation over a day of events, grouped by reader: items read against events in the window. */
export interface Aggregate extends Verdict {
  /** Events in the pipeline's `OccurredOn` window (the floor: each must be read once). */
  readonly events: number;
  /** Events of the same folder outside the window (a key condition never reads them). */
  readonly outside: number;
  readonly readers: number;
  /** Items the timeline Queries read (ScannedCount). */
  readonly itemsRead: number | null;
  readonly requests: number | null;
  readonly rcu: number | null;
  /** In-process duration of the call through the real handler (warm). */
  readonly durationMs: number | null;
  readonly measured: Measured;
}

/** One size of the instance in the `decisions` entry: a warm decision's figures. */
interface DecisionSize {
  /** People in the instance. */
  readonly people: number;
  readonly p50Ms: number | null;
  /** DynamoDB request waves of one warm decision (requests that overlap are one wave): the median of 9. */
  readonly waves: number | null;
  readonly requests: number | null;
  readonly rcu: number | null;
}

/** Access decisions: a warm decision at two instance sizes, recorded decisions against publishes, whocanpass. */
export interface Decisions extends Verdict {
  readonly small: DecisionSize;
  readonly large: DecisionSize;
  /** False when seeding the large size did not finish in its time (the size reached is `large.people`). */
  readonly largeReached: boolean;
  readonly recordedPerSecond: number | null;
  readonly publishesPerSecond: number | null;
  /** recorded / publishes. */
  readonly throughputRatio: number | null;
  /** Where both were measured: over HTTP on the local runtime, or in process when it was not started. */
  readonly throughputOn: string;
  readonly whoCanPass: {
    readonly holders: number;
    readonly pageSize: number;
    readonly rows: number | null;
    /** Items the page's requests read (ScannedCount, BatchGet responses). */
    readonly itemsRead: number | null;
    readonly requests: number | null;
    readonly rcu: number | null;
    readonly durationMs: number | null;
  };
  readonly measured: Measured;
}

/** Doors: a lockdown's writes with many readers below, and the credential download's read units, full and incremental. */
export interface Doors extends Verdict {
  readonly lockdown: {
    /** Readers below the locked folder. */
    readonly readers: number;
    /** PutItem requests of the call (the lockdown item; the event's publish is a BatchWriteItem). */
    readonly puts: number | null;
    readonly requests: number | null;
    readonly wcu: number | null;
    /** Request waves of a warm decision under it. */
    readonly decisionWaves: number | null;
  };
  readonly download: {
    readonly cards: number;
    readonly pageSize: number;
    /** Every page of the full download. */
    readonly requests: number | null;
    readonly rcu: number | null;
    readonly rcuPerCard: number | null;
    readonly notModifiedRequests: number | null;
    readonly notModifiedRcu: number | null;
    /** People changed before the incremental download. */
    readonly changes: number;
    readonly incrementalRequests: number | null;
    readonly incrementalRcu: number | null;
  };
  readonly measured: Measured;
}

/** The operator console in Chromium (issue #39): the sign-in page's first load, and Live events under a burst. */
export interface ConsoleBench extends Verdict {
  /** Null when not measured. */
  readonly firstLoad: {
    /** Bytes the network transferred (compressed bodies and headers), every request of the load. */
    readonly bytes: number;
    readonly requests: number;
    /** The same bytes by DevTools resource type (document, script, stylesheet, fetch...). */
    readonly byType: Readonly<Record<string, number>>;
  } | null;
  readonly burst: {
    /** Events per second asked, and for how many seconds. */
    readonly rate: number;
    readonly seconds: number;
    /** From the first publish to the last answer. */
    readonly publishSeconds: number;
    readonly published: number;
    readonly publishFailures: number;
    /** What the event sink sustained. */
    readonly publishedPerSecond: number;
    /** Events the page received (shown, or counted once beyond its cap). */
    readonly received: number;
    /** Rows the page keeps, and events it no longer keeps. */
    readonly kept: number;
    readonly dropped: number;
    /** Main-thread tasks over 50 ms (the `longtask` threshold) during the burst, and the longest (0 when none). */
    readonly longTasks: number;
    readonly longestTaskMs: number;
    /** Events the page had received when its list was full (the middle sample), or null if it never was. */
    readonly receivedAtMiddle: number | null;
    /** JS heap in use after a forced collection: before the burst, once the list was full, and at the end. */
    readonly heapBeforeBytes: number;
    readonly heapMiddleBytes: number | null;
    readonly heapAfterBytes: number;
    /** heapAfterBytes / heapMiddleBytes: the growth while the list is full. */
    readonly heapGrowth: number | null;
  } | null;
  readonly measured: Measured;
}

export interface Results {
  readonly handlerOverhead: HandlerOverhead;
  readonly coldStart: ColdStart;
  readonly capacity: Capacity;
  readonly paging: Paging;
  readonly token: Token;
  readonly fanout: Fanout;
  readonly webhooks: Webhooks;
  readonly http: Http;
  readonly aggregate: Aggregate;
  readonly decisions: Decisions;
  readonly doors: Doors;
  readonly console: ConsoleBench;
}

/** The top-level keys, in order: the file has these and no others. */
export const RESULT_KEYS = ['handlerOverhead', 'coldStart', 'capacity', 'paging', 'token', 'fanout', 'webhooks', 'http', 'aggregate', 'decisions', 'doors', 'console'] as const satisfies ReadonlyArray<keyof Results>;

const load = (): number[] => loadavg().map((x) => Math.round(x * 100) / 100);

/** Starts the clock and load record of an entry. */
export function startMeasuring(mode: 'quick' | 'full'): () => Measured {
  const startedAt = new Date().toISOString();
  const loadavgStart = load();
  const t0 = performance.now();
  return () => ({
    mode,
    startedAt,
    loadavgStart,
    loadavgEnd: load(),
    wallMs: Math.round(performance.now() - t0),
    node: process.version,
    cpus: availableParallelism(),
  });
}
