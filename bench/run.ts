/**
 * `npm run bench [-- --quick]`: measures every hot path beside its physical floor in one run,
 * against a DynamoDB Local the run starts itself (in memory, free port, stopped at the end), and
 * writes bench/results/latest.json (exactly the keys of {@link RESULT_KEYS}), prints a table and
 * generates docs/cost.md from the measured figures.
 *
 * Benchmarks are not tests: a missed goal is reported, never an exit code. The exit code is
 * non-zero only when the run itself could not be made (no Java, no results file written).
 *
 * Bounded: each phase has a time limit and the run a budget (full 5 min, quick 1 min, on a
 * loaded 2-core machine); what did not fit is written as not measured, with the reason.
 * Everything started is stopped in `finally` blocks and on SIGINT/SIGTERM.
 */
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getObject } from '#shared/db/objects-repo.ts';
import { memoryOf } from '../infra/sizing.ts';
import { parseArgs, type Mode } from './args.ts';
import { bundleAll, type BundleResult } from './bundle.ts';
import { measureLazyImports } from './lazy-imports.ts';
import { costMarkdown, type OperationFigures } from './cost.ts';
import { startBenchDynamo } from './in-memory-dynamo.ts';
import { createHarness, expectStatus, type Harness } from './harness.ts';
import { BASELINE, BUNDLE_BYTES_OVER_BASELINE, REFERENCE_ENTRIES, killDrivers, measureColdStart } from './measure-cold-start.ts';
import { measureAggregate } from './measure-aggregate.ts';
import { measureDecisions } from './measure-decisions.ts';
import { measureDoors } from './measure-doors.ts';
import { CHROMIUM, measureConsole } from './console.ts';
import { measureCapacity, measurePaging, setupEvents } from './measure-capacity.ts';
import { measureHandlerOverhead } from './measure-handler.ts';
import { describeFanoutProgress, measureFanout, newFanoutProgress, measureHttp, startBenchRuntime, type BenchRuntime } from './measure-runtime.ts';
import { measureToken } from './measure-token.ts';
import { measureWebhooks } from './measure-webhooks.ts';
import { RESULT_KEYS, startMeasuring, type LazyImportFigures, type Measured, type Results } from './results.ts';
import { bundleAnalysis, lazyImportAnalysis, phaseAnalysis, renderTable, rowsOf } from './results-table.ts';
import { seedPeople } from './seed.ts';
import { unmeasured } from './unmeasured.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_FILE = join(ROOT, 'bench', 'results', 'latest.json');
const COST_FILE = join(ROOT, 'docs', 'cost.md');


/** The coldStart phase's limit, and the time after which it starts no new round of drivers. */
const COLD_START_PHASE_MS = 90_000;
const COLD_START_ROUNDS_MS = 90_000;

/** How much of everything a run measures. */
const SETTINGS = {
  quick: {
    budgetMs: 54_000,
    people: 1_000,
    handlerSamples: 120,
    repetitions: 3,
    passwordSamples: 2,
    refreshSamples: 4,
    coldStartRounds: 1,
    fanoutEvents: 200,
    fanoutSettleMs: 5_000,
    webhookEvents: 200,
    webhookSettleMs: 10_000,
    httpSeconds: 1,
    httpRounds: 1,
    httpWarmRounds: 1,
    aggregateEvents: 10_000,
    decisionsLarge: 10_000,
    doorsCards: 1_000,
    decisionSamples: 50,
    whoCanPassPeople: 1_000,
    consoleSeconds: 5,
  },
  full: {
    budgetMs: 285_000,
    people: 10_000,
    handlerSamples: 400,
    repetitions: 5,
    passwordSamples: 6,
    refreshSamples: 12,
    coldStartRounds: 9,
    fanoutEvents: 1_000,
    fanoutSettleMs: 15_000,
    webhookEvents: 1_000,
    webhookSettleMs: 30_000,
    httpSeconds: 1.5,
    httpRounds: 3,
    httpWarmRounds: 2,
    aggregateEvents: 10_000,
    decisionsLarge: 100_000,
    doorsCards: 10_000,
    decisionSamples: 300,
    whoCanPassPeople: 10_000,
    consoleSeconds: 10,
  },
} as const;

/** The entries measured on the local runtime (started only when one of them is asked for). */
const RUNTIME_PHASES = ['fanout', 'webhooks', 'http', 'decisions', 'console'] as const;
/** Issue #39: the live events page receiving this many events a second. */
const CONSOLE_EVENTS_PER_SECOND = 200;

const MATCHES = 10;
const MATCH_NAME = 'Needle Match';
const PAGE_SIZE = 100;
const CLIENTS = 10;

const log = (line: string) => process.stderr.write(`[bench +${((performance.now() - T0) / 1000).toFixed(1)}s] ${line}\n`);
const T0 = performance.now();

/** Things to stop, last started first. */
const cleanups: Array<() => Promise<void>> = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length) {
    const stop = cleanups.pop()!;
    try {
      await stop();
    } catch (err) {
      log(`cleanup failed: ${(err as Error).message}`);
    }
  }
}

/** Set by SIGINT/SIGTERM: no phase starts any more and no results are written. */
let interrupted: NodeJS.Signals | undefined;

function onSignal(signal: NodeJS.Signals) {
  if (interrupted) return;
  interrupted = signal;
  log(`${signal}: stopping what the benchmark started; no results are written`);
  const force = setTimeout(() => process.exit(130), 15_000);
  force.unref();
  void cleanUp().finally(() => process.exit(130));
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${Math.round(ms / 1000)} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const parsed = parseArgs(argv);
  if ('usage' in parsed) {
    (parsed.exitCode ? process.stderr : process.stdout).write(parsed.usage);
    return parsed.exitCode;
  }
  const { mode, only } = parsed;
  const s = SETTINGS[mode];
  // The budget counts from this process's start (tsx's loader included; npm's own start, ~2 s, is not).
  const deadline = Date.now() - performance.now() + s.budgetMs;
  const left = () => deadline - Date.now();
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A last resort: a run that hangs past its budget still stops what it started.
  const watchdog = setTimeout(() => {
    log('the run is past its time budget: stopping');
    void cleanUp().finally(() => process.exit(3));
  }, s.budgetMs + 20_000);
  watchdog.unref();

  log(`${mode} run, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const workDir = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  cleanups.push(() => rm(workDir, { recursive: true, force: true }));
  // Again at exit: a phase abandoned at its time limit may still write there after the cleanup.
  process.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
  cleanups.push(async () => killDrivers());

  const results: Partial<Results> = {};
  /** Runs one phase within its time limit; `progress` says how far a phase cut off by it got. */
  const phase = async <K extends keyof Results>(key: K, limitMs: number, run: (measured: () => Measured) => Promise<Results[K]>, progress?: () => string) => {
    const measured = startMeasuring(mode);
    if (results[key] || interrupted) return;
    if (only && !only.has(key)) {
      results[key] = unmeasured[key]('not selected (--only)', measured());
      return;
    }
    const budget = Math.min(limitMs, left());
    if (budget < 2_000) {
      results[key] = unmeasured[key]('the run\'s time budget was spent before this phase', measured());
      log(`${key}: skipped (time budget)`);
      return;
    }
    log(`${key}...`);
    try {
      results[key] = await withTimeout(run(measured), budget, key);
      log(`${key}: done (${results[key]!.meetsGoal ? 'goal met' : 'goal not met'})`);
    } catch (err) {
      const reason = progress ? `${(err as Error).message} (${progress()})` : (err as Error).message;
      results[key] = unmeasured[key](reason, measured());
      log(`${key}: not measured: ${reason}`);
    }
  };
  const fail = (keys: ReadonlyArray<keyof Results>, reason: string) => {
    for (const k of keys) if (!results[k]) (results as Record<string, unknown>)[k] = unmeasured[k](reason, startMeasuring(mode)());
  };

  try {
    log('starting DynamoDB Local (in memory)');
    const dynamo = await withTimeout(startBenchDynamo(), 60_000, 'DynamoDB Local start');
    cleanups.push(() => dynamo.stop());
    // Bundling runs while the table is seeded (nothing is timed meanwhile); not while Java starts,
    // which it slows down more than it saves on a busy machine.
    const bundling: Promise<Map<string, BundleResult>> =
      !only || only.has('coldStart') ? bundleAll(join(workDir, 'bundles'), REFERENCE_ENTRIES) : Promise.resolve(new Map());
    bundling.then((b) => b.size && log(`bundled ${b.size} functions`), () => {});
    // What each import() saves: every function built again per lazily loaded module it reaches.
    // After the bundles: the baseline's bytes say which start code would break the size goal.
    const lazying: Promise<LazyImportFigures[]> =
      !only || only.has('coldStart')
        ? bundling.then((b) => measureLazyImports({ maxStartBytes: b.get(BASELINE)!.bundleBytes + BUNDLE_BYTES_OVER_BASELINE }))
        : Promise.resolve([]);
    lazying.then((l) => l.length && log(`measured ${l.length} import() sites`), (err: unknown) => log(`import() sites not measured: ${(err as Error).message}`));
    const h: Harness = await createHarness(dynamo.endpoint, workDir);
    const harness = h;
    const instanceKey = h.tenant.instance.key;
    const admin = h.tenant.tokens.Administrator;

    // Only the in-process phases read the seeded people: a run of the runtime phases alone (their
    // own table) seeds none, so a loaded machine's budget goes to what was asked for.
    const people = !only || [...only].some((k) => !(RUNTIME_PHASES as readonly string[]).includes(k)) ? s.people : 0;
    log(`seeding ${people} people`);
    const folder = expectStatus('POST folder', await h.call('POST', `/api/f/${instanceKey}/folders`, { token: admin, body: { $type: 'FolderInfo', CommonName: 'bench people' } }), 201);
    const folderObject = (await getObject(h.db, String(folder.body.Key)))!;
    const keys = await seedPeople(h.db, { folder: folderObject, total: people, matches: MATCHES, matchName: MATCH_NAME });
    const person = expectStatus(
      'POST person',
      await h.call('POST', `/api/f/${instanceKey}/people`, {
        token: admin,
        body: { $type: 'PersonInfo', GivenName: 'Ada', Surname: 'Reader', Addresses: [{ $type: 'EmailAddressInfo', MailTo: 'ada@example.com' }] },
      }),
      201,
    );
    const seed = {
      folderKey: String(folder.body.Key),
      personHref: String(person.body.Href),
      personKey: String(person.body.Key),
      related: keys.slice(0, 3).map((key, i) => ({ key, name: `Person ${String(i).padStart(5, '0')}` })),
    };
    log('seeded');
    const events = await setupEvents(h, instanceKey);
    if (events.reason) log(`events cannot be set up: ${events.reason}`);
    // Nothing else may use the CPU while the timings run.
    const bundles = await bundling.catch((err: unknown) => err as Error);
    const lazyImports = await lazying.catch(() => []);

    await phase('handlerOverhead', 60_000, (measured) =>
      measureHandlerOverhead({ h: harness, personHref: seed.personHref, personKey: seed.personKey, samples: s.handlerSamples, measured }),
    );
    await phase('capacity', 60_000, (measured) =>
      measureCapacity({
        h: harness,
        instanceKey,
        folderKey: seed.folderKey,
        personHref: seed.personHref,
        related: seed.related,
        events,
        matchName: MATCH_NAME,
        matches: MATCHES,
        people: s.people,
        repetitions: s.repetitions,
        measured,
      }),
    );
    await phase('paging', 60_000, (measured) =>
      measurePaging({ h: harness, folderKey: seed.folderKey, people: s.people, pageSize: PAGE_SIZE, quick: mode === 'quick', measured }),
    );
    await phase('aggregate', 60_000, (measured) => measureAggregate({ h: harness, instanceKey, events: s.aggregateEvents, measured }));
    let doorsStep = 'setting up';
    await phase(
      'doors',
      mode === 'quick' ? 20_000 : 45_000,
      (measured) =>
        measureDoors({
          h: harness,
          readers: 1_000,
          cards: s.doorsCards,
          changes: 10,
          measured,
          progress: (step) => {
            doorsStep = step;
            log(`doors: ${step}`);
          },
        }),
      () => doorsStep,
    );
    await phase('token', 60_000, (measured) =>
      measureToken({ h: harness, passwordSamples: s.passwordSamples, refreshSamples: s.refreshSamples, measured }),
    );
    await phase('coldStart', COLD_START_PHASE_MS, async (measured) => {
      if (bundles instanceof Error) throw new Error(`bundling failed: ${bundles.message}`);
      const dir = join(workDir, 'events');
      await mkdir(dir, { recursive: true });
      return measureColdStart({
        bundles,
        context: {
          endpoint: dynamo.endpoint,
          tableName: harness.db.tableName,
          dataDir: harness.dataDir,
          token: harness.tenant.tokens.Operator,
          instanceKey,
          personKey: seed.personKey,
          personHref: seed.personHref,
          searchName: MATCH_NAME,
        },
        rounds: s.coldStartRounds,
        workDir: dir,
        lazyImports,
        // Leave room for the runtime phases, and start no round the phase's own limit would cut
        // off (a loaded machine: the rounds done still count).
        deadline: Date.now() + Math.max(5_000, Math.min(COLD_START_ROUNDS_MS, left() - (mode === 'quick' ? 20_000 : 60_000))),
        measured,
      });
    });

    // The local runtime last: its stream poller would otherwise run beside the in-process timings.
    try {
      if (only && !RUNTIME_PHASES.some((k) => only.has(k))) {
        fail(RUNTIME_PHASES, 'not selected (--only)');
      } else if (left() > 8_000) {
        log('starting the local runtime');
        const runtime: BenchRuntime = await withTimeout(startBenchRuntime(dynamo.endpoint, workDir), 30_000, 'local runtime start');
        cleanups.push(() => runtime.stop());
        // First on the runtime: its recorded decisions and publishes go over HTTP; the in-process
        // decisions beside an idle runtime (its stream poller reads nothing of the harness's table).
        let decisionsStep = 'setting up';
        await phase(
          'decisions',
          mode === 'quick' ? 30_000 : 150_000,
          (measured) =>
            measureDecisions({
              h: harness,
              small: 1_000,
              large: s.decisionsLarge,
              samples: s.decisionSamples,
              seconds: mode === 'quick' ? 1 : 2,
              whoCanPassPeople: s.whoCanPassPeople,
              // Seeding the large size stops in time to measure it within the phase.
              seedDeadline: Date.now() + (mode === 'quick' ? 8_000 : 85_000),
              measured,
              rt: runtime,
              progress: (step) => {
                decisionsStep = step;
                log(`decisions: ${step}`);
              },
            }),
          () => decisionsStep,
        );
        const fanoutLimit = mode === 'quick' ? 20_000 : 110_000;
        const fanoutProgress = newFanoutProgress();
        await phase(
          'fanout',
          fanoutLimit,
          (measured) =>
            measureFanout({
              rt: runtime,
              events: s.fanoutEvents,
              clients: CLIENTS,
              settleMs: s.fanoutSettleMs,
              // Publishing stops in time to settle within the phase and to leave the http phase its
              // time; the margin covers the subscribers' set-up and the publishes still in flight on a loaded machine.
              publishDeadline: Date.now() + Math.max(3_000, Math.min(fanoutLimit, left() - (mode === 'quick' ? 8_000 : 30_000)) - s.fanoutSettleMs - (mode === 'quick' ? 2_000 : 8_000)),
              measured,
              progress: fanoutProgress,
            }),
          () => describeFanoutProgress(fanoutProgress),
        );
        const webhooksLimit = mode === 'quick' ? 25_000 : 120_000;
        await phase('webhooks', webhooksLimit, (measured) =>
          measureWebhooks({
            rt: runtime,
            events: s.webhookEvents,
            clients: CLIENTS,
            settleMs: s.webhookSettleMs,
            publishDeadline: Date.now() + Math.max(3_000, Math.min(webhooksLimit, left() - (mode === 'quick' ? 8_000 : 30_000)) - s.webhookSettleMs - 4_000),
            measured,
          }),
        );
        await phase('http', 60_000, (measured) =>
          measureHttp({
            rt: runtime,
            connections: CLIENTS,
            seconds: s.httpSeconds,
            rounds: s.httpRounds,
            warmRounds: s.httpWarmRounds,
            deadline: Date.now() + Math.min(60_000, left()) - 3_000,
            measured,
          }),
        );
        // The console in Chromium last: the browser would otherwise share the CPU with the timings above.
        if (!CHROMIUM) fail(['console'], 'no Chromium (/usr/bin/chromium): apt-get install chromium');
        let consoleStep = 'starting Chromium';
        await phase(
          'console',
          mode === 'quick' ? 30_000 : 60_000,
          (measured) =>
            measureConsole({
              rt: runtime,
              chromium: CHROMIUM!,
              rate: CONSOLE_EVENTS_PER_SECOND,
              seconds: s.consoleSeconds,
              settleMs: 10_000,
              measured,
              progress: (step) => {
                consoleStep = step;
                log(`console: ${step}`);
              },
            }),
          () => consoleStep,
        );
      }
    } catch (err) {
      fail(RUNTIME_PHASES, `the local runtime could not be started: ${(err as Error).message}`);
    }
    fail(RUNTIME_PHASES, 'the run\'s time budget was spent before the local runtime phases');
  } catch (err) {
    if (!interrupted) log(`setup failed: ${(err as Error).stack ?? err}`);
    fail(RESULT_KEYS, `setup failed: ${(err as Error).message}`);
  } finally {
    log('stopping');
    await cleanUp();
  }

  if (interrupted) return 130;
  const ordered = Object.fromEntries(RESULT_KEYS.map((k) => [k, results[k]])) as unknown as Results;
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(ordered, null, 2)}\n`);
  process.stdout.write(`\n${renderTable(rowsOf(ordered))}\n\n`);
  if (Object.keys(ordered.coldStart.families).length) process.stdout.write(`${bundleAnalysis(ordered)}\n\n${phaseAnalysis(ordered)}\n\n`);
  if (ordered.coldStart.lazyImports.length) process.stdout.write(`${lazyImportAnalysis(ordered.coldStart.lazyImports)}\n\n`);
  // A partial run (--only) leaves the cost model as the last whole run wrote it.
  if (!only) await writeFile(COST_FILE, costMarkdown(await costInput(ordered, mode)));
  const met = RESULT_KEYS.filter((k) => ordered[k].meetsGoal);
  process.stdout.write(
    `${mode} run in ${((performance.now() - T0) / 1000).toFixed(1)} s: goals met ${met.length}/${RESULT_KEYS.length} ` +
      `(${RESULT_KEYS.map((k) => `${k} ${ordered[k].meetsGoal ? 'met' : 'not met'}`).join(', ')})\n` +
      `wrote ${RESULTS_FILE.slice(ROOT.length)}${only ? ' (--only: docs/cost.md left as it was)' : ` and ${COST_FILE.slice(ROOT.length)}`}\n`,
  );
  return 0;
}

/** The cost model's inputs, taken from the measured results (never typed in). */
async function costInput(r: Results, mode: Mode) {
  const op = (name: string, family: string, f: { durationMs?: number | null; rcu: number | null; wcu: number | null } | undefined): OperationFigures => ({
    name,
    family,
    memoryMb: memoryOf(family),
    durationMs: f?.durationMs ?? null,
    rcu: f?.rcu ?? null,
    wcu: f?.wcu ?? null,
  });
  const cap = (key: string) => {
    const o = r.capacity.operations[key];
    // Write units as AWS bills them where the entry computed them (DynamoDB Local undercounts transactions).
    return o ? { durationMs: o.durationMs?.p50 ?? null, rcu: o.rcu, wcu: typeof o.wcuBilled === 'number' ? o.wcuBilled : o.wcu } : undefined;
  };
  const search = r.capacity.operations.indexedSearch;
  const grant = (g: Results['token']['passwordGrant']) => ({ durationMs: g.latency?.p50 ?? null, rcu: g.rcu, wcu: g.wcu });
  const notes: string[] = [];
  for (const [key, o] of Object.entries(r.capacity.operations)) if (o.note) notes.push(`capacity.${key}: ${o.note}`);
  return {
    generatedAt: new Date().toISOString(),
    mode,
    loadavg: r.capacity.measured.loadavgStart,
    operations: [
      op('GET one person', 'people', cap('getOne')),
      op('GET a page of 20 people', 'people', cap('listPage')),
      op('POST a person with 2 cards', 'people', cap('createPersonWith2Cards')),
      op('POST an event with 3 related objects', 'events', cap('publishWith3Related')),
      op(`POST search returning ${String(search?.matches ?? 10)} people`, 'search', cap('indexedSearch')),
      op('POST /token, password grant', 'token', grant(r.token.passwordGrant)),
      op('POST /token, refresh grant', 'token', grant(r.token.refreshGrant)),
    ],
    fanoutMessageBytes: r.fanout.messageBytes,
    mqttMessageBytes: r.fanout.mqtt?.messageBytes ?? null,
    webhookMemoryMb: memoryOf('webhooks'),
    webhookAttemptMs: r.webhooks.attemptMs?.p50 ?? null,
    lazyImports: r.coldStart.lazyImports,
    notes,
  };
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
    await cleanUp();
    process.exit(1);
  },
);
