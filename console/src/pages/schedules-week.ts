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
import { DAYS, HOLIDAY_TYPES, lengthSeconds, newDraft, startSeconds, windowSummary, type WindowDraft } from './schedules-windows.ts';

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
    ${[0, 6, 12, 18, 24].map((h) => html`<text key=${`h${h}`} x=${h * 60} y="-12" text-anchor="middle" class="hour">${String(h).padStart(2, "0")}:00</text>`)}
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
