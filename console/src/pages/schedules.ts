/**
 * Schedules: the instance's schedules (its folders' included) with their windows in words; a
 * schedule's page (`/console/schedules/<key>`, `/console/schedules/new` for a new one) edits its
 * name, "Always" and its week (schedules-week.ts), and saves the whole `ScheduleInfo` (a PUT
 * checked against its `ConcurrencyVersion`: someone else's save in between is refused, not lost).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { hrefOf } from '../router.ts';
import { instanceKey } from '../session.ts';
import { Check, ErrorAlert, Field, PageHeader, Status, useLoad, useAction } from '../ui.ts';
import { byName, findObject, nameOf, saveObject, searchObjects, type BaseObject } from './doors-api.ts';
import { WeekEditor } from './schedules-week.ts';
import { draftOf, itemsOf, newDraft, windowSummary, type WindowDraft } from './schedules-windows.ts';
import '../styles/doors.css';

interface Schedule extends BaseObject {
  readonly IsAlways?: boolean;
  readonly ScheduleDurations?: ReadonlyArray<Record<string, unknown>> | null;
}

interface Holiday extends BaseObject {
  readonly HolidayDays?: ReadonlyArray<{ readonly Date?: string; readonly NumberOfDays?: number | null; readonly HolidayTypes?: number }> | null;
}

/** A schedule in words: "Always", or its windows' summaries. */
function scheduleText(s: Schedule): string {
  if (s.IsAlways) return 'Always';
  const windows = (s.ScheduleDurations ?? []).map(draftOf);
  return windows.length ? windows.map(windowSummary).join('; ') : 'Never (no window)';
}

function ScheduleList() {
  const instance = instanceKey.value;
  const list = useLoad(async () => byName(await searchObjects<Schedule>(instance, 'Schedule')), [instance]);
  return html`<${PageHeader} title="Schedules">
      <a class="button" href=${hrefOf('schedules', 'new')}>New schedule</a>
    <//>
    <${ErrorAlert} error=${list.error} />
    <div class="table-wrap">
      <table>
        <caption>Schedules</caption>
        <thead>
          <tr><th scope="col">Schedule</th><th scope="col">When (the reader's local time)</th></tr>
        </thead>
        <tbody>
          ${(list.data ?? []).map(
            (s) => html`<tr key=${s.Key}>
              <td><a href=${hrefOf('schedules', s.Key)}>${nameOf(s)}</a></td>
              <td>${scheduleText(s)}</td>
            </tr>`,
          )}
          ${list.data?.length === 0 ? html`<tr><td colspan="2">No schedule yet.</td></tr>` : null}
        </tbody>
      </table>
    </div>
    ${list.loading ? html`<p aria-busy="true">Loading…</p>` : null}`;
}

/** Holiday types (1 to 8) → the names of the instance's holidays of that type. */
function holidayNamesOf(holidays: readonly Holiday[]): Map<number, string[]> {
  const names = new Map<number, string[]>();
  for (const h of holidays) {
    const types = (h.HolidayDays ?? []).reduce((acc, d) => acc | (typeof d.HolidayTypes === 'number' ? d.HolidayTypes : 0), 0);
    for (let t = 1; t <= 8; t++) if (types & (1 << (t - 1))) names.set(t, [...(names.get(t) ?? []), nameOf(h)]);
  }
  return names;
}

function ScheduleEditor({ scheduleKey }: { readonly scheduleKey: string }) {
  const instance = instanceKey.value;
  const isNew = scheduleKey === 'new';
  const loaded = useLoad(async () => (isNew ? null : ((await findObject<Schedule>(instance, 'Schedule', scheduleKey)) ?? 'missing')), [instance, scheduleKey]);
  const holidays = useLoad(() => searchObjects<Holiday>(instance, 'Holiday'), [instance]);
  const holidayNames = useMemo(() => holidayNamesOf(holidays.data ?? []), [holidays.data]);

  const [name, setName] = useState('');
  const [always, setAlways] = useState(false);
  const [windows, setWindows] = useState<WindowDraft[]>([]);
  const [status, setStatus] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();

  const schedule = loaded.data && loaded.data !== 'missing' ? loaded.data : null;
  useEffect(() => {
    if (isNew) {
      setName('');
      setAlways(false);
      setWindows([newDraft()]);
    } else if (schedule) {
      setName(schedule.CommonName ?? '');
      setAlways(schedule.IsAlways === true);
      setWindows((schedule.ScheduleDurations ?? []).map(draftOf));
    }
  }, [loaded.data]);

  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setStatus(null);
    if (!name.trim()) return setError(new Error('Give the schedule a name.'));
    const checked = itemsOf(windows);
    if ('problem' in checked) return setError(new Error(checked.problem));
    const fields = { CommonName: name.trim(), IsAlways: always, ScheduleDurations: checked.items };
    return run(async () => {
      if (!isNew && !schedule) return;
      if (await saveObject({ instance, collection: 'schedules', typeName: 'ScheduleInfo', page: 'schedules', existing: isNew ? null : schedule, fields })) {
        loaded.reload();
        setStatus(`${fields.CommonName} is saved.`);
      }
    });
  };

  const title = isNew ? 'New schedule' : schedule ? nameOf(schedule) : 'Schedule';
  return html`<${PageHeader} title=${title}>
      <a class="button secondary" href=${hrefOf('schedules')}>All schedules</a>
    <//>
    ${loaded.data === 'missing' ? html`<p role="alert" class="error">There is no such schedule in this instance.</p>` : null}
    <${ErrorAlert} error=${loaded.error} />
    ${loaded.loading && !loaded.data ? html`<p aria-busy="true">Loading…</p>` : null}
    ${isNew || schedule
      ? html`<form class="schedule-form" onSubmit=${save} noValidate>
          <div class="panel">
            <${Field} label="Name" value=${name} onInput=${setName} required=${true} />
            <${Check} label="Always (every day, all day: the windows do not matter)" checked=${always} onChange=${setAlways} />
            <p class="muted">
              Times are the reader's local time (its controller's time zone, else its instance's). A window may run past midnight. On a
              holiday only the windows marked with one of its types apply, on any day of the week.
            </p>
          </div>
          <h2>Week</h2>
          <${WeekEditor} windows=${windows} onChange=${setWindows} holidayNames=${holidayNames} />
          ${holidays.data?.length
            ? html`<details class="panel">
                <summary>Holidays of this instance</summary>
                <ul class="holidays-list">
                  ${byName(holidays.data).map(
                    (h) => html`<li key=${h.Key}>
                      ${nameOf(h)}:
                      ${(h.HolidayDays ?? [])
                        .map((d) => `${d.Date ?? ''}${d.NumberOfDays && d.NumberOfDays > 1 ? ` (${d.NumberOfDays} days)` : ''}, type ${typesText(d.HolidayTypes ?? 0)}`)
                        .join('; ')}
                    </li>`,
                  )}
                </ul>
              </details>`
            : null}
          <${ErrorAlert} error=${error} />
          <${Status} text=${status} />
          <div class="actions">
            <button type="submit" disabled=${busy}>Save</button>
          </div>
        </form>`
      : null}`;
}

/** The types of a `HolidayTypes` mask ("1, 3"). */
function typesText(mask: number): string {
  return [1, 2, 3, 4, 5, 6, 7, 8].filter((t) => mask & (1 << (t - 1))).join(', ');
}

export function SchedulesPage({ pageKey }: { readonly pageKey: string | undefined }) {
  return pageKey ? html`<${ScheduleEditor} key=${pageKey} scheduleKey=${pageKey} />` : html`<${ScheduleList} />`;
}
