/**
 * The week editor of a schedule: its windows (`ScheduleDurations`), each the days of the week it
 * applies on (`DayMask`, bit 0 = Sunday), its start (`StartingAt`, a time of day in the reader's
 * local time) and its length (`Duration`, more than zero and at most 24 hours, possibly running
 * past midnight), and the holiday types it applies on (`HolidayExceptions`, bit n−1 = type n): on a
 * holiday, only the windows marked with one of its types apply, whatever the day of the week
 * (shared/access/schedule-windows.ts is the rule the decisions follow).
 */
import { html } from '../html.ts';
import { Check, Field } from '../ui.ts';

/** Monday first, as an operator reads a week; `bit` is the day's bit in `DayMask`. */
const DAYS: ReadonlyArray<{ readonly bit: number; readonly name: string; readonly short: string }> = [
  { bit: 1, name: 'Monday', short: 'Mon' },
  { bit: 2, name: 'Tuesday', short: 'Tue' },
  { bit: 3, name: 'Wednesday', short: 'Wed' },
  { bit: 4, name: 'Thursday', short: 'Thu' },
  { bit: 5, name: 'Friday', short: 'Fri' },
  { bit: 6, name: 'Saturday', short: 'Sat' },
  { bit: 0, name: 'Sunday', short: 'Sun' },
];

/** Holiday types 1 to 8. */
const HOLIDAY_TYPES = [1, 2, 3, 4, 5, 6, 7, 8];

/** A window as the editor holds it: texts as typed, and the stored item's other fields (kept as they were). */
export interface WindowDraft {
  readonly id: number;
  readonly dayMask: number;
  /** `HH:MM` or `HH:MM:SS`, as a time input gives it. */
  readonly start: string;
  readonly hours: string;
  readonly minutes: string;
  /** Seconds of a stored duration beyond its minutes (none from this editor), kept. */
  readonly seconds: number;
  readonly holidayTypes: number;
  readonly rest: Readonly<Record<string, unknown>>;
}

let drafts = 0;

const pad = (n: number): string => String(n).padStart(2, '0');

/** Seconds of a `[d.]hh:mm:ss` text, or undefined. */
function spanSeconds(text: unknown): number | undefined {
  const m = typeof text === 'string' ? /^(?:(\d{1,3})\.)?(\d{1,2}):(\d{2}):(\d{2})$/.exec(text) : null;
  if (!m) return undefined;
  return ((Number(m[1] ?? 0) * 24 + Number(m[2])) * 60 + Number(m[3])) * 60 + Number(m[4]);
}

/** A stored `ScheduleDurationItem` in the editor. */
export function draftOf(item: Readonly<Record<string, unknown>>): WindowDraft {
  const { DayMask, StartingAt, Duration, HolidayExceptions, ...rest } = item;
  const start = spanSeconds(StartingAt) ?? 0;
  const length = spanSeconds(Duration) ?? 3600;
  const startText = `${pad(Math.floor(start / 3600))}:${pad(Math.floor(start / 60) % 60)}${start % 60 ? `:${pad(start % 60)}` : ''}`;
  return {
    id: ++drafts,
    dayMask: typeof DayMask === 'number' ? DayMask : 0,
    start: startText,
    hours: String(Math.floor(length / 3600)),
    minutes: String(Math.floor(length / 60) % 60),
    seconds: length % 60,
    holidayTypes: typeof HolidayExceptions === 'number' ? HolidayExceptions : 0,
    rest,
  };
}

/** A new window: Monday to Friday, 08:00 for 10 hours. */
export function newDraft(): WindowDraft {
  return { id: ++drafts, dayMask: 0b0111110, start: '08:00', hours: '10', minutes: '0', seconds: 0, holidayTypes: 0, rest: {} };
}

/** Seconds from midnight of a window's start, or undefined when the text is not a time. */
function startSeconds(w: WindowDraft): number | undefined {
  const m = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(w.start);
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) return undefined;
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0);
}

/** Seconds of a window's length, or undefined when hours or minutes are not whole numbers. */
function lengthSeconds(w: WindowDraft): number | undefined {
  if (!/^\d{1,2}$/.test(w.hours.trim()) || !/^\d{1,2}$/.test(w.minutes.trim())) return undefined;
  return Number(w.hours) * 3600 + Number(w.minutes) * 60 + w.seconds;
}

/** `hh:mm:ss`, or `1.00:00:00` for a whole day (hours stop at 23 in the `TimeSpan` text). */
function spanText(seconds: number): string {
  if (seconds === 86_400) return '1.00:00:00';
  return `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}`;
}

/**
 * The windows as `ScheduleDurations`, or the sentence saying what is wrong with the first bad one.
 */
export function itemsOf(windows: readonly WindowDraft[]): { items: Record<string, unknown>[] } | { problem: string } {
  const items: Record<string, unknown>[] = [];
  for (const [i, w] of windows.entries()) {
    const start = startSeconds(w);
    const length = lengthSeconds(w);
    if (start === undefined) return { problem: `Window ${i + 1}: the start is not a time of day.` };
    if (length === undefined || Number(w.minutes) > 59) return { problem: `Window ${i + 1}: the duration needs whole hours and minutes (0 to 59).` };
    if (length <= 0 || length > 86_400) return { problem: `Window ${i + 1}: the duration must be more than zero and at most 24 hours.` };
    if (w.dayMask === 0 && w.holidayTypes === 0) return { problem: `Window ${i + 1}: choose at least one day or holiday type, or remove the window.` };
    items.push({ ...w.rest, DayMask: w.dayMask, StartingAt: spanText(start), Duration: spanText(length), HolidayExceptions: w.holidayTypes });
  }
  return { items };
}

/** "Mon, Tue, Wed 08:00–18:00", in words an operator reads at a glance. */
export function windowSummary(w: WindowDraft): string {
  const days = DAYS.filter((d) => (w.dayMask & (1 << d.bit)) !== 0).map((d) => d.short);
  const start = startSeconds(w);
  const length = lengthSeconds(w);
  const dayText = days.length === 7 ? 'Every day' : days.length ? days.join(', ') : 'No day';
  const holidays = HOLIDAY_TYPES.filter((t) => (w.holidayTypes & (1 << (t - 1))) !== 0);
  const holidayText = holidays.length ? `; holidays of type ${holidays.join(', ')}` : '';
  if (start === undefined || length === undefined) return `${dayText}${holidayText}`;
  const end = start + length;
  const clock = (s: number) => `${pad(Math.floor(s / 3600) % 24)}:${pad(Math.floor(s / 60) % 60)}`;
  const next = end > 86_400 ? ' (next day)' : '';
  return `${dayText} ${clock(start)}–${clock(end)}${next}${holidayText}`;
}

/** The week at a glance (decorative: each window's summary says the same in words). */
function WeekPicture({ windows }: { readonly windows: readonly WindowDraft[] }) {
  const rects: Array<{ key: string; x: number; y: number; w: number }> = [];
  for (const win of windows) {
    const start = startSeconds(win);
    const length = lengthSeconds(win);
    if (start === undefined || length === undefined || length <= 0) continue;
    DAYS.forEach((d, row) => {
      if ((win.dayMask & (1 << d.bit)) === 0) return;
      const from = start / 60;
      const to = Math.min(from + length / 60, 2 * 1440);
      rects.push({ key: `${win.id}-${row}`, x: from, y: row, w: Math.min(to, 1440) - from });
      // Past midnight: the rest on the next day's row (Sunday's runs into Monday's).
      if (to > 1440) rects.push({ key: `${win.id}-${row}-next`, x: 0, y: (row + 1) % 7, w: to - 1440 });
    });
  }
  return html`<svg class="week-picture" viewBox="-110 -50 1610 410" aria-hidden="true" focusable="false">
    ${[0, 6, 12, 18, 24].map((h) => html`<text key=${`h${h}`} x=${h * 60} y="-12" text-anchor="middle" class="hour">${pad(h)}:00</text>`)}
    ${DAYS.map(
      (d, row) => html`<g key=${d.short}>
        <text x="-16" y=${row * 50 + 35} text-anchor="end" class="day">${d.short}</text>
        <rect x="0" y=${row * 50 + 8} width="1440" height="32" class="track" />
      </g>`,
    )}
    ${rects.map((r) => html`<rect key=${r.key} x=${r.x} y=${r.y * 50 + 8} width=${Math.max(r.w, 2)} height="32" class="on" />`)}
  </svg>`;
}

interface WeekEditorProps {
  readonly windows: readonly WindowDraft[];
  readonly onChange: (windows: WindowDraft[]) => void;
  /** The instance's holidays of each type (type → names), to say what a type means here. */
  readonly holidayNames: ReadonlyMap<number, readonly string[]>;
}

/** The windows of a schedule, one group each (keyboard: every control is a native input). */
export function WeekEditor(p: WeekEditorProps) {
  const change = (id: number, edit: Partial<WindowDraft>) => p.onChange(p.windows.map((w) => (w.id === id ? { ...w, ...edit } : w)));
  return html`<div class="windows">
    <${WeekPicture} windows=${p.windows} />
    ${p.windows.length === 0 ? html`<p class="muted">No window: this schedule is never active (unless it is always active).</p>` : null}
    ${p.windows.map((w, i) => {
      const n = i + 1;
      return html`<fieldset class="window" key=${w.id}>
        <legend>Window ${n}</legend>
        <p class="summary">${windowSummary(w)}</p>
        <fieldset class="sub">
          <legend>Days</legend>
          <div class="choices">
            ${DAYS.map(
              (d) => html`<${Check}
                key=${d.name}
                label=${d.name}
                checked=${(w.dayMask & (1 << d.bit)) !== 0}
                onChange=${(on: boolean) => change(w.id, { dayMask: on ? w.dayMask | (1 << d.bit) : w.dayMask & ~(1 << d.bit) })}
              />`,
            )}
          </div>
        </fieldset>
        <div class="times">
          <${Field} label="Start" type="time" value=${w.start} onInput=${(v: string) => change(w.id, { start: v })} />
          <${Field} label="Duration hours" type="number" inputmode="numeric" value=${w.hours} onInput=${(v: string) => change(w.id, { hours: v })} />
          <${Field} label="Duration minutes" type="number" inputmode="numeric" value=${w.minutes} onInput=${(v: string) => change(w.id, { minutes: v })} />
        </div>
        <fieldset class="sub">
          <legend>On holidays of type</legend>
          <div class="choices">
            ${HOLIDAY_TYPES.map((t) => {
              const names = p.holidayNames.get(t);
              return html`<${Check}
                key=${t}
                label=${names?.length ? `Type ${t} (${names.join(', ')})` : `Type ${t}`}
                checked=${(w.holidayTypes & (1 << (t - 1))) !== 0}
                onChange=${(on: boolean) => change(w.id, { holidayTypes: on ? w.holidayTypes | (1 << (t - 1)) : w.holidayTypes & ~(1 << (t - 1)) })}
              />`;
            })}
          </div>
        </fieldset>
        <div class="actions">
          <button type="button" class="secondary" onClick=${() => p.onChange(p.windows.filter((x) => x.id !== w.id))}>Remove window ${n}</button>
        </div>
      </fieldset>`;
    })}
    <div class="actions">
      <button type="button" class="secondary" onClick=${() => p.onChange([...p.windows, newDraft()])}>Add window</button>
    </div>
  </div>`;
}
