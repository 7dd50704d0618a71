/**
 * A reader's mode at an instant, from its normal `AccessMethod` and the mode an operator set
 * (`PUT …/readers/<key>/mode`, possibly until an instant). Pure, so the API, the door status and
 * a controller deciding from its credential download reach the same mode: once `Until` has passed
 * the normal mode applies again, with no job to end the set one.
 */
import { ACCESS_METHODS, type AccessMethod } from './decision.ts';

/** A set mode: `accessMethod` from now until `until` (ISO; null: until it is reset). */
export interface SetMode {
  readonly accessMethod: number;
  readonly until: string | null;
}

/** True when the set mode applies at `at` (`Until` excluded). */
export function setModeActive(mode: SetMode | null | undefined, at: Date): mode is SetMode {
  return !!mode && (mode.until === null || at.getTime() < Date.parse(mode.until));
}

/** A stored number as an access method (anything unknown reads as 0, card only). */
export const asAccessMethod = (n: number): AccessMethod => ((ACCESS_METHODS as readonly number[]).includes(n) ? n : 0) as AccessMethod;

/** The reader's mode at `at`: the set mode while it applies, else the normal one. */
export function modeAt(normal: AccessMethod, mode: SetMode | null | undefined, at: Date): AccessMethod {
  return setModeActive(mode, at) ? asAccessMethod(mode.accessMethod) : normal;
}

/** The folder of the lockdown a reader is under: the outermost of those of its folders (its `path`), or null. */
export function lockdownOver<T>(path: readonly string[], lockdowns: ReadonlyMap<string, T>): { readonly folder: string; readonly lockdown: T } | null {
  for (const f of path) {
    const l = lockdowns.get(f);
    if (l !== undefined) return { folder: f, lockdown: l };
  }
  return null;
}
