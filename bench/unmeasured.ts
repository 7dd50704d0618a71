/**
 * The entry written for a measurement that could not run (a failure, or the run's time budget
 * spent): every figure null, `meetsGoal: false`, and a `note` saying why. Never invented numbers.
 */
import type { Capacity, ColdStart, Fanout, HandlerOverhead, Http, HttpFloor, HttpScenario, Measured, Paging, Results, Token, Webhooks } from './results.ts';

const base = (goal: string, reason: string) => ({ floor: null, ratio: null, goal, meetsGoal: false, note: `could not be measured: ${reason}` });
const noFloor: HttpFloor = { rps: null, p50Ms: null, p99Ms: null, errors: null, non2xx: null };
const noScenario = (reason: string): HttpScenario => ({
  ...base('report the ratio', reason),
  rps: null,
  p50Ms: null,
  p99Ms: null,
  requests: null,
  errors: null,
  non2xx: null,
  p99Ratio: null,
  floorIs: '',
});

export const unmeasured: { readonly [K in keyof Results]: (reason: string, measured: Measured) => Results[K] } = {
  handlerOverhead: (reason, measured): HandlerOverhead => ({
    ...base('ratio <= 1.25', reason),
    unit: 'ms',
    p50Ms: null,
    handler: null,
    bareGetItem: null,
    commandsPerCall: [],
    measured,
  }),
  coldStart: (reason, measured): ColdStart => ({
    ...base('every function: bundleBytes <= 300000 and ratio <= 1.5', reason),
    families: {},
    baseline: { bundleBytes: 0, importMs: null, firstRequestMs: null, totalMs: null, what: '' },
    worst: null,
    maxBundleBytes: 0,
    buildMs: 0,
    measured,
  }),
  capacity: (reason, measured): Capacity => ({ ...base('every operation meets its goal', reason), operations: {}, worst: null, warmed: '', measured }),
  paging: (reason, measured): Paging => ({
    ...base('ratio <= 1.2', reason),
    people: 0,
    pageSize: 0,
    pages: 0,
    requests: null,
    rcu: null,
    rawQuery: { requests: null, rcu: null, items: null },
    measured,
  }),
  token: (reason, measured): Token => ({
    ...base('ratio <= 1.1', reason),
    unit: 'ms',
    passwordGrant: { latency: null, requests: null, commands: [], rcu: null, wcu: null },
    refreshGrant: { latency: null, requests: null, commands: [], rcu: null, wcu: null },
    scryptHash: null,
    measured,
  }),
  fanout: (reason, measured): Fanout => ({
    ...base('lost = 0 and p50 <= 250 ms', reason),
    events: 0,
    published: 0,
    delivered: 0,
    lost: null,
    duplicates: null,
    clients: 0,
    latencyMs: null,
    publishMs: null,
    afterAnswerMs: null,
    messageBytes: null,
    streamPollIdleMs: 0,
    mqtt: null,
    measured,
  }),
  webhooks: (reason, measured): Webhooks => ({
    ...base('lost = 0 and p50 <= 1000 ms', reason),
    events: 0,
    published: 0,
    delivered: 0,
    lost: null,
    duplicates: null,
    invalid: null,
    clients: 0,
    latencyMs: null,
    attemptMs: null,
    measured,
  }),
  http: (reason, measured): Http => ({
    ...base('report the ratios', reason),
    getPerson: noScenario(reason),
    publish: noScenario(reason),
    bareGetItem: noFloor,
    barePublishWrite: noFloor,
    connections: 0,
    durationSeconds: 0,
    rounds: 0,
    measured,
  }),
};
