/**
 * A person's cards, through the card calls (docs/api.md "Cards"): each add, edit, disable or
 * enable is one write of the person, the number claimed in the same transaction (a number someone
 * else holds answers 409 CardIsAlreadyAssigned, shown in the dialog). "Deactivate all cards" is one
 * PUT of the whole person with every card `IsDisabled`: all or none, never half the cards.
 */
import { useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { Check, ErrorAlert, Field, Modal, Status, formatTime, useAction } from '../ui.ts';
import { Confirm, Section, TableWrap } from './people-ui.ts';
import { cardNumberText, cardNumberValue, cardState, isoOfLocal, localInput, type Card, type Person } from './people-data.ts';
import { readPerson } from './people-reads.ts';

/** How a card is named to the operator: its number, and what is printed on it when that differs. */
function cardName(c: Card): string {
  const n = cardNumberText(c.EncodedCardNumber);
  return c.DisplayCardNumber && c.DisplayCardNumber !== n ? `${n} (${c.DisplayCardNumber})` : n;
}

/** A facility code as typed: a number when it is one, else the vendor's text; empty is none. */
function facilityValue(text: string): number | string | null {
  const t = text.trim();
  if (!t) return null;
  return /^\d+$/.test(t) && Number.isSafeInteger(Number(t)) ? Number(t) : t;
}

interface CardDialogProps {
  readonly card: Card | null;
  readonly onSave: (card: Card) => Promise<void>;
  readonly onRemove?: () => Promise<void>;
  readonly onClose: () => void;
}

function CardDialog(p: CardDialogProps) {
  const c = p.card;
  const [number, setNumber] = useState(cardNumberText(c?.EncodedCardNumber));
  const [facility, setFacility] = useState(c?.FacilityCode === null || c?.FacilityCode === undefined ? '' : String(c.FacilityCode));
  const [display, setDisplay] = useState(c?.DisplayCardNumber ?? '');
  const [activeOn, setActiveOn] = useState(localInput(c?.ActiveOn));
  const [expiresOn, setExpiresOn] = useState(localInput(c?.ExpiresOn));
  const [pin, setPin] = useState('');
  const [disabled, setDisabled] = useState(c?.IsDisabled === true);
  const [exempt, setExempt] = useState(c?.LockdownExempt === true);
  const { busy, error, setError, run } = useAction();

  const submit = (e: Event) => {
    e.preventDefault();
    const digits = number.trim();
    if (!/^\d+$/.test(digits)) return setError(new Error('The card number is digits only.'));
    if (pin && !/^\d{4,8}$/.test(pin)) return setError(new Error('A PIN is 4 to 8 digits.'));
    const from = isoOfLocal(activeOn);
    const until = isoOfLocal(expiresOn);
    if (from && until && from >= until) return setError(new Error('The card must become active before it expires.'));
    void run(() =>
      p.onSave({
        ...(c ?? {}),
        EncodedCardNumber: cardNumberValue(digits),
        FacilityCode: facilityValue(facility),
        DisplayCardNumber: display.trim() || null,
        ActiveOn: from,
        ExpiresOn: until,
        IsDisabled: disabled,
        LockdownExempt: exempt,
        ...(pin ? { PinCode: pin } : {}),
      }),
    );
  };

  return html`<${Modal} title=${c ? `Edit card ${cardName(c)}` : 'Add card'} onClose=${p.onClose}>
    <form onSubmit=${submit} class="card-form">
      <${Field} label="Card number" value=${number} required inputmode="numeric" autocomplete="off" onInput=${setNumber} />
      <${Field} label="Facility code" value=${facility} autocomplete="off" hint="Leave empty when the cards have none." onInput=${setFacility} />
      <${Field} label="Printed number" value=${display} autocomplete="off" hint="What is printed on the card, when it is not the number itself." onInput=${setDisplay} />
      <div class="grid-2">
        <${Field} label="Active from" type="datetime-local" value=${activeOn} onInput=${setActiveOn} />
        <${Field} label="Expires" type="datetime-local" value=${expiresOn} onInput=${setExpiresOn} />
      </div>
      <${Field}
        label="PIN"
        type="password"
        inputmode="numeric"
        autocomplete="new-password"
        value=${pin}
        hint=${c ? '4 to 8 digits, for readers that ask for one. Leave empty to keep the current PIN.' : '4 to 8 digits, for readers that ask for one. Optional.'}
        onInput=${setPin}
      />
      <${Check} label="Disabled" checked=${disabled} onChange=${setDisabled} />
      <${Check} label="Passes during a lockdown" checked=${exempt} onChange=${setExempt} />
      <${ErrorAlert} error=${error} />
      <div class="actions">
        <button type="submit" disabled=${busy}>Save card</button>
        ${p.onRemove ? html`<button type="button" class="danger" disabled=${busy} onClick=${() => void run(p.onRemove!)}>Remove card</button>` : null}
        <button type="button" class="secondary" onClick=${p.onClose}>Cancel</button>
      </div>
    </form>
  <//>`;
}

interface SectionProps {
  readonly person: Person;
  readonly reload: () => Promise<Person>;
  readonly canWrite: boolean;
}

export function CardsSection({ person, reload, canWrite }: SectionProps) {
  const cards = person.CardAssignments ?? [];
  const [editing, setEditing] = useState<Card | 'new' | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const cardsHref = `${person.Href}/cards`;

  const done = async (text: string) => {
    setEditing(null);
    await reload();
    setStatus(text);
  };

  const act = async (work: () => Promise<string>) => {
    setError(null);
    setStatus(null);
    try {
      await done(await work());
    } catch (err) {
      setError(err);
    }
  };

  const save = async (card: Card) => {
    setError(null);
    setStatus(null);
    if (editing === 'new') await api(cardsHref, { method: 'POST', body: card });
    else await api(`${cardsHref}/${encodeURIComponent(String(card.Key))}`, { method: 'PUT', body: card });
    await done(`Card ${cardName(card)} ${editing === 'new' ? 'added' : 'saved'}.`);
  };

  const toggle = (card: Card) =>
    act(async () => {
      const disable = card.IsDisabled !== true;
      await api(`${cardsHref}/${encodeURIComponent(String(card.Key))}`, { method: 'PUT', body: { ...card, IsDisabled: disable } });
      return `Card ${cardName(card)} ${disable ? 'disabled' : 'enabled'}.`;
    });

  const deactivateAll = () =>
    act(async () => {
      setConfirmAll(false);
      // Read again: the PUT carries the current version and every card, each disabled.
      const fresh = await readPerson(person.Href);
      const list = fresh.CardAssignments ?? [];
      await api(fresh.Href, { method: 'PUT', body: { ...fresh, CardAssignments: list.map((c) => ({ ...c, IsDisabled: true })) } });
      return `All ${list.length} card${list.length === 1 ? '' : 's'} deactivated.`;
    });

  const editable = editing !== null && editing !== 'new' ? editing : null;
  return html`<${Section}
    id="person-cards"
    title="Cards"
    actions=${canWrite
      ? html`<button type="button" onClick=${() => setEditing('new')}>Add card</button>
          <button type="button" class="danger" disabled=${!cards.some((c) => c.IsDisabled !== true)} onClick=${() => setConfirmAll(true)}>
            Deactivate all cards
          </button>`
      : null}
  >
    <${ErrorAlert} error=${error} />
    <${Status} text=${status} />
    ${cards.length === 0
      ? html`<p class="muted">No card.</p>`
      : html`<${TableWrap} label="Cards">
          <table>
            <caption>Cards of ${person.CommonName ?? 'this person'}</caption>
            <thead>
              <tr>
                <th scope="col">Card number</th>
                <th scope="col">Facility code</th>
                <th scope="col">Valid</th>
                <th scope="col">State</th>
                ${canWrite ? html`<th scope="col">Actions</th>` : null}
              </tr>
            </thead>
            <tbody>
              ${cards.map((c) => {
                const name = cardName(c);
                const state = cardState(c);
                return html`<tr key=${c.Key}>
                  <th scope="row">${name}</th>
                  <td>${c.FacilityCode ?? ''}</td>
                  <td>${c.ActiveOn ? `from ${formatTime(c.ActiveOn)}` : ''}${c.ActiveOn && c.ExpiresOn ? ' ' : ''}${c.ExpiresOn ? `until ${formatTime(c.ExpiresOn)}` : ''}${!c.ActiveOn && !c.ExpiresOn ? 'Always' : ''}</td>
                  <td><span class=${`card-state ${state === 'Active' ? 'ok' : 'off'}`}>${state}</span>${c.LockdownExempt ? html`<br /><small>Passes during a lockdown</small>` : null}</td>
                  ${canWrite
                    ? html`<td class="row-actions">
                        <button type="button" class="secondary" onClick=${() => setEditing(c)}>Edit<span class="visually-hidden"> card ${name}</span></button>
                        <button type="button" class="secondary" onClick=${() => void toggle(c)}>
                          ${c.IsDisabled === true ? 'Enable' : 'Disable'}<span class="visually-hidden"> card ${name}</span>
                        </button>
                      </td>`
                    : null}
                </tr>`;
              })}
            </tbody>
          </table>
        <//>`}
    ${editing !== null
      ? html`<${CardDialog}
          key=${editable?.Key ?? 'new'}
          card=${editable}
          onSave=${save}
          onRemove=${editable
            ? async () => {
                await api(`${cardsHref}/${encodeURIComponent(String(editable.Key))}`, { method: 'DELETE' });
                await done(`Card ${cardName(editable)} removed.`);
              }
            : undefined}
          onClose=${() => setEditing(null)}
        />`
      : null}
    ${confirmAll
      ? html`<${Confirm}
          title="Deactivate all cards?"
          text=${`Every card of ${person.CommonName ?? 'this person'} is disabled at once: no reader grants them until a card is enabled again.`}
          action="Deactivate all cards"
          onConfirm=${() => void deactivateAll()}
          onClose=${() => setConfirmAll(false)}
        />`
      : null}
  <//>`;
}
