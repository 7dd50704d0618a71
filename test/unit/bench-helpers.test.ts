/**
 * The benchmark's other pure helpers: its command line, the memory the stack deploys each family
 * with, the esbuild options every function is built with, the files a cold start loads, the bytes-per-package breakdown, the
 * spread of search matches through the seeded people, and the printed table.
 */
import { describe, expect, it } from 'vitest';
import { esbuildOptions, functionBundling } from '../../infra/bundling.ts';
import { DEFAULT_MEMORY_MB, memoryOf } from '../../infra/sizing.ts';
import { parseArgs } from '../../bench/args.ts';
import { beyondBaseline, bytesByPackage, contributorOf, loadedFiles, packageOf } from '../../bench/bundle.ts';
import { LIST_FLOOR, firstRequests } from '../../bench/measure-cold-start.ts';
import { RESULT_KEYS, type Results } from '../../bench/results.ts';
import { matchPositions } from '../../bench/seed.ts';
import { bundleAnalysis, phaseAnalysis, renderTable, rowsOf } from '../../bench/results-table.ts';
import { unmeasured } from '../../bench/unmeasured.ts';

describe('parseArgs', () => {
  it('reads --quick and --only', () => {
    expect(parseArgs([])).toEqual({ mode: 'full' });
    expect(parseArgs(['--quick'])).toEqual({ mode: 'quick' });
    const only = parseArgs(['--quick', '--only', 'paging,token']);
    expect(only).toMatchObject({ mode: 'quick' });
    expect([...(only as unknown as { only: Set<string> }).only]).toEqual(['paging', 'token']);
    expect([...(parseArgs(['--only=http']) as unknown as { only: Set<string> }).only]).toEqual(['http']);
  });

  it('rejects unknown arguments and entries with usage and exit code 2', () => {
    expect(parseArgs(['--fast'])).toMatchObject({ exitCode: 2 });
    expect(parseArgs(['--only', 'nope'])).toMatchObject({ exitCode: 2 });
    expect(parseArgs(['--only'])).toMatchObject({ exitCode: 2 });
    expect(parseArgs(['--help'])).toMatchObject({ exitCode: 0 });
  });
});

describe('sizing', () => {
  it('prices each family at the memory the stack deploys it with', () => {
    expect(memoryOf('token')).toBe(1024);
    expect(memoryOf('people')).toBe(DEFAULT_MEMORY_MB);
    expect(DEFAULT_MEMORY_MB).toBe(512);
  });
});

describe('bundling', () => {
  it('builds every function as split, minified ESM for Node.js 22 with maps and the SDK bundled', () => {
    const o = esbuildOptions(functionBundling('/x/functions/people/handler.ts', '9.9.9'), '/out/people');
    expect(o).toMatchObject({
      entryPoints: { index: '/x/functions/people/handler.ts' },
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      minify: true,
      sourcemap: true,
      sourcesContent: false,
      external: [],
      mainFields: ['module', 'main'],
      outdir: '/out/people',
      outExtension: { '.js': '.mjs' },
      metafile: true,
      define: { __GATEHOUSE_VERSION__: '"9.9.9"' },
    });
    // No banner: every chunk of a cold start would read it (see checkNoDynamicRequire).
    expect(o.banner).toBeUndefined();
  });

  it("leaves the AWS SDK out when the operator opts for the runtime's copy", () => {
    const o = esbuildOptions(functionBundling('/x/functions/people/handler.ts', '9.9.9', { bundleAwsSdk: false }), '/out/people');
    expect(o.external).toEqual(['@aws-sdk/*']);
  });

  it('counts as loaded at start the handler file and the chunks it imports statically, transitively', () => {
    const out = (imports: Array<{ path: string; kind: 'import-statement' | 'dynamic-import'; external?: boolean }>, bytes = 1) => ({ bytes, inputs: {}, exports: [], imports });
    const files = loadedFiles({
      inputs: {},
      outputs: {
        'o/index.mjs': out([
          { path: 'o/chunk-A.mjs', kind: 'import-statement' },
          { path: 'o/chunk-L.mjs', kind: 'dynamic-import' },
          { path: 'node:fs', kind: 'import-statement', external: true },
        ]),
        'o/index.mjs.map': out([]),
        'o/chunk-A.mjs': out([{ path: 'o/chunk-B.mjs', kind: 'import-statement' }]),
        'o/chunk-B.mjs': out([{ path: 'o/chunk-A.mjs', kind: 'import-statement' }]),
        'o/chunk-L.mjs': out([{ path: 'o/chunk-B.mjs', kind: 'import-statement' }, { path: 'o/chunk-M.mjs', kind: 'import-statement' }]),
        'o/chunk-M.mjs': out([]),
      },
    });
    expect([...files.atStart].sort()).toEqual(['o/chunk-A.mjs', 'o/chunk-B.mjs', 'o/index.mjs']);
    expect([...files.lazy].sort()).toEqual(['o/chunk-L.mjs', 'o/chunk-M.mjs']);
    expect(() => loadedFiles({ inputs: {}, outputs: { 'o/other.mjs': out([]) } })).toThrow(/index\.mjs/);
  });

  it('attributes bundle bytes to packages', () => {
    expect(packageOf('node_modules/zod/v4/core/x.js')).toBe('zod');
    expect(packageOf('node_modules/@aws-sdk/client-dynamodb/dist-es/a.js')).toBe('@aws-sdk/client-dynamodb');
    expect(packageOf('node_modules/a/node_modules/@smithy/core/b.js')).toBe('@smithy/core');
    expect(packageOf('shared/db/client.ts')).toBe('(project)');
    const output = {
      bytes: 0,
      exports: [],
      imports: [],
      inputs: {
        'node_modules/zod/a.js': { bytesInOutput: 10 },
        'node_modules/zod/b.js': { bytesInOutput: 5 },
        'shared/x.ts': { bytesInOutput: 7 },
      },
    };
    expect(bytesByPackage([output])).toEqual([
      { name: 'zod', bytes: 15 },
      { name: '(project)', bytes: 7 },
    ]);
  });
});

describe('the bundle analysis', () => {
  it('names our own modules one by one and packages as a whole', () => {
    expect(contributorOf('node_modules/zod/v4/mini/x.js')).toBe('zod');
    expect(contributorOf('shared/config.ts')).toBe('shared/config.ts');
    const output = {
      bytes: 0,
      exports: [],
      imports: [],
      inputs: {
        'node_modules/zod/a.js': { bytesInOutput: 10 },
        'shared/config.ts': { bytesInOutput: 7 },
        'shared/x.ts': { bytesInOutput: 3 },
      },
    };
    expect(bytesByPackage([output], contributorOf)).toEqual([
      { name: 'zod', bytes: 10 },
      { name: 'shared/config.ts', bytes: 7 },
      { name: 'shared/x.ts', bytes: 3 },
    ]);
  });

  it("keeps what a bundle adds to the baseline's contributors, largest first", () => {
    const family = [
      { name: '@smithy/core', bytes: 140 },
      { name: 'zod', bytes: 90 },
      { name: '@aws-sdk/client-dynamodb', bytes: 30 },
      { name: 'shared/config.ts', bytes: 5 },
    ];
    const baseline = [
      { name: '@smithy/core', bytes: 130 },
      { name: '@aws-sdk/client-dynamodb', bytes: 30 },
    ];
    expect(beyondBaseline(family, baseline)).toEqual([
      { name: 'zod', bytes: 90 },
      { name: '@smithy/core', bytes: 10 },
      { name: 'shared/config.ts', bytes: 5 },
    ]);
    expect(beyondBaseline(family, baseline, 6)).toEqual([
      { name: 'zod', bytes: 90 },
      { name: '@smithy/core', bytes: 10 },
    ]);
  });

  it('prints one line per function with its bytes beyond the baseline', () => {
    const m = { mode: 'quick' as const, startedAt: 'x', loadavgStart: [1], loadavgEnd: [1], wallMs: 1, node: 'v20', cpus: 2 };
    const r = Object.fromEntries(RESULT_KEYS.map((k) => [k, unmeasured[k]('because', m)])) as unknown as Results;
    const coldStart = {
      ...r.coldStart,
      baseline: { ...r.coldStart.baseline, bundleBytes: 342_309, topContributors: [{ name: '@smithy/core', bytes: 133_627 }] },
      families: {
        service: {
          ...({} as Results['coldStart']['families'][string]),
          bundleBytes: 442_309,
          beyondBaseline: { bytes: 100_000, top: [{ name: 'jose', bytes: 22_153 }, { name: 'shared/config.ts', bytes: 5_238 }] },
        },
      },
    };
    const lines = bundleAnalysis({ ...r, coldStart }).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^ {2}baseline\s+342\.3K {2}@smithy\/core 133\.6K$/);
    expect(lines[2]).toMatch(/^ {2}service\s+\+100\.0K {2}jose \+22\.2K, shared\/config\.ts \+5\.2K$/);
  });
});

describe('the protected floor in the cold-start report', () => {
  const m = { mode: 'quick' as const, startedAt: 'x', loadavgStart: [1], loadavgEnd: [1], wallMs: 1, node: 'v20', cpus: 2 };
  const r = Object.fromEntries(RESULT_KEYS.map((k) => [k, unmeasured[k]('because', m)])) as unknown as Results;
  const family = {
    ...({} as Results['coldStart']['families'][string]),
    bundleBytes: 562_000,
    startFiles: 12,
    totalMs: 150,
    cpuMs: 140,
    cpuRatio: 1.4,
    ratio: 1.3,
    floor: 115,
    meetsGoal: false,
    beyondBaseline: { bytes: 220_000, top: [{ name: 'jose', bytes: 22_000 }] },
    overProtectedFloor: { bytes: 100_000, ratio: 1.07, cpuRatio: 1.04, top: [{ name: 'zod', bytes: 28_000 }, { name: 'shared/json.ts', bytes: 8_000 }] },
    overFloorOfKind: null,
  };
  const floorOf = (bundleBytes: number, totalMs: number, ratio: number) => ({
    bundleBytes,
    startFiles: 9,
    topContributors: [],
    beyondBaseline: { bytes: bundleBytes - 342_000, top: [] },
    importMs: 100,
    firstRequestMs: totalMs - 100,
    totalMs,
    cpuMs: totalMs - 5,
    ratio,
    cpuRatio: ratio,
    firstRequestPhases: { beforeSendMs: 12.1, waitMs: 13.5, afterMs: 4.9, sends: 2, runs: 9 },
    runs: 1,
    firstRequest: 'GET accesslevels?pageSize=1',
    firstStatus: 200,
    what: 'the list floor',
  });
  const coldStart: Results['coldStart'] = {
    ...r.coldStart,
    baseline: { ...r.coldStart.baseline, bundleBytes: 342_000, totalMs: 115, topContributors: [{ name: '@smithy/core', bytes: 133_627 }] },
    protectedFloor: {
      bundleBytes: 462_000,
      startFiles: 9,
      topContributors: [{ name: '@smithy/core', bytes: 133_627 }],
      beyondBaseline: { bytes: 120_000, top: [{ name: 'jose', bytes: 22_000 }, { name: '@aws-lambda-powertools/logger', bytes: 17_000 }] },
      importMs: 100,
      firstRequestMs: 40,
      totalMs: 140,
      cpuMs: 135,
      ratio: 1.22,
      cpuRatio: 1.35,
      firstRequestPhases: null,
      runs: 1,
      firstRequest: 'GET person',
      firstStatus: 200,
      what: 'the floor',
    },
    families: { people: family },
  };

  it('prints the floor beyond the baseline, and each function beyond the floor', () => {
    const lines = bundleAnalysis({ ...r, coldStart }).split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[2]).toMatch(/^ {2}floor\s+\+120\.0K {2}jose \+22\.0K, @aws-lambda-powertools\/logger \+17\.0K$/);
    expect(lines[4]).toMatch(/^bundle analysis \(bytes beyond the protected floor's 462000 B/);
    expect(lines[5]).toMatch(/^ {2}people\s+\+100\.0K {2}zod \+28\.0K, shared\/json\.ts \+8\.0K$/);
  });

  it("has a row for the floor with its ratio to the baseline, and each function's ratio over it", () => {
    const rows = rowsOf({ ...r, coldStart });
    const floorRow = rows.find((row) => row.entry === 'coldStart (protected floor)');
    expect(floorRow).toMatchObject({ figure: '462000 B in 9 files (+120000), 140 ms (cpu 135 ms, 1.35x)', floor: 'baseline 115 ms', ratio: '1.22' });
    const people = rows.find((row) => row.entry === 'coldStart.people')?.figure;
    expect(people).toMatch(/^562000 B in 12 files \(\+/);
    expect(people).toContain('over the protected floor +100000 B, 1.07x (cpu 1.04x)');
  });

  it("has a row for the list floor, and a listing function's ratio over it", () => {
    const access = { ...family, overFloorOfKind: { floor: 'listFloor', ratio: 1.12 } };
    const rows = rowsOf({ ...r, coldStart: { ...coldStart, listFloor: floorOf(463_000, 145, 1.26), families: { access } } });
    expect(rows.find((row) => row.entry === 'coldStart (list floor)')).toMatchObject({ ratio: '1.26', floor: 'baseline 115 ms' });
    expect(rows.find((row) => row.entry === 'coldStart (list floor)')?.figure).toMatch(/^463000 B in 9 files \(\+121000\), 145 ms/);
    expect(rows.find((row) => row.entry === 'coldStart.access')?.figure).toContain('; over the list floor 1.12x');
  });

  it('prints the first request by phase: the baseline, the floors measured, then each function', () => {
    const people = { ...family, firstRequestMs: 30.4, firstRequestPhases: { beforeSendMs: 14.9, waitMs: 8.2, afterMs: 6.5, sends: 1, runs: 9 } };
    const withPhases = {
      ...coldStart,
      baseline: { ...coldStart.baseline, firstRequestMs: 16.8, firstRequestPhases: { beforeSendMs: 10, waitMs: 5.2, afterMs: 1.6, sends: 1, runs: 9 } },
      listFloor: floorOf(463_000, 130.5, 1.26),
      families: { people, service: { ...family, firstRequestMs: 8.3, firstRequestPhases: null } },
    };
    const lines = phaseAnalysis({ ...r, coldStart: withPhases }).split('\n');
    expect(lines[0]).toMatch(/^first request by phase \(medians, ms\): before its first request out \| from then to its last answer \| after it$/);
    expect(lines.slice(1).map((l) => l.trim().split(/\s+/)[0])).toEqual(['baseline', 'protected', 'list', 'people', 'service']);
    expect(lines[1]).toMatch(/^ {2}baseline\s+10\.0 \|\s+5\.2 \|\s+1\.6 {3}\(1 request out; first request 16\.8 ms\)$/);
    // The protected floor of this fixture could not split its request; the status floor was not measured.
    expect(lines[2]).toMatch(/^ {2}protected floor\s+— \|\s+— \|\s+— {3}\(no request out, or none answered; first request 40 ms\)$/);
    expect(lines[3]).toMatch(/^ {2}list floor\s+12\.1 \|\s+13\.5 \|\s+4\.9 {3}\(2 requests out; first request 30\.5 ms\)$/);
    expect(lines[4]).toMatch(/^ {2}people\s+14\.9 \|\s+8\.2 \|\s+6\.5 {3}\(1 request out; first request 30\.4 ms\)$/);
    expect(lines[5]).toContain('no request out, or none answered');
  });

  it('has no floor row when the floor was not measured', () => {
    expect(rowsOf(r).some((row) => row.entry === 'coldStart (protected floor)')).toBe(false);
    expect(r.coldStart.protectedFloor).toBeNull();
    expect(r.coldStart.listFloor).toBeNull();
    expect(rowsOf(r).some((row) => row.entry === 'coldStart (list floor)')).toBe(false);
  });
});

describe('firstRequests', () => {
  it('marks the requests that read a page beside the status read, whose floor of kind is the list floor', () => {
    const ctx = { endpoint: 'http://127.0.0.1:9', tableName: 't', dataDir: '/tmp/x', token: 'tok', instanceKey: 'i', personKey: 'p', personHref: '/api/f/i/people/p', searchName: 'Ada' };
    const reqs = firstRequests(ctx, ['people', 'folders', 'websocket', 'access', 'events', 'search', 'mqttauth', 'token'], 'http://127.0.0.1:9/r');
    const pages = Object.entries(reqs)
      .filter(([, q]) => q.page)
      .map(([name]) => name);
    expect(pages.sort()).toEqual(['access', 'events', LIST_FLOOR, 'mqttauth', 'search'].sort());
  });
});

describe('matchPositions', () => {
  it('spreads the matching people evenly through the creation order', () => {
    expect([...matchPositions(100, 4)]).toEqual([12, 37, 62, 87]);
    expect(matchPositions(10_000, 10).size).toBe(10);
    expect(matchPositions(5, 0).size).toBe(0);
  });
});

describe('the printed table', () => {
  it('has a row per entry, per function and per operation, with the verdicts', () => {
    const m = { mode: 'quick' as const, startedAt: 'x', loadavgStart: [1], loadavgEnd: [1], wallMs: 1, node: 'v20', cpus: 2 };
    const r = Object.fromEntries(RESULT_KEYS.map((k) => [k, unmeasured[k]('because', m)])) as unknown as Results;
    const text = renderTable(rowsOf(r));
    expect(text.split('\n')[0]).toMatch(/^entry\s+figure\s+floor\s+ratio\s+goal\s+verdict$/);
    for (const k of ['handlerOverhead', 'paging', 'token.password', 'fanout', 'fanout.breakdown', 'fanout.aws', 'http.getPerson', 'http.publish']) expect(text).toContain(k);
    expect(text).toContain('NOT MEASURED');
  });
});
