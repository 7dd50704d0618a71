/**
 * How much memory and time each function gets: plain numbers, with no CDK import, so the
 * benchmark (bench/run.ts hands `memoryOf` to the cost model of bench/cost.ts) prices exactly
 * what the stack deploys without building a construct.
 */
import type { Family } from '#shared/model/collections.ts';

/** Memory of a function without an entry in {@link SIZING} (GatehouseFunction's default). */
export const DEFAULT_MEMORY_MB = 512;

/** Timeout of a function without an entry in {@link SIZING} (GatehouseFunction's default). */
export const DEFAULT_TIMEOUT_SECONDS = 10;

export interface FunctionSizing {
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
}

/** Memory and timeout per family; every other family gets the defaults above. */
export const SIZING: Readonly<Partial<Record<Family, FunctionSizing>>> = Object.freeze({
  // scrypt (N=2^17) password hashing: Lambda CPU scales with memory.
  token: { memoryMb: 1024, timeoutSeconds: 15 },
  // IoT Core gives a custom authorizer 5 seconds.
  mqttauth: { memoryMb: 512, timeoutSeconds: 5 },
  // An aggregation reads for up to its queryTimeout (at most 25 s, MAX_QUERY_TIMEOUT_SECONDS of
  // shared/events/aggregate.ts), then runs its pipeline; API Gateway waits 30 s at most.
  events: { memoryMb: 512, timeoutSeconds: 29 },
  // A webhook delivery waits up to 10 s for its receiver (the test call and each queued job); a
  // batch's jobs run at once, so 30 s covers a batch with room for the store and the queue.
  webhooks: { memoryMb: 512, timeoutSeconds: 30 },
});

/** The memory a family's function is deployed with. */
export function memoryOf(family: string): number {
  return SIZING[family as Family]?.memoryMb ?? DEFAULT_MEMORY_MB;
}
