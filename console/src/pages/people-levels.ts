/**
 * A person's access levels: the `AccessLevel` and `ScheduledAccessLevel` links of the person
 * (docs/api.md "Relationships"). A level given without dates is an `AccessLevel` connection; with
 * a start or an end it is a `ScheduledAccessLevel` whose window the connect call's JSON body sets
 * (connecting again with another window changes it). A window's level is still listed before it
 * starts and after it ends; the list says whether it applies now.
 */
import { useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { hrefOf } from '../router.ts';
import { instanceKey } from '../session.ts';
import { ErrorAlert, Field, Modal, Select, Status, formatTime, useLoad, useAction } from '../ui.ts';
import { isoOfLocal, localInput, windowHolds, windowOfLink, type ObjectLink, type Person, type Window } from './people-data.ts';
import { Section, TableWrap } from './people-ui.ts';

const PLAIN = 'AccessLevel';
const SCHEDULED = 'ScheduledAccessLevel';

interface Held {
  readonly key: string;
  readonly name: string;
  readonly relation: typeof PLAIN | typeof SCHEDULED;
  readonly window: Window;
}

function heldLevels(person: Person): Held[] {
  return (person.ObjectLinks ?? [])
    .filter((l): l is ObjectLink & { LinkedObjectKey: string } => (l.Relation === PLAIN || l.Relation === SCHEDULED) && typeof l.LinkedObjectKey === 'string')
    .map((l) => ({
      key: l.LinkedObjectKey,
      name: l.CommonName || l.LinkedObjectKey,
      relation: l.Relation as Held['relation'],
      window: l.Relation === SCHEDULED ? windowOfLink(l) : { activeOn: null, expiresOn: null },
    }));
}

function windowText(w: Window): string {
  if (!w.activeOn && !w.expiresOn) return 'Always';
  return [w.activeOn ? `from ${formatTime(w.activeOn)}` : '', w.expiresOn ? `until ${formatTime(w.expiresOn)}` : ''].filter(Boolean).join(' ');
}

/** The dates of a window, as the operator types them; an error when they are the wrong way round. */
function windowFrom(from: string, until: string): Window | Error {
  const w = { activeOn: isoOfLocal(from), expiresOn: isoOfLocal(until) };
  if (w.activeOn && w.expiresOn && w.activeOn >= w.expiresOn) return new Error('The level must start before it ends.');
  return w;
}

interface Props {
  readonly person: Person;
  readonly reload: () => Promise<Person>;
  readonly canWrite: boolean;
}

export function LevelsSection({ person, reload, canWrite }: Props) {
  const instance = instanceKey.value;
  const held = heldLevels(person);
  const levels = useLoad(
    () => api<Array<{ Key: string; CommonName?: string }>>(`/api/f/${instance}/accesslevels`, { query: { pageSize: 1000 } }),
    [instance],
  );
  const choices = (levels.data ?? []).filter((l) => !held.some((h) => h.key === l.Key));
  const [chosen, setChosen] = useState('');
  const [from, setFrom] = useState('');
  const [until, setUntil] = useState('');
  const [changing, setChanging] = useState<Held | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  const base = `${person.Href}/connections`;

  const act = (work: () => Promise<string>): Promise<boolean> => {
    setStatus(null);
    return run(async () => {
      const text = await work();
      await reload();
      setStatus(text);
    });
  };

  /** Connects a level with its window: plain without one, scheduled with one. */
  const connect = async (key: string, w: Window) => {
    if (!w.activeOn && !w.expiresOn) await api(`${base}/${PLAIN}`, { method: 'PUT', query: { relatedKey: key } });
    else await api(`${base}/${SCHEDULED}`, { method: 'PUT', query: { relatedKey: key }, body: { ActiveOn: w.activeOn, ExpiresOn: w.expiresOn } });
  };

  const add = async (e: Event) => {
    e.preventDefault();
    const key = chosen || choices[0]?.Key;
    if (!key) return;
    const w = windowFrom(from, until);
    if (w instanceof Error) return setError(w);
    const name = choices.find((c) => c.Key === key)?.CommonName ?? key;
    if (await act(async () => (await connect(key, w), `${name} given${w.activeOn || w.expiresOn ? ` (${windowText(w)})` : ''}.`))) {
      setChosen('');
      setFrom('');
      setUntil('');
    }
  };

  const remove = (h: Held) => act(async () => (await api(`${base}/${h.relation}/${encodeURIComponent(h.key)}`, { method: 'DELETE' }), `${h.name} removed.`));

  /** A new window: the level is connected in its new form first, then the old form removed, so access never lapses between. */
  const rewindow = (h: Held, w: Window) =>
    act(async () => {
      await connect(h.key, w);
      const nowPlain = !w.activeOn && !w.expiresOn;
      if ((h.relation === PLAIN) !== nowPlain) await api(`${base}/${h.relation}/${encodeURIComponent(h.key)}`, { method: 'DELETE' });
      return `${h.name}: ${windowText(w).toLowerCase()}.`;
    });

  return html`<${Section} id="person-levels" title="Access levels">
    <${ErrorAlert} error=${error ?? levels.error} />
    <${Status} text=${status} />
    ${held.length === 0
      ? html`<p class="muted">No access level.</p>`
      : html`<${TableWrap} label="Access levels">
          <table>
            <caption>Access levels of ${person.CommonName ?? 'this person'}</caption>
            <thead>
              <tr><th scope="col">Access level</th><th scope="col">When</th><th scope="col">Now</th>${canWrite ? html`<th scope="col">Actions</th>` : null}</tr>
            </thead>
            <tbody>
              ${held.map(
                (h) => html`<tr key=${`${h.relation}/${h.key}`}>
                  <th scope="row"><a href=${hrefOf('access-levels', h.key)}>${h.name}</a></th>
                  <td>${windowText(h.window)}</td>
                  <td>${windowHolds(h.window) ? 'Applies' : h.window.activeOn && Date.parse(h.window.activeOn) > Date.now() ? 'Not started' : 'Ended'}</td>
                  ${canWrite
                    ? html`<td class="row-actions">
                        <button type="button" class="secondary" disabled=${busy} onClick=${() => setChanging(h)}>Change dates<span class="visually-hidden"> of ${h.name}</span></button>
                        <button type="button" class="secondary" disabled=${busy} onClick=${() => void remove(h)}>Remove<span class="visually-hidden"> ${h.name}</span></button>
                      </td>`
                    : null}
                </tr>`,
              )}
            </tbody>
          </table>
        <//>`}
    ${canWrite
      ? html`<form class="toolbar level-form" onSubmit=${add} aria-label="Give an access level">
          ${choices.length
            ? html`<${Select}
                  label="Access level"
                  value=${chosen || choices[0]!.Key}
                  onChange=${setChosen}
                  options=${choices.map((c) => ({ value: c.Key, label: c.CommonName || c.Key }))}
                />
                <${Field} label="Given from" type="datetime-local" value=${from} hint="Optional" onInput=${setFrom} />
                <${Field} label="Given until" type="datetime-local" value=${until} hint="Optional" onInput=${setUntil} />
                <button type="submit" disabled=${busy}>Add access level</button>`
            : html`<p class="muted">${levels.loading ? 'Loading the access levels…' : 'Every access level of this instance is given.'}</p>`}
        </form>`
      : null}
    ${changing
      ? html`<${WindowDialog}
          held=${changing}
          onSave=${async (w: Window) => {
            // Closed either way: an error shows in the section's alert, not behind the dialog.
            setChanging(null);
            await rewindow(changing, w);
          }}
          onClose=${() => setChanging(null)}
        />`
      : null}
  <//>`;
}

function WindowDialog(p: { readonly held: Held; readonly onSave: (w: Window) => Promise<void>; readonly onClose: () => void }) {
  const [from, setFrom] = useState(localInput(p.held.window.activeOn));
  const [until, setUntil] = useState(localInput(p.held.window.expiresOn));
  const [error, setError] = useState<unknown>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    const w = windowFrom(from, until);
    if (w instanceof Error) return setError(w);
    setError(null);
    void p.onSave(w);
  };
  return html`<${Modal} title=${`Dates of ${p.held.name}`} onClose=${p.onClose}>
    <form onSubmit=${submit}>
      <p class="muted">Leave both empty for a level that always applies.</p>
      <${Field} label="From" type="datetime-local" value=${from} onInput=${setFrom} />
      <${Field} label="Until" type="datetime-local" value=${until} onInput=${setUntil} />
      <${ErrorAlert} error=${error} />
      <div class="actions">
        <button type="submit">Save dates</button>
        <button type="button" class="secondary" onClick=${p.onClose}>Cancel</button>
      </div>
    </form>
  <//>`;
}
