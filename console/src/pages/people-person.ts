/**
 * One person: names and addresses saved with "Save" (a POST for a new person, else a PUT of the
 * whole person as last read, with its version: someone else's change in between answers 409 and
 * is shown, never overwritten), then the sections that act through their own calls: cards, access
 * levels, notes, the readers they can pass now, and their recent events. Every section's write
 * reads the person again, so the next save carries the current version and cards.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { hrefOf, navigate } from '../router.ts';
import { instanceKey, session } from '../session.ts';
import { ErrorAlert, Field, PageHeader, Select, Status } from '../ui.ts';
import { codeOf, type Address, type Person } from './people-data.ts';
import { peoplePath, readPerson } from './people-reads.ts';
import { CardsSection } from './people-cards.ts';
import { Confirm } from './people-ui.ts';
import { LevelsSection } from './people-levels.ts';
import { EventsSection, NotesSection, ReadersSection } from './people-activity.ts';

type Kind = 'MailingAddressInfo' | 'EmailAddressInfo' | 'PhoneInfo';

const KINDS: ReadonlyArray<{ readonly kind: Kind; readonly label: string; readonly fields: ReadonlyArray<readonly [string, string, string?]> }> = [
  { kind: 'EmailAddressInfo', label: 'Email address', fields: [['MailTo', 'Email', 'email']] },
  { kind: 'PhoneInfo', label: 'Phone', fields: [['Number', 'Number', 'tel']] },
  {
    kind: 'MailingAddressInfo',
    label: 'Mailing address',
    fields: [
      ['Street', 'Street'],
      ['City', 'City'],
      ['Province', 'Province or state'],
      ['PostalCode', 'Postal code'],
      ['Country', 'Country'],
    ],
  },
];

/** The concrete type of an address as read (`$type` may be the short or the full name). */
function kindOf(a: Address): Kind {
  const t = typeof a.$type === 'string' ? a.$type : '';
  if (t.includes('EmailAddressInfo') || 'MailTo' in a) return 'EmailAddressInfo';
  if (t.includes('PhoneInfo') || 'Number' in a) return 'PhoneInfo';
  return 'MailingAddressInfo';
}

interface Draft {
  readonly given: string;
  readonly surname: string;
  readonly commonName: string;
  /** The common name follows the given name and surname until the operator writes one of their own. */
  readonly follows: boolean;
  readonly addresses: readonly Address[];
}

const joined = (given: string, surname: string): string => [given.trim(), surname.trim()].filter(Boolean).join(' ');

function draftOf(p: Person | null): Draft {
  const given = p?.GivenName ?? '';
  const surname = p?.Surname ?? '';
  const commonName = p?.CommonName ?? '';
  return { given, surname, commonName, follows: !p || commonName === joined(given, surname), addresses: p?.Addresses ?? [] };
}

/** An address with nothing filled in is left out of a save rather than stored empty. */
const filled = (a: Address): boolean => KINDS.find((k) => k.kind === kindOf(a))!.fields.some(([f]) => typeof a[f] === 'string' && (a[f] as string).trim() !== '');

/** A message read out after a page change (a new person's first save moves to its own URL). */
let carried: string | null = null;

function AddressEditor(p: { readonly addresses: readonly Address[]; readonly onChange: (next: readonly Address[]) => void; readonly canWrite: boolean }) {
  const [adding, setAdding] = useState<Kind>('EmailAddressInfo');
  const set = (i: number, next: Address) => p.onChange(p.addresses.map((a, j) => (j === i ? next : a)));
  const counts = new Map<Kind, number>();
  return html`<fieldset class="addresses">
    <legend>Addresses</legend>
    ${p.addresses.length === 0 ? html`<p class="muted">No address.</p>` : null}
    ${p.addresses.map((a, i) => {
      const kind = kindOf(a);
      const def = KINDS.find((k) => k.kind === kind)!;
      const n = (counts.get(kind) ?? 0) + 1;
      counts.set(kind, n);
      const name = `${def.label} ${n}`;
      return html`<fieldset class="address" key=${i}>
        <legend>${name}</legend>
        <div class="address-fields">
          ${def.fields.map(
            ([field, label, type]) =>
              html`<${Field}
                label=${label}
                type=${type ?? 'text'}
                value=${String(a[field] ?? '')}
                disabled=${!p.canWrite}
                onInput=${(v: string) => set(i, { ...a, [field]: v })}
              />`,
          )}
          <${Field} label="Kind (home, work…)" value=${String(a.Type ?? '')} disabled=${!p.canWrite} onInput=${(v: string) => set(i, { ...a, Type: v })} />
        </div>
        ${p.canWrite
          ? html`<button type="button" class="secondary" onClick=${() => p.onChange(p.addresses.filter((_, j) => j !== i))}>
              Remove<span class="visually-hidden"> ${name.toLowerCase()}</span>
            </button>`
          : null}
      </fieldset>`;
    })}
    ${p.canWrite
      ? html`<div class="toolbar">
          <${Select}
            label="New address"
            value=${adding}
            onChange=${(v: string) => setAdding(v as Kind)}
            options=${KINDS.map((k) => ({ value: k.kind, label: k.label }))}
          />
          <button type="button" class="secondary" onClick=${() => p.onChange([...p.addresses, { $type: adding }])}>Add address</button>
        </div>`
      : null}
  </fieldset>`;
}

export function PersonPage({ personKey }: { readonly personKey: string }) {
  const instance = instanceKey.value;
  const isNew = personKey === 'new';
  const role = session.value?.role;
  const canWrite = role === 'Administrator' || role === 'Operator';
  const [person, setPerson] = useState<Person | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [draft, setDraft] = useState<Draft | null>(isNew ? draftOf(null) : null);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const reload = useCallback(async (): Promise<Person> => {
    const p = await readPerson(`${peoplePath(instance)}/${encodeURIComponent(personKey)}`);
    setPerson(p);
    return p;
  }, [instance, personKey]);

  useEffect(() => {
    if (carried) {
      setStatus(carried);
      carried = null;
    }
    if (isNew) return;
    reload().then(
      (p) => setDraft((d) => d ?? draftOf(p)),
      (err: unknown) => setLoadError(err),
    );
  }, [reload, isNew]);

  const edit = (change: Partial<Draft>) =>
    setDraft((d) => {
      const next = { ...d!, ...change };
      return next.follows ? { ...next, commonName: joined(next.given, next.surname) } : next;
    });

  const save = async (e: Event) => {
    e.preventDefault();
    if (!draft) return;
    setStatus(null);
    const fields = {
      GivenName: draft.given.trim() || null,
      Surname: draft.surname.trim() || null,
      CommonName: draft.commonName.trim() || joined(draft.given, draft.surname),
      Addresses: draft.addresses.filter(filled),
    };
    if (!fields.CommonName) return setError(new Error('A person needs a name: write a given name, a surname or a common name.'));
    setBusy(true);
    setError(null);
    try {
      if (isNew) {
        const made = await api<Person>(peoplePath(instance), { method: 'POST', body: { $type: 'PersonInfo', InFolderKey: instance, ...fields } });
        carried = `${made.CommonName ?? 'The person'} was created.`;
        navigate(hrefOf('people', made.Key), true);
        return;
      }
      // The whole person as last read (cards, links, version) with the form's fields.
      const answer = await api<Person | undefined>(person!.Href, { method: 'PUT', body: { ...person!, ...fields } });
      const fresh = await reload();
      setDraft(draftOf(fresh));
      setStatus(answer === undefined ? 'Nothing to save: no field changed.' : 'Saved.');
    } catch (err) {
      setError(
        codeOf(err) === 'ConcurrencyConflict'
          ? new Error(`${(err as Error).message} Someone else changed this person since it was read: reload the page to see their change, then make yours again.`)
          : err,
      );
    } finally {
      setBusy(false);
    }
  };

  const [confirming, setConfirming] = useState(false);
  const remove = async () => {
    if (!person) return;
    setConfirming(false);
    setError(null);
    try {
      await api(person.Href, { method: 'DELETE' });
      navigate(hrefOf('people'), true);
    } catch (err) {
      setError(err);
    }
  };

  if (loadError) {
    return html`<${PageHeader} title="Person" />
      <${ErrorAlert} error=${loadError} />
      <p><a href=${hrefOf('people')}>Back to people</a></p>`;
  }
  if (!draft) return html`<${PageHeader} title="Person" /><p aria-busy="true">Loading…</p>`;
  const title = isNew ? 'New person' : person?.CommonName || 'Person';

  return html`<div class="people person">
    <p class="back"><a href=${hrefOf('people')}>People</a></p>
    <${PageHeader} title=${title}>
      ${!isNew && canWrite ? html`<button type="button" class="danger" onClick=${() => setConfirming(true)}>Delete person</button>` : null}
    <//>
    ${confirming
      ? html`<${Confirm}
          title="Delete this person?"
          text=${`${person?.CommonName ?? 'This person'}, their cards and their notes are deleted. Their events stay.`}
          action="Delete person"
          onConfirm=${remove}
          onClose=${() => setConfirming(false)}
        />`
      : null}
    <form class="panel" onSubmit=${save} aria-label="Names and addresses">
      <div class="grid-2">
        <${Field} label="Given name" value=${draft.given} autocomplete="off" disabled=${!canWrite} onInput=${(v: string) => edit({ given: v })} />
        <${Field} label="Surname" value=${draft.surname} autocomplete="off" disabled=${!canWrite} onInput=${(v: string) => edit({ surname: v })} />
      </div>
      <${Field}
        label="Common name"
        value=${draft.commonName}
        autocomplete="off"
        disabled=${!canWrite}
        hint="The name shown in lists and events: the given name and surname unless you write another."
        onInput=${(v: string) => setDraft((d) => ({ ...d!, commonName: v, follows: v === '' || v === joined(d!.given, d!.surname) }))}
      />
      <${AddressEditor} addresses=${draft.addresses} canWrite=${canWrite} onChange=${(addresses: readonly Address[]) => setDraft((d) => ({ ...d!, addresses }))} />
      <${ErrorAlert} error=${error} />
      <${Status} text=${status} />
      ${canWrite ? html`<button type="submit" disabled=${busy}>Save</button>` : null}
    </form>
    ${person
      ? html`
          <${CardsSection} person=${person} reload=${reload} canWrite=${canWrite} />
          <${LevelsSection} person=${person} reload=${reload} canWrite=${canWrite} />
          <${ReadersSection} person=${person} />
          <${NotesSection} person=${person} canWrite=${canWrite} />
          <${EventsSection} person=${person} />
        `
      : null}
  </div>`;
}
