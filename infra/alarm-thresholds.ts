/**
 * The thresholds of the stack's alarms: plain numbers with no CDK import, so the context reader
 * (infra/cdk-context.ts) can validate overrides without building a construct. The alarms
 * themselves are in infra/observability.ts; docs/operations.md "Operating Gatehouse" says what to do when
 * each one fires.
 *
 * Every alarm evaluates 5-minute periods unless its entry says otherwise.
 */

export interface AlarmThresholds {
  /** HTTP API: percent of requests answered 5xx, in 2 of 3 periods (only periods with at least `httpApiMinRequests` requests count). */
  readonly httpApi5xxPercent: number;
  /** HTTP API: requests a period needs before its 5xx rate can alarm (a single 500 among 3 requests is not an outage). */
  readonly httpApiMinRequests: number;
  /** HTTP API: p99 latency in milliseconds, in 3 of 3 periods. */
  readonly httpApiP99LatencyMs: number;
  /** Per family: failed invocations of the function (crashes, timeouts, failed initialisation) in one period. */
  readonly functionErrors: number;
  /** Per HTTP family: 5xx answers of its operations (the app's `Errors` metric) in one period. */
  readonly familyServerErrors: number;
  /** Per family: throttled invocations of the function in one period. */
  readonly functionThrottles: number;
  /** Per family: p99 duration as a percentage of the function's timeout, in 3 of 3 periods. */
  readonly functionDurationPercentOfTimeout: number;
  /** DynamoDB: throttled requests on the table (all operations) in one period. */
  readonly tableThrottledRequests: number;
  /** DynamoDB: requests that failed with a DynamoDB server error in one period. */
  readonly tableSystemErrors: number;
  /** Fan-out: age in seconds of the newest stream record it has read, every minute for 5 minutes (1-minute periods). */
  readonly fanoutIteratorAgeSeconds: number;
  /** Every dead-letter queue (fan-out, webhooks): messages waiting in it. */
  readonly deadLetterMessages: number;
  /** Token: percent of password logins that failed, in 2 of 3 periods (only periods with at least `failedLoginMinAttempts` attempts count). */
  readonly failedLoginPercent: number;
  /** Token: login attempts a period needs before its failure rate can alarm. */
  readonly failedLoginMinAttempts: number;
}

export const DEFAULT_ALARM_THRESHOLDS: Readonly<AlarmThresholds> = Object.freeze({
  httpApi5xxPercent: 1,
  httpApiMinRequests: 20,
  httpApiP99LatencyMs: 3000,
  functionErrors: 5,
  familyServerErrors: 5,
  functionThrottles: 1,
  functionDurationPercentOfTimeout: 80,
  tableThrottledRequests: 1,
  tableSystemErrors: 1,
  fanoutIteratorAgeSeconds: 60,
  deadLetterMessages: 1,
  failedLoginPercent: 50,
  failedLoginMinAttempts: 20,
});

export const ALARM_THRESHOLD_NAMES = Object.freeze(Object.keys(DEFAULT_ALARM_THRESHOLDS) as (keyof AlarmThresholds)[]);

/** Percentages may not exceed 100; everything must be a positive number. */
export function thresholdProblem(name: keyof AlarmThresholds, value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) return `${name} must be a positive number`;
  if (/Percent/.test(name) && value > 100) return `${name} is a percentage (at most 100)`;
  return undefined;
}

/** The defaults with `overrides` on top. */
export function alarmThresholds(overrides: Partial<AlarmThresholds> = {}): AlarmThresholds {
  const merged = { ...DEFAULT_ALARM_THRESHOLDS, ...overrides };
  for (const name of ALARM_THRESHOLD_NAMES) {
    const problem = thresholdProblem(name, merged[name]);
    if (problem) throw new Error(`Invalid alarm threshold: ${problem}`);
  }
  return merged;
}
