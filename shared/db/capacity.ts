/**
 * The DynamoDB capacity one request consumed: every data-plane call asks for
 * `ReturnConsumedCapacity: TOTAL` (free: it only adds a number to the answer), and the client's
 * middleware adds the units to the scope of the request it runs for. The scope follows the
 * request's asynchronous calls (AsyncLocalStorage), so requests running at once in one process
 * (the local runtime) never count each other's calls.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface CapacityTally {
  units: number;
}

const scope = new AsyncLocalStorage<CapacityTally>();

/** Runs `fn` in a fresh capacity scope; the calls it makes are counted by {@link consumedCapacity}. */
export function withCapacityScope<T>(fn: () => T): T {
  return scope.run({ units: 0 }, fn);
}

/** Runs `fn` outside any capacity scope (work that is not the request's own, e.g. a usage flush). */
export function outsideCapacityScope<T>(fn: () => T): T {
  return scope.exit(fn);
}

/** The capacity units (read + write) consumed so far in the current scope; undefined outside one. */
export function consumedCapacity(): number | undefined {
  const t = scope.getStore();
  return t ? Math.round(t.units * 100) / 100 : undefined;
}

/** Adds units to the current scope, if any (called by the client's middleware). */
export function addConsumedCapacity(units: number): void {
  const t = scope.getStore();
  if (t && Number.isFinite(units)) t.units += units;
}
