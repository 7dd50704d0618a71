/**
 * The reader fields the access decisions read, as plain values: the write schemas validate with
 * them and the decision contract (shared/access/decision.ts) re-exports them.
 */

/** A reader's `AccessMethod`: 0 card only, 2 card and PIN, 5 unlocked (free passage), 6 locked down. */
export const ACCESS_METHODS = [0, 2, 5, 6] as const;
export type AccessMethod = (typeof ACCESS_METHODS)[number];

/** Strike seconds of a reader that does not set them (`NormalGrantAccessTime`, `ExtendedGrantAccessTime`). */
export const DEFAULT_GRANT_ACCESS_TIME = 5;
export const DEFAULT_EXTENDED_GRANT_ACCESS_TIME = 15;
