/**
 * One event in full: every field of its `GET`, its event data decoded, the objects it relates as
 * console links, its acknowledgements and, for a card read's result ("Access Granted" / "Access
 * Denied"), "Why?": the decision's explanation (`Checks`). Used by Live events and Alarms as a
 * dialog (`/console/live/<eventKey>`, `/console/alarms/<eventKey>`); any page may show it.
 */
import { useState } from 'preact/hooks';
import { html } from './html.ts';
import { api } from './api.ts';
import { hrefOf } from './router.ts';
import { instanceKey } from './session.ts';
import { ErrorAlert, Modal, formatTime, useLoad } from './ui.ts';
import { decodeEventData, type PlainValue } from './event-data.ts';
import { eventTypeName } from './event-type-names.ts';
import { priorityText } from './event-priority.ts';
import type { LiveEvent } from './live.ts';
import './styles/live.css';

/** The built-in result types of a card read (docs/access.md). */
const ACCESS_GRANTED = '000000000000000000000022';
const ACCESS_DENIED = '000000000000000000000023';

interface ObjectLink {
  readonly Relation?: string | null;
  readonly LinkedObjectKey?: string | null;
  readonly CommonName?: string | null;
  readonly Href?: string | null;
}

interface Acknowledgement {
  readonly AcknowledgedBy?: string | null;
  readonly AcknowledgedOn?: string | null;
  readonly Comment?: string | null;
}

/** An event as its `GET` answers (EventMessageData). */
export type EventMessage = LiveEvent & {
  readonly OccurredOn?: string;
  readonly PublishedOn?: string;
  readonly InFolderKey?: string;
  readonly RequiresAcknowledgement?: boolean;
  readonly AlarmAcknowledgements?: readonly Acknowledgement[];
  readonly ObjectLinks?: readonly ObjectLink[];
  readonly EventDataBsonBase64?: string | null;
};

/** Whether an event is a card read's result, which has a decision to explain. */
function isAccessEvent(e: EventMessage): boolean {
  const key = typeof e.EventTypeKey === 'string' ? e.EventTypeKey.toLowerCase() : '';
  if (key === ACCESS_GRANTED || key === ACCESS_DENIED) return true;
  const m = e.EventTypeMoniker as { Namespace?: string; Nickname?: string } | null | undefined;
  return m?.Namespace === 'MercuryService' && (m.Nickname === 'access-granted' || m.Nickname === 'access-denied');
}

/** The console page of an object an event names, by its Href's collection (else its relation). */
function consoleHref(link: ObjectLink): string | undefined {
  const key = link.LinkedObjectKey ?? undefined;
  const collection = /\/api\/f\/[^/]+\/([^/?#]+)\//.exec(link.Href ?? '')?.[1]?.toLowerCase();
  switch (collection ?? link.Relation?.toLowerCase()) {
    case 'people':
    case 'person':
      return key ? hrefOf('people', key) : undefined;
    case 'readers':
    case 'reader':
    case 'doors':
    case 'door':
    case 'controllers':
    case 'controller':
    case 'peripherals':
      return hrefOf('doors');
    case 'accesslevels':
    case 'accesslevel':
      return key ? hrefOf('access-levels', key) : undefined;
    case 'schedules':
    case 'schedule':
      return key ? hrefOf('schedules', key) : undefined;
    case 'events':
    case 'command':
      return key ? hrefOf('live', key) : undefined;
    default:
      return undefined;
  }
}

/** A field's value: text for scalars, a nested list for a document, JSON for the rest. */
function Value({ value, name }: { readonly value: PlainValue | unknown; readonly name?: string }): ReturnType<typeof html> {
  if (value === null || value === undefined || value === '') return html`<span class="muted">none</span>`;
  if (typeof value === 'boolean') return html`${value ? 'Yes' : 'No'}`;
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) return html`<time datetime=${value}>${formatTime(value)}</time>`;
  if (typeof value !== 'object') return html`${String(value)}`;
  if (!Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    // A named object in the event data ({ Key, CommonName }): a link when the console has a page for it.
    if (typeof o.Key === 'string' && 'CommonName' in o && Object.keys(o).length <= 3) {
      const href = name ? consoleHref({ Relation: name, LinkedObjectKey: o.Key }) : undefined;
      const label = typeof o.CommonName === 'string' && o.CommonName ? o.CommonName : o.Key;
      return href ? html`<a href=${href}>${label}</a>` : html`${label}`;
    }
    return html`<dl class="detail nested">${Object.entries(o).map(([k, v]) => html`<dt>${k}</dt><dd><${Value} value=${v} name=${k} /></dd>`)}</dl>`;
  }
  if (value.length === 0) return html`<span class="muted">none</span>`;
  if (value.every((x) => x === null || typeof x !== 'object')) return html`${value.map(String).join(', ')}`;
  return html`<pre>${JSON.stringify(value, null, 2)}</pre>`;
}

/** The fields shown in their own sections, or derived, rather than in the field list. */
const OWN_SECTIONS = new Set(['EventDataBsonBase64', 'ObjectLinks', 'RelatedObjects', 'AlarmAcknowledgements', 'Links', '$type']);
/** The fields first, in an operator's order; the rest follow as the answer has them. */
const FIRST = ['MessageLong', 'MessageShort', 'Priority', 'OccurredOn', 'PublishedOn', 'RequiresAcknowledgement', 'EventTypeKey', 'EventTypeMoniker', 'AppKey', 'Key', 'InFolderKey', 'Href'];
const LABELS: Record<string, string> = {
  MessageLong: 'Message',
  MessageShort: 'Short message',
  OccurredOn: 'Occurred',
  PublishedOn: 'Published',
  RequiresAcknowledgement: 'Requires acknowledgement',
  EventTypeKey: 'Event type key',
  EventTypeMoniker: 'Event type moniker',
  AppKey: 'App key',
  InFolderKey: 'Folder key',
};

interface Check {
  readonly Step: string;
  readonly Passed: boolean;
  readonly Evaluated: boolean;
  readonly Found: string;
}

interface DecisionInfo {
  readonly Granted: boolean;
  readonly Reason: string;
  readonly Message?: string;
  readonly LocalTime?: string;
  readonly TimeZone?: string;
  readonly Checks: readonly Check[];
}

/**
 * "Why?" of a card read's result: the decision's `Checks`. The event keeps the outcome (`Reason`)
 * but not the checks, so the decision is asked again (`POST accessdecisions`, not recorded) for
 * the same reader, card and instant; the people, cards and levels are today's.
 */
function DecisionExplanation({ event, data }: { readonly event: EventMessage; readonly data: Record<string, PlainValue> }) {
  const [state, setState] = useState<{ busy: boolean; error: unknown; decision: DecisionInfo | null }>({ busy: false, error: null, decision: null });
  const reader = data.Reader as { Key?: string } | null | undefined;
  const number = data.EncodedCardNumber;
  if (!reader?.Key || number === null || number === undefined) return null;
  const ask = async () => {
    setState({ busy: true, error: null, decision: null });
    try {
      const at = typeof data.MessageTimeUTC === 'string' ? data.MessageTimeUTC : event.OccurredOn;
      const decision = await api<DecisionInfo>(`/api/f/${event.InFolderKey ?? instanceKey.value}/accessdecisions`, {
        method: 'POST',
        body: {
          ReaderKey: reader.Key,
          EncodedCardNumber: String(number),
          ...(data.FacilityCode === null || data.FacilityCode === undefined ? {} : { FacilityCode: data.FacilityCode }),
          ...(typeof at === 'string' ? { At: at } : {}),
        },
      });
      setState({ busy: false, error: null, decision });
    } catch (error) {
      setState({ busy: false, error, decision: null });
    }
  };
  const d = state.decision;
  return html`<section class="why" aria-labelledby="why-heading">
    <h3 id="why-heading">Access decision</h3>
    <button type="button" class="secondary" onClick=${ask} disabled=${state.busy} aria-describedby="why-note">Why?</button>
    <p id="why-note" class="muted">
      The decision is made again for this card at this reader at the event's time, against today's people, cards and access levels.
    </p>
    <${ErrorAlert} error=${state.error} />
    ${d
      ? html`<div role="status">
          <p><strong>${d.Granted ? 'Granted' : 'Denied'}: ${d.Reason}</strong>${d.Message ? html` — ${d.Message}` : null}</p>
          ${typeof data.Reason === 'string' && data.Reason !== d.Reason
            ? html`<p class="error-text">When the card was read the reason was ${data.Reason}: something changed since.</p>`
            : null}
        </div>
        <div class="table-wrap">
          <table>
            <caption>Decision checks</caption>
            <thead><tr><th scope="col">Step</th><th scope="col">Result</th><th scope="col">What was found</th></tr></thead>
            <tbody>
              ${d.Checks.map(
                (c) => html`<tr class=${c.Evaluated && !c.Passed ? 'p-high' : undefined}>
                  <th scope="row">${c.Step}</th>
                  <td>${!c.Evaluated ? 'Not evaluated' : c.Passed ? 'Passed' : 'Failed'}</td>
                  <td>${c.Found}</td>
                </tr>`,
              )}
            </tbody>
          </table>
        </div>`
      : null}
  </section>`;
}

/** The event's sections, from its `GET` answer. */
function EventFields({ event }: { readonly event: EventMessage }) {
  const data = decodeEventData(event.EventDataBsonBase64);
  const related = (event.RelatedObjects ?? event.ObjectLinks ?? []) as readonly ObjectLink[];
  const acks = event.AlarmAcknowledgements ?? [];
  const fields = [...FIRST.filter((k) => k in event), ...Object.keys(event).filter((k) => !FIRST.includes(k) && !OWN_SECTIONS.has(k))];
  return html`<div class="event-detail">
    <dl class="detail">
      <dt>Type</dt>
      <dd>${eventTypeName(event)}</dd>
      ${fields.map(
        (k) => html`<dt>${LABELS[k] ?? k}</dt><dd>${k === 'Priority' ? priorityText(event.Priority) : html`<${Value} value=${event[k]} />`}</dd>`,
      )}
    </dl>
    <h3>Event data</h3>
    ${data instanceof Error
      ? html`<p role="alert" class="error">${data.message}</p>`
      : data === null
        ? html`<p class="muted">This event has no data.</p>`
        : html`<${Value} value=${data} />`}
    <h3>Related objects</h3>
    ${related.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<ul class="related">
          ${related.map((l) => {
            const href = consoleHref(l);
            const label = l.CommonName || l.LinkedObjectKey || l.Href || '';
            return html`<li>${l.Relation ?? 'Object'}: ${href ? html`<a href=${href}>${label}</a>` : label}</li>`;
          })}
        </ul>`}
    ${event.RequiresAcknowledgement || acks.length
      ? html`<h3>Acknowledgements</h3>
          ${acks.length === 0
            ? html`<p>Not acknowledged yet.</p>`
            : html`<ul class="acks">
                ${acks.map(
                  (a) => html`<li>${a.AcknowledgedBy ?? 'Someone'}, <time datetime=${a.AcknowledgedOn ?? ''}>${formatTime(a.AcknowledgedOn)}</time>${a.Comment ? html`: “${a.Comment}”` : null}</li>`,
                )}
              </ul>`}`
      : null}
    ${isAccessEvent(event) && data && !(data instanceof Error) ? html`<${DecisionExplanation} event=${event} data=${data} />` : null}
  </div>`;
}

/** An event read by its key from the current instance, in full. */
function EventDetail({ eventKey }: { readonly eventKey: string }) {
  const instance = instanceKey.value;
  const loaded = useLoad(() => api<EventMessage>(`/api/f/${instance}/events/${encodeURIComponent(eventKey)}`), [instance, eventKey]);
  if (loaded.error) return html`<${ErrorAlert} error=${loaded.error} />`;
  if (!loaded.data) return html`<p aria-busy="true">Loading the event…</p>`;
  return html`<${EventFields} event=${loaded.data} />`;
}

/** The event detail as a dialog named "Event detail"; `onClose` follows Escape and "Close". */
export function EventDetailDialog({ eventKey, onClose }: { readonly eventKey: string; readonly onClose: () => void }) {
  return html`<${Modal} title="Event detail" onClose=${onClose}>
    <${EventDetail} eventKey=${eventKey} />
    <div class="actions dialog-actions"><button type="button" class="secondary" onClick=${onClose}>Close</button></div>
  </${Modal}>`;
}
