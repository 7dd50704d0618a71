/**
 * The write side of the object families, as one module that the read side loads with `import()`
 * on the first write, relationship hook or relationship call (object-operations.ts, relation-hooks.ts,
 * shared/relations/relation-operations.ts). One module, not three: every module loaded lazily splits the
 * code loaded at start into more chunks (esbuild groups modules by which lazy modules reach
 * them), and each file a cold start loads costs time of its own.
 */
import * as writeOperations from './write-operations.ts';
import * as relationLinks from '../relations/relation-links.ts';
import * as calls from '../relations/calls.ts';

// Each module's whole namespace, as the loaders take it (`(await load()).create(...)`).
export const objectWrites = writeOperations;
export const relationService = relationLinks;
export const relationCalls = calls;
