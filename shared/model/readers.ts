/**
 * A reader's access methods as a plain value: the write schemas validate with it and the
 * decision contract (shared/access/decision.ts) re-exports it.
 */

/** A reader's `AccessMethod`: 0 card only, 2 card and PIN, 5 unlocked (free passage), 6 locked down. */
export const ACCESS_METHODS = [0, 2, 5, 6] as const;
export type AccessMethod = (typeof ACCESS_METHODS)[number];

