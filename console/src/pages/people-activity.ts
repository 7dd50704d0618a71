/**
 * What a person's page shows beside their record: notes (the object's `notes` link), the readers
 * they can pass now (the `accessiblereaders` call of docs/access.md) and their recent events (the
 * events list for their key, newest first, read again when a live event relates them).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { hrefOf } from '../router.ts';
import { instanceKey } from '../session.ts';
import { onLiveEvent, type LiveEvent } from '../live.ts';
import { ErrorAlert, Status, formatTime, useLoad, useAction } from '../ui.ts';
import { type Person } from './people-data.ts';
import { eventTypeName } from '../event-type-names.ts';
import { priorityClass } from '../event-priority.ts';
import { Section, TableWrap } from './people-ui.ts';

interface Note {
  readonly Key?: string;
  readonly NoteText?: string;
  readonly CreatedOn?: string;
  readonly CreatedBy?: string;
}

export function NotesSection({ person, canWrite }: { readonly person: Person; readonly canWrite: boolean }) {
  const notes = useLoad(() => api<Note[]>(`${person.Href}/notes`), [person.Href]);
  const [text, setText] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();

  const add = async (e: Event) => {
    e.preventDefault();
    if (!text.trim()) return setError(new Error('Write the note first.'));
    setStatus(null);
    return run(async () => {
      await api(`${person.Href}/notes`, { method: 'POST', body: { $type: 'NoteInfo', NoteText: text.trim() } });
      setText('');
      setStatus('Note added.');
      notes.reload();
    });
  };

  const list = [...(notes.data ?? [])].reverse();
  return html`<${Section} id="person-notes" title="Notes">
    <${ErrorAlert} error=${error ?? notes.error} />
    <${Status} text=${status} />
    ${list.length === 0
      ? html`<p class="muted">${notes.loading ? 'Loading…' : 'No note.'}</p>`
      : html`<ol class="notes" aria-label="Notes, newest first">
          ${list.map(
            (n) => html`<li key=${n.Key}>
              <p class="note-text">${n.NoteText}</p>
              <p class="muted"><small>${formatTime(n.CreatedOn)}${n.CreatedBy ? ` · ${n.CreatedBy}` : ''}</small></p>
            </li>`,
          )}
        </ol>`}
    ${canWrite
      ? html`<form onSubmit=${add} class="note-form">
          <div class="field">
            <label for="person-note">Note</label>
            <textarea id="person-note" rows="3" value=${text} onInput=${(e: Event) => setText((e.currentTarget as HTMLTextAreaElement).value)}></textarea>
          </div>
          <button type="submit" disabled=${busy}>Add note</button>
        </form>`
      : null}
  <//>`;
}

interface Ref {
  readonly Key?: string;
  readonly CommonName?: string | null;
}

interface Passable {
  readonly Reader?: Ref | null;
  readonly Door?: Ref | null;
  readonly AccessLevel?: Ref | null;
  readonly Schedule?: Ref | null;
}

export function ReadersSection({ person }: { readonly person: Person }) {
  const instance = instanceKey.value;
  // Cards and levels are part of the person: a change to either moves its version.
  const readers = useLoad(async () => {
    const rows = await api<Passable[]>(`/api/f/${instance}/people/${encodeURIComponent(person.Key)}/accessiblereaders`);
    return { rows, at: new Date().toISOString() };
  }, [instance, person.Key, person.ConcurrencyVersion]);
  const rows = readers.data?.rows ?? [];
  return html`<${Section}
    id="person-readers"
    title="Readers they can pass now"
    actions=${html`<button type="button" class="secondary" onClick=${readers.reload}>Refresh<span class="visually-hidden"> the readers they can pass</span></button>`}
  >
    <${ErrorAlert} error=${readers.error} />
    ${readers.data ? html`<p class="muted"><small>As of ${formatTime(readers.data.at)}: an active card, a level that pairs the reader with a schedule open now, the reader not locked.</small></p>` : null}
    <${TableWrap} label="Readers they can pass now">
      <table aria-busy=${readers.loading ? 'true' : 'false'}>
        <caption>Readers they can pass now</caption>
        <thead>
          <tr><th scope="col">Reader</th><th scope="col">Door</th><th scope="col">Access level</th><th scope="col">Schedule</th></tr>
        </thead>
        <tbody>
          ${rows.map(
            (r) => html`<tr key=${r.Reader?.Key}>
              <th scope="row">${r.Reader?.CommonName ?? r.Reader?.Key ?? ''}</th>
              <td>${r.Door?.CommonName ?? ''}</td>
              <td>${r.AccessLevel?.Key ? html`<a href=${hrefOf('access-levels', r.AccessLevel.Key)}>${r.AccessLevel.CommonName ?? r.AccessLevel.Key}</a>` : ''}</td>
              <td>${r.Schedule?.CommonName ?? ''}</td>
            </tr>`,
          )}
          ${!readers.loading && !readers.error && rows.length === 0 ? html`<tr><td colspan="4">None now.</td></tr>` : null}
        </tbody>
      </table>
    <//>
  <//>`;
}

interface EventRow {
  readonly Key: string;
  readonly OccurredOn?: string;
  readonly AppKey?: string;
  readonly EventTypeKey?: string;
  readonly EventTypeMoniker?: { readonly Nickname?: string } | null;
  readonly MessageLong?: string;
  readonly MessageShort?: string;
  readonly Priority?: number;
}

const RECENT = 10;

/** Whether a live event relates the person (its related objects, as published or as stored). */
function relates(e: LiveEvent, personKey: string): boolean {
  const items = [...(e.RelatedObjects ?? []), ...((e.ObjectLinks as ReadonlyArray<Record<string, unknown>> | undefined) ?? [])] as ReadonlyArray<Record<string, unknown>>;
  return items.some((o) => o.LinkedObjectKey === personKey || o.Key === personKey);
}

export function EventsSection({ person }: { readonly person: Person }) {
  const instance = instanceKey.value;
  const events = useLoad(async () => {
    return api<EventRow[]>(`/api/f/${instance}/events`, { query: { forKeys: person.Key, includeSubFolders: true, pageSize: RECENT } });
  }, [instance, person.Key]);
  const { reload } = events;
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => {
    const stop = onLiveEvent((e) => {
      if (!relates(e, person.Key)) return;
      // A burst of events (a save and its audit event) reads the list once.
      clearTimeout(pending.current);
      pending.current = setTimeout(reload, 300);
    });
    return () => {
      stop();
      clearTimeout(pending.current);
    };
  }, [person.Key, reload]);
  const rows = events.data ?? [];
  return html`<${Section} id="person-events" title="Recent events">
    <${ErrorAlert} error=${events.error} />
    <${TableWrap} label="Recent events">
      <table aria-busy=${events.loading ? 'true' : 'false'}>
        <caption>Recent events of ${person.CommonName ?? 'this person'}, newest first</caption>
        <thead>
          <tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Message</th></tr>
        </thead>
        <tbody>
          ${rows.map(
            (e) => html`<tr key=${e.Key} class=${priorityClass(e.Priority)}>
              <td><time datetime=${e.OccurredOn}>${formatTime(e.OccurredOn)}</time></td>
              <td>${eventTypeName(e)}</td>
              <td>${e.MessageLong || e.MessageShort || ''}</td>
            </tr>`,
          )}
          ${!events.loading && !events.error && rows.length === 0 ? html`<tr><td colspan="3">No event yet.</td></tr>` : null}
        </tbody>
      </table>
    <//>
  <//>`;
}
