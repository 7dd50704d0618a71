/**
 * The Doors page's dialogs: confirming a lockdown (with its reason), setting a reader's mode (with
 * an optional "until"), and who can pass a reader now. Each is a native modal dialog named by its
 * title; its failures show inside it (role=alert) and it closes on success, leaving the page to
 * announce the result.
 */
import { useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { hrefOf } from '../router.ts';
import { ErrorAlert, Field, Modal, Select, useLoad, useAction } from '../ui.ts';
import { ACCESS_METHODS, accessMethodName, nameOf, type DoorStatus, type LockdownStatus, type Passer, type ReaderStatus } from './doors-api.ts';

/** "Lock down <folder>?": the reason, then `POST /api/f/<folder>/lockdown`. */
export function LockDownDialog(p: { readonly folderKey: string; readonly folderName: string; readonly onDone: (s: LockdownStatus) => void; readonly onClose: () => void }) {
  const [reason, setReason] = useState('');
  const { busy, error, setError, run } = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!reason.trim()) return setError(new Error('Give the reason for the lockdown: it is in the event and shown to everyone below.'));
    return run(async () => p.onDone(await api<LockdownStatus>(`/api/f/${encodeURIComponent(p.folderKey)}/lockdown`, { method: 'POST', body: { Reason: reason.trim() } })));
  };
  return html`<${Modal} title=${`Lock down ${p.folderName}?`} onClose=${p.onClose}>
    <form onSubmit=${submit} noValidate>
      <p>
        Every reader in ${p.folderName} and below it will refuse every card (except lockdown-exempt ones), and no door there can be
        unlocked, until an administrator ends the lockdown.
      </p>
      <${Field} label="Reason" value=${reason} onInput=${setReason} required=${true} />
      <${ErrorAlert} error=${error} />
      <div class="actions">
        <button type="submit" class="danger" disabled=${busy}>Lock down</button>
        <button type="button" class="secondary" onClick=${p.onClose}>Cancel</button>
      </div>
    </form>
  <//>`;
}

/** A `datetime-local` value (the browser's zone) as an instant, or null when it is not one. */
function instantOf(local: string): Date | null {
  const d = new Date(local);
  return local && !Number.isNaN(d.getTime()) ? d : null;
}

/** "Mode of <reader>": one of the modes the API sets, or back to normal; optionally until an instant. */
export function SetModeDialog(p: {
  readonly folderKey: string;
  readonly reader: ReaderStatus;
  /** Under a lockdown the status shows "locked down", not the mode set: the choice starts from the normal mode. */
  readonly lockedDown: boolean;
  readonly onDone: (s: DoorStatus, text: string) => void;
  readonly onClose: () => void;
}) {
  const set = !p.lockedDown && p.reader.EffectiveAccessMethod !== p.reader.AccessMethod;
  const [mode, setMode] = useState(set ? String(p.reader.EffectiveAccessMethod) : 'normal');
  const [until, setUntil] = useState('');
  const { busy, error, setError, run } = useAction();
  const name = nameOf(p.reader.Reader);
  const normal = mode === 'normal';
  const submit = async (e: Event) => {
    e.preventDefault();
    const at = instantOf(until);
    if (!normal && until && !at) return setError(new Error('"Until" is not a date and time.'));
    if (at && at.getTime() <= Date.now()) return setError(new Error('"Until" must be later than now.'));
    const body = normal ? { AccessMethod: null } : { AccessMethod: Number(mode), ...(at ? { Until: at.toISOString() } : {}) };
    return run(async () => {
      const status = await api<DoorStatus>(`/api/f/${encodeURIComponent(p.folderKey)}/readers/${encodeURIComponent(p.reader.Reader.Key)}/mode`, { method: 'PUT', body });
      const text = normal
        ? `${name} is back to its normal mode (${accessMethodName(p.reader.AccessMethod)}).`
        : `${name} is now ${accessMethodName(Number(mode))}${at ? ` until ${at.toLocaleString()}` : ''}.`;
      p.onDone(status, text);
    });
  };
  return html`<${Modal} title=${`Mode of ${name}`} onClose=${p.onClose}>
    <form onSubmit=${submit} noValidate>
      <p>
        Its normal mode is ${accessMethodName(p.reader.AccessMethod)}.${p.lockedDown ? ' A lockdown holds it locked down whatever mode is set, until the lockdown ends.' : ''}
      </p>
      <${Select}
        label="Mode"
        value=${mode}
        onChange=${setMode}
        options=${[{ value: 'normal', label: `Normal mode (${accessMethodName(p.reader.AccessMethod)})` }, ...ACCESS_METHODS.map((m) => ({ value: String(m.value), label: m.label }))]}
      />
      <${Field}
        label="Until"
        type="datetime-local"
        value=${until}
        onInput=${setUntil}
        disabled=${normal}
        hint="Optional, your local time: after it the normal mode applies again. Empty: until changed."
      />
      <${ErrorAlert} error=${error} />
      <div class="actions">
        <button type="submit" disabled=${busy}>Set mode</button>
        <button type="button" class="secondary" onClick=${p.onClose}>Cancel</button>
      </div>
    </form>
  <//>`;
}

/**
 * Holders read per page. A page lists those of them who would be granted, so it may be short with
 * more after it; an empty page ends the list (the API's paging convention).
 */
const PAGE_SIZE = 100;
/** Rows shown before "Show more" asks for the next ones. */
const ROWS_PER_STEP = 100;
/** Pages read at most per step (each reads PAGE_SIZE holders, however few pass). */
const PAGES_PER_STEP = 20;

/** "Who can pass <reader> now": the people whose card would be granted there, step after step. */
export function WhoCanPassDialog(p: { readonly folderKey: string; readonly reader: ReaderStatus; readonly onClose: () => void }) {
  const [steps, setSteps] = useState(1);
  // One instant for every page: the pages of one list answer the same question.
  const [at] = useState(() => new Date().toISOString());
  const path = `/api/f/${encodeURIComponent(p.folderKey)}/readers/${encodeURIComponent(p.reader.Reader.Key)}/whocanpass`;
  const loaded = useLoad(async () => {
    const rows: Passer[] = [];
    let page = 0;
    let ended = false;
    while (!ended && rows.length < steps * ROWS_PER_STEP && page < steps * PAGES_PER_STEP) {
      const got = await api<Passer[]>(path, { query: { at, page, pageSize: PAGE_SIZE } });
      rows.push(...got);
      ended = got.length === 0;
      page++;
    }
    return { rows, ended };
  }, [path, steps]);
  const list = loaded.data?.rows ?? [];
  const more = loaded.data !== undefined && !loaded.data.ended;
  const name = nameOf(p.reader.Reader);
  return html`<${Modal} title=${`Who can pass ${name} now`} onClose=${p.onClose}>
    <p class="muted">At ${new Date(at).toLocaleString()}: the people whose card would be granted at this reader.</p>
    <div class="table-wrap">
      <table>
        <caption>Who can pass now</caption>
        <thead>
          <tr><th scope="col">Person</th><th scope="col">Card</th><th scope="col">Access level</th><th scope="col">Schedule</th></tr>
        </thead>
        <tbody>
          ${list.map(
            (x) => html`<tr key=${`${x.Person.Key}-${x.Card?.Key ?? ''}`}>
              <td><a href=${hrefOf('people', x.Person.Key)}>${nameOf(x.Person)}</a></td>
              <td>${x.Card?.DisplayCardNumber ?? '—'}</td>
              <td>${x.AccessLevel ? html`<a href=${hrefOf('access-levels', x.AccessLevel.Key)}>${nameOf(x.AccessLevel)}</a>` : '—'}</td>
              <td>${x.Schedule ? html`<a href=${hrefOf('schedules', x.Schedule.Key)}>${nameOf(x.Schedule)}</a>` : '—'}</td>
            </tr>`,
          )}
          ${!loaded.loading && list.length === 0 ? html`<tr><td colspan="4">Nobody can pass this reader now.</td></tr>` : null}
        </tbody>
      </table>
    </div>
    ${loaded.loading ? html`<p aria-busy="true">Loading…</p>` : null}
    <${ErrorAlert} error=${loaded.error} />
    <div class="actions">
      ${more ? html`<button type="button" class="secondary" onClick=${() => setSteps((n) => n + 1)}>Show more</button>` : null}
      <button type="button" onClick=${p.onClose}>Close</button>
    </div>
  <//>`;
}
