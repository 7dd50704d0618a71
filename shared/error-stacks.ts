/**
 * The wrapper of a non-HTTP function's handler: the errors it throws reach the runtime (and the
 * logs) with their stacks mapped to the TypeScript by source-mapped-stack.ts (the HTTP families map the stacks
 * they log in the pipeline, the same way).
 */
import { withSourceMappedStack } from './source-mapped-stack.ts';

/** A handler whose thrown errors reach the runtime with their stacks mapped. */
export function mappingErrorStacks<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (err) {
      throw withSourceMappedStack(err);
    }
  };
}
