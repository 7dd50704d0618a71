/**
 * The table `npm run bench` prints: one row per figure (per function for coldStart, per
 * operation for capacity), with its floor, ratio, goal and verdict. Pure; unit-tested.
 */
import { FIRST_LOAD_GOAL_BYTES, HEAP_GROWTH_GOAL, LONG_TASK_GOAL_MS } from './console.ts';
import { LAZY_IMPORT_MIN_BYTES, type ColdStartPhases, type LazyImportFigures, type Results } from './results.ts';

export interface Row {
  readonly entry: string;
  readonly figure: string;
  readonly floor: string;
  readonly ratio: string;
  readonly goal: string;
  readonly verdict: string;
}

const n = (x: number | null | undefined, digits = 1): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '—' : String(Math.round(x * 10 ** digits) / 10 ** digits);
const verdict = (ok: boolean, note?: string): string => (ok ? 'met' : note?.startsWith('could not be measured') ? 'NOT MEASURED' : 'missed');

/** The rows of a results file, in the order of its keys. */
export function rowsOf(r: Results): Row[] {
  const rows: Row[] = [];
  const h = r.handlerOverhead;
  rows.push({
    entry: 'handlerOverhead',
    figure: `GET person p50 ${n(h.p50Ms, 2)} ms`,
    floor: `GetItem p50 ${n(h.floor, 2)} ms`,
    ratio: n(h.ratio, 2),
    goal: '<= 1.25',
    verdict: verdict(h.meetsGoal, h.note),
  });
  const c = r.coldStart;
  rows.push({
    entry: 'coldStart (baseline)',
    figure: `${c.baseline.bundleBytes} B in ${c.baseline.startFiles} files, ${n(c.baseline.totalMs)} ms (cpu ${n(c.baseline.cpuMs)} ms)`,
    floor: '',
    ratio: '',
    goal: '',
    verdict: '',
  });
  const floors = [
    ['protected floor', c.protectedFloor, ''],
    ['status floor', c.statusFloor, ": the protected floor + the caller's status check"],
    ['list floor', c.listFloor, ': the status floor serving a page (a Query beside the BatchGetItem)'],
  ] as const;
  for (const [label, f, what] of floors) {
    if (!f) continue;
    rows.push({
      entry: `coldStart (${label})`,
      figure: `${f.bundleBytes} B in ${f.startFiles} files (+${f.beyondBaseline.bytes}), ${n(f.totalMs)} ms (cpu ${n(f.cpuMs)} ms, ${n(f.cpuRatio, 2)}x)${what}`,
      floor: `baseline ${n(c.baseline.totalMs)} ms`,
      ratio: n(f.ratio, 2),
      goal: 'reported',
      verdict: f.note ? verdict(false, f.note) : '',
    });
  }
  for (const [name, f] of Object.entries(c.families)) {
    const over = f.overProtectedFloor;
    const kind = f.overFloorOfKind;
    rows.push({
      entry: `coldStart.${name}`,
      figure:
        `${f.bundleBytes} B in ${f.startFiles} files (+${f.bundleBytes - c.baseline.bundleBytes}${f.assetBytes > f.bundleBytes ? `; ${f.assetBytes - f.bundleBytes} B more on first use` : ''}), ${n(f.totalMs)} ms (cpu ${n(f.cpuMs)} ms, ${n(f.cpuRatio, 2)}x)` +
        (over ? `; over the protected floor ${over.bytes >= 0 ? '+' : ''}${over.bytes} B, ${n(over.ratio, 2)}x (cpu ${n(over.cpuRatio, 2)}x)` : '') +
        (kind ? `; over the ${kind.floor === 'listFloor' ? 'list' : 'status'} floor ${n(kind.ratio, 2)}x` : ''),
      floor: `${n(f.floor)} ms`,
      ratio: n(f.ratio, 2),
      goal: '<= base + 120000 B, <= 1.3',
      verdict: verdict(f.meetsGoal, f.note),
    });
  }
  for (const [name, o] of Object.entries(r.capacity.operations)) {
    if (typeof o.writeUnitsPerRequest === 'number') {
      rows.push({
        entry: `capacity.${name}`,
        figure: `${o.requests} UpdateItem for ${String(o.apiRequests)} requests: ${n(o.writeUnitsPerRequest, 4)} WCU per request`,
        floor: '—',
        ratio: '—',
        goal: '<= 0.01 WCU/req',
        verdict: verdict(o.meetsGoal, o.note),
      });
      continue;
    }
    if (typeof o.wcuBilled === 'number') {
      rows.push({
        entry: `capacity.${name}`,
        figure: `${o.requests} req in ${String(o.waves)} wave (${o.commands.join('+')}), ${n(o.wcuBilled, 2)} WCU billed (Local: ${n(o.wcu, 2)})`,
        floor: `${n(o.floor, 0)} WCU`,
        ratio: n(o.ratio, 2),
        goal: '1 wave, <= 1.2',
        verdict: verdict(o.meetsGoal, o.note),
      });
      continue;
    }
    const search = typeof o.itemsRead === 'number';
    rows.push({
      entry: `capacity.${name}`,
      figure: search
        ? `${o.requests} req, ${o.itemsRead} items read for ${String(o.matches)} matches, index ${n(o.indexRcu as number, 2)} RCU`
        : o.requests === null
          ? '—'
          : `${o.requests} req (${o.commands.join('+')}), ${n(o.rcu, 2)} RCU, ${n(o.wcu, 2)} WCU`,
      floor: search ? `${n(o.floor, 2)} RCU by key` : `${n(o.floor, 0)} req`,
      ratio: n(o.ratio, 2),
      goal: search ? 'reads <= 2x matches' : '= 1 req',
      verdict: verdict(o.meetsGoal, o.note),
    });
  }
  const p = r.paging;
  rows.push({
    entry: 'paging',
    figure: `${p.people} people / ${p.pageSize}: ${p.pages} pages, ${n(p.rcu)} RCU`,
    floor: `1 Query: ${n(p.floor)} RCU`,
    ratio: n(p.ratio, 2),
    goal: '<= 1.2',
    verdict: verdict(p.meetsGoal, p.note),
  });
  const t = r.token;
  rows.push({
    entry: 'token.password',
    figure: `p50 ${n(t.passwordGrant.latency?.p50)} ms`,
    floor: `scrypt p50 ${n(t.floor)} ms`,
    ratio: n(t.ratio, 2),
    goal: '<= 1.1',
    verdict: verdict(t.meetsGoal, t.note),
  });
  rows.push({ entry: 'token.refresh', figure: `p50 ${n(t.refreshGrant.latency?.p50)} ms`, floor: '', ratio: '', goal: 'reported', verdict: '' });
  const f = r.fanout;
  rows.push({
    entry: 'fanout',
    figure:
      `${f.delivered}/${f.published} delivered, lost ${n(f.lost, 0)}, p50 ${n(f.latencyMs?.p50)} ms, p99 ${n(f.latencyMs?.p99)} ms ` +
      `(after the 201: p50 ${n(f.afterAnswerMs?.p50)} ms)`,
    floor: '',
    ratio: '',
    goal: 'lost 0, p50 <= 150 ms, p99 <= 400 ms',
    verdict: verdict(f.meetsGoal, f.note),
  });
  const b = f.breakdown;
  const trig = b?.readTriggers;
  rows.push({
    entry: 'fanout.breakdown',
    figure: b
      ? `after the 201, p50: wait for read ${n(b.waitForReadMs?.p50)} ms, GetRecords ${n(b.getRecordsMs?.p50)} ms, ` +
        `fan-out to message ${n(b.fanoutToReceiveMs?.p50)} ms (invocation ${n(b.invocationMs?.p50)} ms, ${n(b.batchRecords?.p50, 0)} records/batch); ` +
        `read on wake ${trig!.wake}, after a batch ${trig!.more}, after the ${f.streamPollIdleMs} ms idle wait ${trig!.idle}` +
        (b.idleWaitMs ? ` (waited p50 ${n(b.idleWaitMs.p50)} ms)` : '') +
        `; subscriber Queries ${b.subscriberReads.queries} for ${b.subscriberReads.batches} batches`
      : 'not measured',
    floor: '',
    ratio: '',
    goal: 'report',
    verdict: '',
  });
  rows.push({
    entry: 'fanout.aws',
    figure: `Lambda polls each shard every ${f.aws.pollIntervalMs} ms: +${f.aws.addedMeanMs} ms mean, +${f.aws.addedMaxMs} ms worst per event; polling free`,
    floor: '',
    ratio: '',
    goal: 'documented',
    verdict: '',
  });
  const m = f.mqtt;
  rows.push({
    entry: 'mqtt',
    figure: m
      ? `${m.delivered}/${f.published} delivered, lost ${m.lost}, duplicates ${m.duplicates}, p50 ${n(m.latencyMs?.p50)} ms, p99 ${n(m.latencyMs?.p99)} ms, ${n(m.messageBytes, 0)} B`
      : 'not measured',
    floor: 'fanout (same events)',
    ratio: m?.latencyMs && f.latencyMs ? n(m.latencyMs.p50 / f.latencyMs.p50, 2) : '',
    goal: 'lost 0, report',
    verdict: m ? (m.lost === 0 && m.duplicates === 0 ? 'ok' : 'MISSED') : verdict(false, f.note),
  });
  const w = r.webhooks;
  rows.push({
    entry: 'webhooks',
    figure:
      `${w.delivered}/${w.published} delivered, lost ${n(w.lost, 0)}, duplicates ${n(w.duplicates, 0)}, ` +
      `p50 ${n(w.latencyMs?.p50)} ms, p99 ${n(w.latencyMs?.p99)} ms (attempt p50 ${n(w.attemptMs?.p50)} ms)`,
    floor: '',
    ratio: '',
    goal: 'lost 0, p50 <= 1000 ms',
    verdict: verdict(w.meetsGoal, w.note),
  });
  for (const name of ['getPerson', 'publish'] as const) {
    const s = r.http[name];
    rows.push({
      entry: `http.${name}`,
      figure: `${n(s.rps, 0)} req/s, p99 ${n(s.p99Ms)} ms`,
      floor: `bare ${n(s.floor, 0)} req/s`,
      ratio: n(s.ratio, 2),
      goal: name === 'getPerson' ? '<= 1.18 (>= 0.85 x bare)' : 'report',
      verdict: verdict(s.meetsGoal, s.note),
    });
  }
  const a = r.aggregate;
  rows.push({
    entry: 'aggregate',
    figure: `${n(a.itemsRead, 0)} items read (${n(a.requests, 0)} req, ${n(a.rcu)} RCU, ${n(a.durationMs, 0)} ms)`,
    floor: `${a.events} events in the window`,
    ratio: n(a.ratio, 3),
    goal: '<= 1.05',
    verdict: verdict(a.meetsGoal, a.note),
  });
  const d = r.decisions;
  rows.push({
    entry: 'decisions',
    figure:
      `p50 ${n(d.small.p50Ms)} ms / ${n(d.large.p50Ms)} ms (${d.small.people} / ${d.large.people} people), ${n(d.small.waves, 0)} / ${n(d.large.waves, 0)} waves, ` +
      `${n(d.small.rcu)} / ${n(d.large.rcu)} RCU; recorded ${n(d.recordedPerSecond, 0)}/s vs publish ${n(d.publishesPerSecond, 0)}/s; ` +
      `whocanpass ${n(d.whoCanPass.itemsRead, 0)} items for ${d.whoCanPass.pageSize} of ${d.whoCanPass.holders}`,
    floor: `p50 at ${d.small.people} people`,
    ratio: n(d.ratio, 3),
    goal: 'p50 <= 1.2, <= 2 waves, same RCU, recorded >= 0.8 x publish',
    verdict: verdict(d.meetsGoal, d.note),
  });
  const o = r.doors;
  rows.push({
    entry: 'doors',
    figure:
      `lockdown of ${o.lockdown.readers} readers: ${n(o.lockdown.puts, 0)} PutItem, ${n(o.lockdown.wcu)} WCU, decision ${n(o.lockdown.decisionWaves, 0)} waves; ` +
      `download ${o.download.cards} cards ${n(o.download.rcu)} RCU (${n(o.download.rcuPerCard)}/card), 304 ${n(o.download.notModifiedRcu)} RCU, ` +
      `since ${o.download.changes} changes ${n(o.download.incrementalRcu)} RCU`,
    floor: `${o.download.changes} cards in the full download`,
    ratio: n(o.ratio, 3),
    goal: '1 PutItem, <= 2 waves, since <= 3',
    verdict: verdict(o.meetsGoal, o.note),
  });
  const cs = r.console;
  const load = cs.firstLoad;
  rows.push({
    entry: 'console.firstLoad',
    figure: load
      ? `sign-in page ${load.bytes} B in ${load.requests} requests (${Object.entries(load.byType).map(([t, b]) => `${t} ${b}`).join(', ')})`
      : '—',
    floor: '—',
    ratio: '—',
    goal: `<= ${FIRST_LOAD_GOAL_BYTES} B`,
    verdict: load ? verdict(load.bytes <= FIRST_LOAD_GOAL_BYTES) : verdict(false, cs.note),
  });
  const burst = cs.burst;
  const mb = (x: number | null) => n(x === null ? null : x / 1e6, 1);
  rows.push({
    entry: 'console.burst',
    figure: burst
      ? `${burst.published} events in ${n(burst.publishSeconds)} s (${n(burst.publishedPerSecond)}/s of ${burst.rate}/s asked for ${burst.seconds} s): ${burst.received} counted, ${burst.kept} kept, ${burst.dropped} not kept; ` +
        `${burst.longTasks} tasks > 50 ms, longest ${burst.longestTaskMs} ms; heap ${mb(burst.heapBeforeBytes)} / ${mb(burst.heapMiddleBytes)} / ${mb(burst.heapAfterBytes)} MB (before / list full at ${n(burst.receivedAtMiddle, 0)} events / end)`
      : '—',
    floor: '—',
    ratio: burst ? n(burst.heapGrowth, 3) : '—',
    goal: `rate reached, all counted, task <= ${LONG_TASK_GOAL_MS} ms, heap end/middle <= ${HEAP_GROWTH_GOAL}`,
    verdict: verdict(cs.meetsGoal, cs.note),
  });
  return rows;
}

const kb = (bytes: number): string => `${(bytes / 1000).toFixed(1)}K`;

/**
 * The bundle analysis: per function, what its bundle carries beyond the baseline's, and the
 * largest contributors of that (a package, or a module of ours), from esbuild's metafile.
 */
export function bundleAnalysis(r: Results, top = 6): string {
  const c = r.coldStart;
  const lines = [`bundle analysis (bytes beyond the baseline's ${c.baseline.bundleBytes} B, largest contributors first)`];
  const base = c.baseline.topContributors.slice(0, top).map((p) => `${p.name} ${kb(p.bytes)}`);
  if (base.length) lines.push(`  ${'baseline'.padEnd(10)} ${kb(c.baseline.bundleBytes).padStart(7)}  ${base.join(', ')}`);
  const line = (name: string, bytes: number, parts: ReadonlyArray<{ readonly name: string; readonly bytes: number }>) =>
    `  ${name.padEnd(10)} ${`${bytes < 0 ? '-' : '+'}${kb(Math.abs(bytes))}`.padStart(7)}  ${parts.slice(0, top).map((p) => `${p.name} +${kb(p.bytes)}`).join(', ')}`;
  const pf = c.protectedFloor;
  if (pf) lines.push(line('floor', pf.beyondBaseline.bytes, pf.beyondBaseline.top));
  for (const [name, f] of Object.entries(c.families)) {
    lines.push(line(name, f.beyondBaseline?.bytes ?? f.bundleBytes - c.baseline.bundleBytes, f.beyondBaseline?.top ?? []));
  }
  if (pf) {
    lines.push(`bundle analysis (bytes beyond the protected floor's ${pf.bundleBytes} B, largest contributors first)`);
    for (const [name, f] of Object.entries(c.families)) if (f.overProtectedFloor) lines.push(line(name, f.overProtectedFloor.bytes, f.overProtectedFloor.top));
  }
  return lines.join('\n');
}

/**
 * The time analysis beside the bundle analysis: each function's first request split at its
 * outgoing requests (medians, ms), under the baseline's and the floors', so that what a function
 * spends beyond its floor shows where it is spent: before its reads go out, between its first
 * request and its last answer (reads one after another, or work between them), or after.
 */
export function phaseAnalysis(r: Results): string {
  const c = r.coldStart;
  const lines = ['first request by phase (medians, ms): before its first request out | from then to its last answer | after it'];
  const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—').padStart(6);
  const line = (name: string, p: ColdStartPhases | null | undefined, total: number | null | undefined) =>
    p
      ? `  ${name.padEnd(15)} ${ms(p.beforeSendMs)} | ${ms(p.waitMs)} | ${ms(p.afterMs)}   (${p.sends} request${p.sends === 1 ? '' : 's'} out; first request ${n(total)} ms)`
      : `  ${name.padEnd(15)} ${ms(Number.NaN)} | ${ms(Number.NaN)} | ${ms(Number.NaN)}   (no request out, or none answered; first request ${n(total)} ms)`;
  lines.push(line('baseline', c.baseline.firstRequestPhases, c.baseline.firstRequestMs));
  for (const [name, f] of [
    ['protected floor', c.protectedFloor],
    ['status floor', c.statusFloor],
    ['list floor', c.listFloor],
  ] as const) {
    if (f) lines.push(line(name, f.firstRequestPhases, f.firstRequestMs));
  }
  for (const [name, f] of Object.entries(c.families)) lines.push(line(name, f.firstRequestPhases, f.firstRequestMs));
  return lines.join('\n');
}

/** The rows as an aligned text table. */
export function renderTable(rows: readonly Row[]): string {
  const header: Row = { entry: 'entry', figure: 'figure', floor: 'floor', ratio: 'ratio', goal: 'goal', verdict: 'verdict' };
  const cols = Object.keys(header) as Array<keyof Row>;
  const width = Object.fromEntries(cols.map((k) => [k, Math.max(...[header, ...rows].map((r) => r[k].length))])) as Record<keyof Row, number>;
  const line = (r: Row) => cols.map((k) => r[k].padEnd(width[k])).join('  ').trimEnd();
  return [line(header), cols.map((k) => '-'.repeat(width[k])).join('  '), ...rows.map(line)].join('\n');
}

/**
 * What each `import()` of the functions' code saves (bench/lazy-imports.ts), one line per call:
 * the largest saving of start code over the functions it is in, of the first load of its module
 * where that module is itself lazily loaded, and whether that reaches the least a kept import()
 * must save.
 */
export function lazyImportAnalysis(sites: readonly LazyImportFigures[]): string {
  const lines = [`import() sites: bytes each saves a cold start's code (max over functions; first load of its module where lazy), kept at ${kb(LAZY_IMPORT_MIN_BYTES)} or more`];
  for (const s of sites) {
    const families = s.savings.map((x) => `${x.family}${x.breaksBytesGoal ? ' (over the size goal if static)' : ''}`).join(' ');
    lines.push(
      `  ${s.pays ? 'pays ' : 'folds'} ${`${s.file}:${s.line}`.padEnd(44)} ${kb(s.maxStartBytes).padStart(8)} ${s.maxWithModuleBytes ? `(first load ${kb(s.maxWithModuleBytes)})` : ''}  ${s.specifier}  [${families || 'in no function'}]`,
    );
  }
  return lines.join('\n');
}
