/**
 * How an event's priority reads in the console. A higher `Priority` is more urgent (the events
 * list's `priorityThreshold` keeps events at or above it). The built-in types set the scale:
 * commands and object changes 0, "Access Granted" 10, "Reader Mode Changed" 15, "Access Denied"
 * 20, "Lockdown Ended" 30, "Lockdown Started" 50 (docs/access.md, docs/doors.md); an instance's
 * own types are placed on the same scale by whoever defines them.
 */

/** From here up an event is high (a denied card read, a lockdown's end): its row is tinted. */
const HIGH_PRIORITY = 20;
/** From here up an event is critical (a lockdown): its row is tinted red. */
const CRITICAL_PRIORITY = 50;

/** The levels a "Minimum priority" filter offers. */
export const PRIORITY_LEVELS: ReadonlyArray<{ readonly value: string; readonly label: string }> = [
  { value: '0', label: 'Any' },
  { value: '10', label: 'Normal (10) and above' },
  { value: String(HIGH_PRIORITY), label: `High (${HIGH_PRIORITY}) and above` },
  { value: String(CRITICAL_PRIORITY), label: `Critical (${CRITICAL_PRIORITY}) and above` },
];

const priorityOf = (p: unknown): number => (typeof p === 'number' && Number.isFinite(p) ? p : 0);

/** The row class (console.css tints `p-critical` and `p-high`), or undefined for the rest. */
export function priorityClass(p: unknown): string | undefined {
  const n = priorityOf(p);
  return n >= CRITICAL_PRIORITY ? 'p-critical' : n >= HIGH_PRIORITY ? 'p-high' : undefined;
}

/** The priority in words beside its number: the tint is never the only cue. */
export function priorityText(p: unknown): string {
  const n = priorityOf(p);
  return n >= CRITICAL_PRIORITY ? `${n} critical` : n >= HIGH_PRIORITY ? `${n} high` : String(n);
}
