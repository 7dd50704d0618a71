/**
 * The DynamoDB capacity one request consumed: every data-plane call asks for
 * `ReturnConsumedCapacity: TOTAL` (free: it only adds a number to the answer), and the client's
 * middleware adds the units to the scope of the request it runs for.
 *
 * Where requests overlap in one process (the local runtime, tests, a Lambda environment given
 * several invocations at once with `AWS_LAMBDA_MAX_CONCURRENCY`), the scope follows each
 * request's asynchronous calls (AsyncLocalStorage), so requests never count each other's calls.
 * Where invocations run one at a time (a Lambda execution environment by default), the scope is
 * one tally that each invocation replaces: AsyncLocalStorage would hook every promise of the
 * process (about 5 ms of a cold start here, and a share of every warm request's CPU) to tell
 * apart requests that cannot overlap.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { config } from '../config.ts';

interface CapacityTally {
  units: number;
}

export interface CapacityScope {
  /** Runs `fn` in a fresh scope; the calls it makes are counted by `consumed`. */
  run<T>(fn: () => T): T;
  /** Runs `fn` outside any scope (work that is not the request's own, e.g. a usage flush). */
  exit<T>(fn: () => T): T;
  /** The units (read + write) consumed so far in the current scope; undefined outside one. */
  consumed(): number | undefined;
  /** Adds units to the current scope, if any. */
  add(units: number): void;
}

/**
 * A scope for requests that may overlap (`oneAtATime` false), or for invocations that never do.
 * One at a time, `exit` cannot hide the calls of `fn` from the tally: its only use, the usage
 * flush, starts after the request read its units, and the next invocation starts a new tally.
 */
export function createCapacityScope(oneAtATime: boolean): CapacityScope {
  const round = (t: CapacityTally | undefined) => (t ? Math.round(t.units * 100) / 100 : undefined);
  const add = (t: CapacityTally | undefined, units: number) => {
    if (t && Number.isFinite(units)) t.units += units;
  };
  if (oneAtATime) {
    let current: CapacityTally | undefined;
    return {
      run: (fn) => {
        current = { units: 0 };
        return fn();
      },
      exit: (fn) => fn(),
      consumed: () => round(current),
      add: (units) => add(current, units),
    };
  }
  const store = new AsyncLocalStorage<CapacityTally>();
  return {
    run: (fn) => store.run({ units: 0 }, fn),
    exit: (fn) => store.exit(fn),
    consumed: () => round(store.getStore()),
    add: (units) => add(store.getStore(), units),
  };
}

let scope: CapacityScope | undefined;
const processScope = (): CapacityScope => (scope ??= createCapacityScope(config().invocationsOneAtATime));

/** Runs `fn` in a fresh capacity scope; the calls it makes are counted by {@link consumedCapacity}. */
export function withCapacityScope<T>(fn: () => T): T {
  return processScope().run(fn);
}

/** Runs `fn` outside any capacity scope (work that is not the request's own, e.g. a usage flush). */
export function outsideCapacityScope<T>(fn: () => T): T {
  return processScope().exit(fn);
}

/** The capacity units (read + write) consumed so far in the current scope; undefined outside one. */
export function consumedCapacity(): number | undefined {
  return processScope().consumed();
}

/** Adds units to the current scope, if any (called by the client's middleware). */
export function addConsumedCapacity(units: number): void {
  processScope().add(units);
}
