/**
 * Operations whose module loads with the first call on any of them: a family's secondary
 * sub-resource (the event types of an app or an alarm definition) stays out of the code a cold
 * start serving its main collection reads. The names are the route table's operation names.
 */
import { onFirstUse } from '../first-use.ts';
import type { BaseDeps, Operation } from './types.ts';

export function operationsOnFirstCall<D extends BaseDeps, N extends string>(
  load: () => Promise<Readonly<Record<N, Operation<D>>>>,
  names: readonly N[],
): Record<N, Operation<D>> {
  const loaded = onFirstUse(load);
  return Object.fromEntries(names.map((name) => [name, (async (req, deps) => (await loaded())[name](req, deps)) satisfies Operation<D>])) as Record<N, Operation<D>>;
}
