/**
 * Doors: the doors of a folder (the whole instance by default) and below it, each with its
 * readers' modes, the lockdown over it and its last event, kept live from the event feed; a
 * momentary "Unlock", a reader's mode ("Set mode", optionally until an instant), "Who can pass
 * now" of a reader; and the folder's lockdown ("Lock down", confirmed in a dialog, and "End
 * lockdown"). A door is a `DoorInfo`; its readers are the readers connected to it (`Door`
 * relation), which its status lists (docs/doors.md).
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { onLiveEvent, type LiveEvent } from '../live.ts';
import { here, hrefOf, navigate } from '../router.ts';
import { currentInstance, instanceKey, session } from '../session.ts';
import { ErrorAlert, PageHeader, Select, Status, formatTime, useLoad } from '../ui.ts';
import { accessMethodName, nameOf, searchObjects, type BaseObject, type DoorStatus, type LockdownStatus, type ReaderStatus } from './doors-api.ts';
import { LockDownDialog, SetModeDialog, WhoCanPassDialog } from './doors-dialogs.ts';
import '../styles/doors.css';

/** Doors shown per page of the table. */
const DOORS_PER_PAGE = 50;

interface FolderOption {
  readonly key: string;
  readonly label: string;
}

/** The instance's folders as select options, each named by its path ("Building A / Floor 1"), the instance first. */
function folderOptions(instance: { key: string; name: string }, folders: readonly BaseObject[]): FolderOption[] {
  const byKey = new Map(folders.map((f) => [f.Key, f]));
  const pathOf = (f: BaseObject): string[] => {
    const names: string[] = [];
    for (let at: BaseObject | undefined = f, depth = 0; at && depth < 64; at = at.InFolderKey ? byKey.get(at.InFolderKey) : undefined, depth++) names.unshift(nameOf(at));
    return names;
  };
  const options = folders.map((f) => ({ key: f.Key, label: pathOf(f).join(' / ') })).sort((a, b) => a.label.localeCompare(b.label));
  return [{ key: instance.key, label: `${instance.name} (whole instance)` }, ...options];
}

/** A door's row: the door, its status (once read) and its last event (from the status's, then the feed). */
interface Row {
  readonly door: BaseObject;
  readonly status?: DoorStatus;
  readonly error?: unknown;
  /** Its last event; `key` opens the event's detail (and "Why?" for an access event). */
  readonly last?: { readonly name: string; readonly at?: string; readonly key?: string };
}

interface Summary {
  readonly ObjectKey: string;
  readonly EventKey?: string;
  readonly MessageShort?: string;
  readonly OccurredOn?: string;
}

/** The keys an event relates (its `RelatedObjects`, as published). */
function relatedKeys(e: LiveEvent): string[] {
  return (e.RelatedObjects ?? []).map((r) => String((r as Record<string, unknown>).LinkedObjectKey ?? r.Key ?? '')).filter(Boolean);
}

function nicknameOf(e: LiveEvent): string {
  const m = e.EventTypeMoniker as { Nickname?: string } | null | undefined;
  return m?.Nickname ?? '';
}

export function DoorsPage(_p: { readonly pageKey: string | undefined }) {
  const instance = instanceKey.value;
  const instanceName = currentInstance.value?.name ?? session.value?.instanceName ?? instance;
  const role = session.value?.role;
  const canAct = role === 'Administrator' || role === 'Operator';
  const asked = here.value.query.get('folder');

  const folders = useLoad(() => searchObjects<BaseObject>(instance, 'Folder'), [instance]);
  const options = useMemo(() => folderOptions({ key: instance, name: instanceName }, folders.data ?? []), [instance, instanceName, folders.data]);
  // A folder of another instance (the link of another instance, or the switcher changed it): the whole instance.
  const folderKey = asked && !(folders.data && !options.some((o) => o.key === asked)) ? asked : instance;
  const folderName = options.find((o) => o.key === folderKey)?.label ?? folderKey;
  const folderNames = useMemo(() => new Map(options.map((o) => [o.key, o.key === instance ? instanceName : o.label])), [options]);

  const [pages, setPages] = useState(1);
  const [rows, setRows] = useState<ReadonlyMap<string, Row>>(new Map());
  const [hasMore, setHasMore] = useState(false);
  const [listError, setListError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [lockdown, setLockdown] = useState<LockdownStatus | null>(null);
  const [lockdownError, setLockdownError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [dialog, setDialog] = useState<
    | { kind: 'lockdown' }
    | { kind: 'mode'; folder: string; reader: ReaderStatus; lockedDown: boolean }
    | { kind: 'who'; folder: string; reader: ReaderStatus }
    | null
  >(null);
  const [busy, setBusy] = useState<string | null>(null);
  // The rows as they are now, for listeners registered once.
  const current = useRef(rows);
  current.current = rows;

  const update = (key: string, change: (r: Row) => Row) =>
    setRows((m) => {
      const r = m.get(key);
      if (!r) return m;
      const next = new Map(m);
      next.set(key, change(r));
      return next;
    });

  // One status read per door at a time: events arriving meanwhile ask for one more read after it,
  // however many they are (a busy door's card reads must not become as many calls).
  const reading = useRef(new Map<string, boolean>());
  const readStatus = async (door: BaseObject): Promise<void> => {
    if (reading.current.has(door.Key)) {
      reading.current.set(door.Key, true);
      return;
    }
    reading.current.set(door.Key, false);
    try {
      await readStatusNow(door);
    } finally {
      const again = reading.current.get(door.Key);
      reading.current.delete(door.Key);
      if (again) void readStatus(door);
    }
  };

  const readStatusNow = async (door: BaseObject): Promise<void> => {
    try {
      const s = await api<DoorStatus>(`/api/f/${encodeURIComponent(door.InFolderKey ?? instance)}/doors/${encodeURIComponent(door.Key)}/status`);
      update(door.Key, (r) => ({ ...r, status: s, error: undefined, last: r.last ?? (s.LastEvent ? { name: nameOf(s.LastEvent) } : undefined) }));
    } catch (err) {
      update(door.Key, (r) => ({ ...r, error: err }));
    }
  };

  const readLockdown = async (): Promise<void> => {
    try {
      setLockdown(await api<LockdownStatus>(`/api/f/${encodeURIComponent(folderKey)}/lockdown`));
      setLockdownError(null);
    } catch (err) {
      setLockdownError(err);
    }
  };

  // The doors of the folder, then each door's status and the doors' last events (one call for all).
  useEffect(() => {
    let live = true;
    setLoading(true);
    void (async () => {
      try {
        const list: BaseObject[] = [];
        for (let page = 0; page < pages; page++) list.push(...(await searchObjects<BaseObject>(folderKey, 'Door', page, DOORS_PER_PAGE)));
        if (!live) return;
        setHasMore(list.length === pages * DOORS_PER_PAGE);
        setRows(new Map(list.map((d) => [d.Key, { door: d, ...(rows.get(d.Key)?.status ? { status: rows.get(d.Key)!.status } : {}) }])));
        setListError(null);
        setLoading(false);
        const keys = list.map((d) => d.Key);
        const [summaries] = await Promise.all([
          keys.length ? api<Summary[]>(`/api/f/${encodeURIComponent(instance)}/lastevent`, { method: 'POST', body: keys }).catch(() => [] as Summary[]) : Promise.resolve([] as Summary[]),
          ...list.map(readStatus),
        ]);
        if (!live) return;
        for (const s of summaries) update(s.ObjectKey, (r) => ({ ...r, last: { name: s.MessageShort ?? '', ...(s.OccurredOn ? { at: s.OccurredOn } : {}), ...(s.EventKey ? { key: s.EventKey } : {}) } }));
      } catch (err) {
        if (live) {
          setListError(err);
          setLoading(false);
        }
      }
    })();
    return () => {
      live = false;
    };
  }, [folderKey, pages, instance]);

  useEffect(() => {
    setLockdown(null);
    void readLockdown();
  }, [folderKey]);

  // Live: an event relating a door or one of its readers reads that door again and is its last
  // event; a lockdown started or ended anywhere reads every door and the folder's lockdown again.
  useEffect(
    () =>
      onLiveEvent((e) => {
        const keys = relatedKeys(e);
        const nickname = nicknameOf(e);
        if (nickname === 'lockdown-started' || nickname === 'lockdown-ended') {
          void readLockdown();
          for (const r of current.current.values()) void readStatus(r.door);
        }
        for (const r of current.current.values()) {
          const readers = r.status?.Readers.map((x) => x.Reader.Key) ?? [];
          if (!keys.includes(r.door.Key) && !readers.some((k) => keys.includes(k))) continue;
          update(r.door.Key, (x) => ({ ...x, last: { name: String(e.MessageShort ?? ''), ...(typeof e.OccurredOn === 'string' ? { at: e.OccurredOn } : {}), ...(e.Key ? { key: e.Key } : {}) } }));
          void readStatus(r.door);
        }
      }),
    [folderKey],
  );

  // A momentary unlock ends by itself: read the door again when it does.
  useEffect(() => {
    const ends = [...rows.values()].map((r) => (r.status?.UnlockedUntil ? { r, at: Date.parse(r.status.UnlockedUntil) } : null)).filter((x) => x !== null);
    const timers = ends.map(({ r, at }) => setTimeout(() => void readStatus(r.door), Math.max(0, at - Date.now()) + 250));
    return () => timers.forEach(clearTimeout);
  }, [rows]);

  const act = async (label: string, run: () => Promise<string>) => {
    setBusy(label);
    setError(null);
    setStatus(null);
    try {
      setStatus(await run());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  const unlock = (r: Row) =>
    act(`unlock-${r.door.Key}`, async () => {
      const s = await api<DoorStatus>(`/api/f/${encodeURIComponent(r.door.InFolderKey ?? instance)}/doors/${encodeURIComponent(r.door.Key)}/unlock`, { method: 'POST', body: {} });
      update(r.door.Key, (x) => ({ ...x, status: s }));
      return `${nameOf(r.door)} is unlocked${s.UnlockedUntil ? ` until ${new Date(s.UnlockedUntil).toLocaleTimeString()}` : ''}.`;
    });

  const endLockdown = () =>
    act('end-lockdown', async () => {
      setLockdown(await api<LockdownStatus>(`/api/f/${encodeURIComponent(folderKey)}/lockdown`, { method: 'DELETE' }));
      for (const r of rows.values()) void readStatus(r.door);
      return `The lockdown of ${folderName} has ended.`;
    });

  const chooseFolder = (key: string) => {
    setPages(1);
    navigate(hrefOf('doors', undefined, { folder: key === instance ? undefined : key }), true);
  };

  const lockdownHere = lockdown?.Lockdown ?? null;
  const startedHere = lockdownHere?.Folder?.Key === folderKey;

  return html`<${PageHeader} title="Doors" />
    <div class="toolbar">
      <${Select} label="Folder" value=${folderKey} onChange=${chooseFolder} options=${options.map((o) => ({ value: o.key, label: o.label }))} />
    </div>
    <${ErrorAlert} error=${folders.error} />

    <section class="panel lockdown-panel" aria-labelledby="lockdown-heading">
      <h2 id="lockdown-heading">Lockdown of ${folderName}</h2>
      ${lockdown === null && !lockdownError ? html`<p aria-busy="true">Loading…</p>` : null}
      ${lockdown && !lockdownHere ? html`<p>No lockdown is in effect here.</p>` : null}
      ${lockdownHere
        ? html`<p class="locked">
            <strong>Locked down</strong> since ${formatTime(lockdownHere.StartedOn)} by ${lockdownHere.StartedBy}: ${lockdownHere.Reason}.
            ${startedHere
              ? null
              : lockdownHere.Folder
                ? html` Started at ${nameOf(lockdownHere.Folder)}: it ends there.`
                : ' Started by an instance above this one.'}
          </p>`
        : null}
      <${ErrorAlert} error=${lockdownError} />
      ${canAct
        ? html`<div class="actions">
            ${lockdown && !lockdownHere ? html`<button type="button" class="danger" onClick=${() => setDialog({ kind: 'lockdown' })}>Lock down</button>` : null}
            ${lockdownHere && startedHere && role === 'Administrator'
              ? html`<button type="button" disabled=${busy === 'end-lockdown'} onClick=${endLockdown}>End lockdown</button>`
              : null}
            ${lockdownHere && !startedHere && lockdownHere.Folder && options.some((o) => o.key === lockdownHere.Folder!.Key)
              ? html`<button type="button" class="secondary" onClick=${() => chooseFolder(lockdownHere.Folder!.Key)}>Show ${nameOf(lockdownHere.Folder)}</button>`
              : null}
            ${lockdownHere && startedHere && role !== 'Administrator' ? html`<p class="muted">Only an administrator can end a lockdown.</p>` : null}
          </div>`
        : null}
    </section>

    <${Status} text=${status} />
    <${ErrorAlert} error=${error} />
    <${ErrorAlert} error=${listError} />

    <div class="table-wrap">
      <table class="doors">
        <caption>Doors</caption>
        <thead>
          <tr>
            <th scope="col">Door</th>
            <th scope="col">Momentary unlock</th>
            <th scope="col">Readers</th>
            <th scope="col">Lockdown</th>
            <th scope="col">Last event</th>
          </tr>
        </thead>
        <tbody>
          ${[...rows.values()].map((r) => {
            const s = r.status;
            const id = `door-${r.door.Key}`;
            const folder = r.door.InFolderKey ?? instance;
            return html`<tr key=${r.door.Key}>
              <th scope="row">
                <span class="door-name" id=${id}>${nameOf(r.door)}</span>
                <small class="muted">${folderNames.get(folder) ?? ''}</small>
              </th>
              <td class="unlock">
                ${s?.UnlockedUntil ? html`<span class="unlocked">Unlocked until ${new Date(s.UnlockedUntil).toLocaleTimeString()}</span>` : null}
                ${canAct
                  ? html`<button type="button" aria-describedby=${id} disabled=${busy === `unlock-${r.door.Key}` || !!s?.LockedDown} onClick=${() => unlock(r)}>Unlock</button>`
                  : null}
              </td>
              <td>
                ${s ? null : r.error ? html`<${ErrorAlert} error=${r.error} />` : html`<span aria-busy="true">Loading…</span>`}
                ${s?.Readers.length === 0 ? html`<span class="muted">No reader</span>` : null}
                <ul class="readers">
                  ${(s?.Readers ?? []).map((x) => {
                    const rid = `reader-${x.Reader.Key}`;
                    const changed = x.EffectiveAccessMethod !== x.AccessMethod;
                    // Under a lockdown a decision sees "locked down" whatever mode is set; a set mode's end still shows.
                    const mode = s?.LockedDown
                      ? `Locked down by the lockdown${x.Until ? ` (a set mode lasts until ${formatTime(x.Until)})` : ''}`
                      : `${accessMethodName(x.EffectiveAccessMethod)}${x.Until ? ` until ${formatTime(x.Until)}` : ''}${changed ? ` (normally ${accessMethodName(x.AccessMethod)})` : ''}`;
                    return html`<li key=${x.Reader.Key}>
                      <span id=${rid} class="reader-name">${nameOf(x.Reader)}</span>
                      <span class=${s?.LockedDown ? 'mode locked' : changed ? 'mode changed' : 'mode'}>${mode}</span>
                      <span class="actions">
                        ${canAct ? html`<button type="button" class="secondary" aria-describedby=${rid} onClick=${() => setDialog({ kind: 'mode', folder, reader: x, lockedDown: !!s?.LockedDown })}>Set mode</button>` : null}
                        <button type="button" class="secondary" aria-describedby=${rid} onClick=${() => setDialog({ kind: 'who', folder, reader: x })}>Who can pass now</button>
                      </span>
                    </li>`;
                  })}
                </ul>
              </td>
              <td>
                ${s?.LockedDown
                  ? html`<span class="locked">Locked down${s.LockedDown.Folder ? ` (${nameOf(s.LockedDown.Folder)})` : ' (by an instance above)'}</span>`
                  : s
                    ? 'None'
                    : ''}
              </td>
              <td>${r.last ? html`${r.last.key ? html`<a href=${hrefOf('live', r.last.key)}>${r.last.name || 'Event'}</a>` : r.last.name}${r.last.at ? html`<br /><small class="muted">${formatTime(r.last.at)}</small>` : null}` : ''}</td>
            </tr>`;
          })}
          ${!loading && rows.size === 0 && !listError ? html`<tr><td colspan="5">No door in ${folderName}.</td></tr>` : null}
        </tbody>
      </table>
    </div>
    ${loading ? html`<p aria-busy="true">Loading…</p>` : null}
    ${hasMore ? html`<div class="pager"><button type="button" class="secondary" onClick=${() => setPages((n) => n + 1)}>More doors</button></div>` : null}

    ${dialog?.kind === 'lockdown'
      ? html`<${LockDownDialog}
          folderKey=${folderKey}
          folderName=${folderName}
          onClose=${() => setDialog(null)}
          onDone=${(s: LockdownStatus) => {
            setDialog(null);
            setLockdown(s);
            setError(null);
            setStatus(`${folderName} is locked down.`);
            for (const r of rows.values()) void readStatus(r.door);
          }}
        />`
      : null}
    ${dialog?.kind === 'mode'
      ? html`<${SetModeDialog}
          folderKey=${dialog.folder}
          reader=${dialog.reader}
          lockedDown=${dialog.lockedDown}
          onClose=${() => setDialog(null)}
          onDone=${(s: DoorStatus, text: string) => {
            setDialog(null);
            setError(null);
            setStatus(text);
            if (s.Door) update(s.Door.Key, (r) => ({ ...r, status: s }));
          }}
        />`
      : null}
    ${dialog?.kind === 'who' ? html`<${WhoCanPassDialog} folderKey=${dialog.folder} reader=${dialog.reader} onClose=${() => setDialog(null)} />` : null}`;
}
