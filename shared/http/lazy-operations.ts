/**
 * Operations whose module loads with the first call on any of them: what a cold start serving a
 * family's main reads does not need (the event types of an app or an alarm definition, the
 * webhooks calls that write or send) stays out of the code it reads. The names are the route
 * table's operation names.
 */
import { onFirstUse } from '../first-use.ts';
import type { BaseDeps, Operation } from './operation-contract.ts';

export function operationsOnFirstCall<D extends BaseDeps, N extends string>(
  load: () => Promise<Readonly<Record<N, Operation<D>>>>,
  names: readonly N[],
): Record<N, Operation<D>> {
  const loaded = onFirstUse(load);
  return Object.fromEntries(names.map((name) => [name, (async (req, deps) => (await loaded())[name](req, deps)) satisfies Operation<D>])) as Record<N, Operation<D>>;
}
