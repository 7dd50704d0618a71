/**
 * Access levels: the instance's levels (its folders' included); a level's page
 * (`/console/access-levels/<key>`, `/console/access-levels/new` for a new one) edits its name and
 * its reader × schedule pairs (`AccessLevelEntries`: each reader granted under its own schedule,
 * docs/access.md) and saves the whole `AccessLevelInfo`, checked against its `ConcurrencyVersion`.
 * Pairs a level gets from its `Reader` and `Schedule` connections (every reader with every
 * schedule) are shown, not edited here.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { hrefOf } from '../router.ts';
import { instanceKey } from '../session.ts';
import { ErrorAlert, Field, PageHeader, Select, Status, useLoad, useAction } from '../ui.ts';
import { byName, findObject, hrefOfObject, nameOf, saveObject, searchObjects, type BaseObject, type Ref } from './doors-api.ts';
import '../styles/doors.css';

interface Entry {
  readonly ReaderId: string;
  readonly ScheduleId: string;
  readonly ReaderCommonName?: string | null;
  readonly ScheduleCommonName?: string | null;
}

interface Level extends BaseObject {
  readonly AccessLevelEntries?: readonly Entry[] | null;
}

/** The most pairs a level holds (the API refuses more). */
const MAX_ENTRIES = 100;

function LevelList() {
  const instance = instanceKey.value;
  const list = useLoad(async () => byName(await searchObjects<Level>(instance, 'AccessLevel')), [instance]);
  return html`<${PageHeader} title="Access levels">
      <a class="button" href=${hrefOf('access-levels', 'new')}>New access level</a>
    <//>
    <${ErrorAlert} error=${list.error} />
    <div class="table-wrap">
      <table>
        <caption>Access levels</caption>
        <thead>
          <tr><th scope="col">Access level</th><th scope="col">Readers and schedules</th></tr>
        </thead>
        <tbody>
          ${(list.data ?? []).map(
            (l) => html`<tr key=${l.Key}>
              <td><a href=${hrefOf('access-levels', l.Key)}>${nameOf(l)}</a></td>
              <td>
                ${(l.AccessLevelEntries ?? []).length === 0
                  ? html`<span class="muted">None</span>`
                  : (l.AccessLevelEntries ?? []).map((e) => `${e.ReaderCommonName ?? e.ReaderId} (${e.ScheduleCommonName ?? e.ScheduleId})`).join(', ')}
              </td>
            </tr>`,
          )}
          ${list.data?.length === 0 ? html`<tr><td colspan="2">No access level yet.</td></tr>` : null}
        </tbody>
      </table>
    </div>
    ${list.loading ? html`<p aria-busy="true">Loading…</p>` : null}`;
}

/** A level's `Reader` and `Schedule` connections (pairs of every reader with every schedule). */
function useConnections(level: Level | null) {
  return useLoad(async () => {
    if (!level) return null;
    const base = hrefOfObject(level, 'accesslevels', instanceKey.value);
    const [readers, schedules] = await Promise.all([api<Ref[]>(`${base}/connections/Reader`), api<Ref[]>(`${base}/connections/Schedule`)]);
    return { readers, schedules };
  }, [level?.Key, level?.ConcurrencyVersion]);
}

function LevelEditor({ levelKey }: { readonly levelKey: string }) {
  const instance = instanceKey.value;
  const isNew = levelKey === 'new';
  const loaded = useLoad(async () => (isNew ? null : ((await findObject<Level>(instance, 'AccessLevel', levelKey)) ?? 'missing')), [instance, levelKey]);
  const readers = useLoad(async () => byName(await searchObjects<BaseObject>(instance, 'Reader')), [instance]);
  const schedules = useLoad(async () => byName(await searchObjects<BaseObject>(instance, 'Schedule')), [instance]);
  const level = loaded.data && loaded.data !== 'missing' ? loaded.data : null;
  const connections = useConnections(level);

  const [name, setName] = useState('');
  const [entries, setEntries] = useState<Entry[]>([]);
  const [reader, setReader] = useState('');
  const [schedule, setSchedule] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();

  useEffect(() => {
    if (level) {
      setName(level.CommonName ?? '');
      setEntries([...(level.AccessLevelEntries ?? [])]);
    }
  }, [loaded.data]);

  const readerNames = useMemo(() => new Map((readers.data ?? []).map((r) => [r.Key, nameOf(r)])), [readers.data]);
  const scheduleNames = useMemo(() => new Map((schedules.data ?? []).map((s) => [s.Key, nameOf(s)])), [schedules.data]);
  const readerName = (e: Entry) => readerNames.get(e.ReaderId) ?? e.ReaderCommonName ?? e.ReaderId;
  const scheduleName = (e: Entry) => scheduleNames.get(e.ScheduleId) ?? e.ScheduleCommonName ?? e.ScheduleId;

  const add = () => {
    setError(null);
    setStatus(null);
    const r = reader || readers.data?.[0]?.Key;
    const s = schedule || schedules.data?.[0]?.Key;
    if (!r || !s) return setError(new Error('Choose a reader and a schedule.'));
    if (entries.some((e) => e.ReaderId === r && e.ScheduleId === s)) return setError(new Error('This level already pairs that reader with that schedule.'));
    if (entries.length >= MAX_ENTRIES) return setError(new Error(`A level holds at most ${MAX_ENTRIES} pairs.`));
    const next = { ReaderId: r, ScheduleId: s };
    setEntries([...entries, next]);
    setStatus(`Added ${readerName(next)} with ${scheduleName(next)}: save to keep it.`);
  };

  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setStatus(null);
    if (!name.trim()) return setError(new Error('Give the access level a name.'));
    const fields = { CommonName: name.trim(), AccessLevelEntries: entries.map((x) => ({ ReaderId: x.ReaderId, ScheduleId: x.ScheduleId })) };
    return run(async () => {
      if (!isNew && !level) return;
      if (await saveObject({ instance, collection: 'accesslevels', typeName: 'AccessLevelInfo', page: 'access-levels', existing: isNew ? null : level, fields })) {
        loaded.reload();
        setStatus(`${fields.CommonName} is saved.`);
      }
    });
  };

  const title = isNew ? 'New access level' : level ? nameOf(level) : 'Access level';
  const viaConnections = connections.data && connections.data.readers.length > 0 && connections.data.schedules.length > 0 ? connections.data : null;
  return html`<${PageHeader} title=${title}>
      <a class="button secondary" href=${hrefOf('access-levels')}>All access levels</a>
    <//>
    ${loaded.data === 'missing' ? html`<p role="alert" class="error">There is no such access level in this instance.</p>` : null}
    <${ErrorAlert} error=${loaded.error} />
    <${ErrorAlert} error=${readers.error ?? schedules.error} />
    ${loaded.loading && !loaded.data ? html`<p aria-busy="true">Loading…</p>` : null}
    ${isNew || level
      ? html`<form onSubmit=${save} noValidate>
          <div class="panel"><${Field} label="Name" value=${name} onInput=${setName} required=${true} /></div>
          <div class="table-wrap">
            <table>
              <caption>Readers and schedules</caption>
              <thead>
                <tr><th scope="col">Reader</th><th scope="col">Schedule</th><th scope="col"><span class="muted">Action</span></th></tr>
              </thead>
              <tbody>
                ${entries.map((x, i) => {
                  const id = `pair-${i}`;
                  return html`<tr key=${`${x.ReaderId}-${x.ScheduleId}`}>
                    <td id=${id}>${readerName(x)}</td>
                    <td id=${`${id}-s`}>${scheduleName(x)}</td>
                    <td>
                      <button type="button" class="secondary" aria-describedby=${`${id} ${id}-s`} onClick=${() => setEntries(entries.filter((_, j) => j !== i))}>
                        Remove
                      </button>
                    </td>
                  </tr>`;
                })}
                ${entries.length === 0 ? html`<tr><td colspan="3">No reader yet: add one below.</td></tr>` : null}
              </tbody>
            </table>
          </div>
          <div class="panel pair-add">
            <${Select}
              label="Reader"
              value=${reader || readers.data?.[0]?.Key || ''}
              onChange=${setReader}
              options=${(readers.data ?? []).map((r) => ({ value: r.Key, label: nameOf(r) }))}
            />
            <${Select}
              label="Schedule"
              value=${schedule || schedules.data?.[0]?.Key || ''}
              onChange=${setSchedule}
              options=${(schedules.data ?? []).map((s) => ({ value: s.Key, label: nameOf(s) }))}
            />
            <button type="button" class="secondary" onClick=${add} disabled=${!readers.data?.length || !schedules.data?.length}>Add reader and schedule</button>
          </div>
          ${viaConnections
            ? html`<p class="muted">
                Through its connections this level also grants ${viaConnections.readers.map(nameOf).join(', ')} under
                ${viaConnections.schedules.map(nameOf).join(', ')}.
              </p>`
            : null}
          <${ErrorAlert} error=${error ?? connections.error} />
          <${Status} text=${status} />
          <div class="actions"><button type="submit" disabled=${busy}>Save</button></div>
        </form>`
      : null}`;
}

export function AccessLevelsPage({ pageKey }: { readonly pageKey: string | undefined }) {
  return pageKey ? html`<${LevelEditor} key=${pageKey} levelKey=${pageKey} />` : html`<${LevelList} />`;
}
