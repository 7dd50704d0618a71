/**
 * Times of the access model as the wire carries them: .NET `TimeSpan` texts (a schedule
 * duration's `StartingAt` and `Duration`) and IANA time zone names (`TimeZone` on controllers and
 * instances). Pure functions: the write schemas validate with them and the decision engine
 * (shared/access) reads stored values with the same ones, so what is accepted is what is evaluated.
 */

/** `hh:mm:ss` or .NET's `d.hh:mm:ss` (the `c` format without fractions or sign). */
const TIME_SPAN = /^(?:(\d{1,3})\.)?(\d{1,2}):(\d{2}):(\d{2})$/;

/**
 * The seconds of a `TimeSpan` text, or undefined when it is not one (hours 0–23, minutes and
 * seconds 0–59; `1.00:00:00` is a day, as .NET writes 24 hours).
 */
export function parseTimeSpan(text: string): number | undefined {
  const m = TIME_SPAN.exec(text);
  if (!m) return undefined;
  const [days, hours, minutes, seconds] = [Number(m[1] ?? 0), Number(m[2]), Number(m[3]), Number(m[4])];
  if (hours > 23 || minutes > 59 || seconds > 59) return undefined;
  return ((days * 24 + hours) * 60 + minutes) * 60 + seconds;
}

const SECONDS_PER_DAY = 86_400;

/** A `StartingAt`: a time of day, 00:00:00 to 23:59:59. */
export const isTimeOfDay = (text: string): boolean => {
  const s = parseTimeSpan(text);
  return s !== undefined && s < SECONDS_PER_DAY;
};

/** A schedule `Duration`: more than zero, at most 24 hours. */
export const isWindowDuration = (text: string): boolean => {
  const s = parseTimeSpan(text);
  return s !== undefined && s > 0 && s <= SECONDS_PER_DAY;
};

/** A zone name: IANA names are letters, digits, `_`, `+`, `-` in `/`-separated parts (never an offset such as `+01:00`). */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

const knownZones = new Map<string, boolean>();

/**
 * Whether `Intl` knows the IANA zone `name` (aliases such as `US/Eastern` included). POSIX TZ
 * strings (`EST5EDT,M3.2.0/2,M11.1.0/2`) and bare offsets are not zone names.
 */
export function isTimeZone(name: string): boolean {
  if (name.length > 64 || !ZONE_NAME.test(name)) return false;
  let known = knownZones.get(name);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: name });
      known = true;
    } catch {
      known = false;
    }
    if (knownZones.size < 1_000) knownZones.set(name, known);
  }
  return known;
}
