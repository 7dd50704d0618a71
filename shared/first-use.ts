/**
 * What a module loads with `import()` on first use: `load` runs on the first call, and every call
 * answers its promise (the loaded module stays: it is part of the same bundle). A module reached
 * only this way sits in a chunk that a cold start which never calls it does not read.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}
