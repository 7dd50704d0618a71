/**
 * Alarms: the events that require acknowledgement and have none (`requiresAck=true` of the events
 * list), by priority (highest first) then time (newest first), each with "Acknowledge" (a dialog
 * with an optional comment: `POST events/<key>/acknowledgements`); the acknowledged ones below,
 * with who and when. New alarms arrive live; an event opens its detail at `/console/alarms/<key>`.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { onLiveEvent } from '../live.ts';
import { here, hrefOf, navigate } from '../router.ts';
import { instanceKey } from '../session.ts';
import { ErrorAlert, Modal, PageHeader, Status, formatTime, useAction } from '../ui.ts';
import { alarmAcknowledged, isOpenAlarm, listEvents, listOpenAlarms, unacknowledgedAlarms, type Listing as AlarmListing } from '../alarm-state.ts';
import { EventDetailDialog, type EventMessage } from '../event-detail.ts';
import { eventTypeName } from '../event-type-names.ts';
import { priorityClass, priorityText } from '../event-priority.ts';
import '../styles/live.css';

/** Acknowledged alarms listed: the newest. */
const ACKNOWLEDGED_SHOWN = 50;
/** Events that required acknowledgement and have one (the events list's `query`). */
const ACKNOWLEDGED_QUERY = JSON.stringify({ RequiresAcknowledgement: true, 'AlarmAcknowledgements.0': { $exists: true } });

type Listing = AlarmListing<EventMessage>;

const byPriorityThenTime = (a: EventMessage, b: EventMessage) =>
  (b.Priority ?? 0) - (a.Priority ?? 0) || String(b.OccurredOn ?? '').localeCompare(String(a.OccurredOn ?? '')) || String(b.Key).localeCompare(String(a.Key));

const lastAck = (e: EventMessage) => {
  const acks = e.AlarmAcknowledgements ?? [];
  return acks[acks.length - 1];
};

function AcknowledgeDialog({ alarm, onDone, onCancel }: { readonly alarm: EventMessage; readonly onDone: (e: EventMessage) => void; readonly onCancel: () => void }) {
  const [comment, setComment] = useState('');
  const { busy, error, run } = useAction();
  const submit = (ev: Event) => {
    ev.preventDefault();
    return run(async () => {
      const done = await api<EventMessage>(`/api/f/${instanceKey.value}/events/${encodeURIComponent(String(alarm.Key))}/acknowledgements`, {
        method: 'POST',
        body: comment.trim() ? { Comment: comment.trim() } : {},
      });
      onDone(done);
    });
  };
  return html`<${Modal} title="Acknowledge alarm" onClose=${onCancel}>
    <p>${eventTypeName(alarm)}: ${alarm.MessageLong || alarm.MessageShort} <span class="muted">(${formatTime(alarm.OccurredOn)})</span></p>
    <form onSubmit=${submit}>
      <div class="field">
        <label for="ack-comment">Comment</label>
        <textarea id="ack-comment" rows="3" maxlength="4096" autofocus aria-describedby="ack-comment-hint" value=${comment} onInput=${(e: Event) => setComment((e.currentTarget as HTMLTextAreaElement).value)}></textarea>
        <small id="ack-comment-hint">Optional: what was done, for whoever reads the alarm later.</small>
      </div>
      <${ErrorAlert} error=${error} />
      <div class="actions dialog-actions">
        <button type="submit" disabled=${busy}>Acknowledge</button>
        <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
      </div>
    </form>
  </${Modal}>`;
}

export function AlarmsPage({ pageKey }: { readonly pageKey: string | undefined }) {
  const instance = instanceKey.value;
  const [open, setOpen] = useState<Listing | null>(null);
  const [acked, setAcked] = useState<Listing | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [acking, setAcking] = useState<EventMessage | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const caption = useRef<HTMLTableCaptionElement>(null);

  useEffect(() => {
    let live = true;
    setOpen(null);
    setAcked(null);
    setError(null);
    // Alarms arriving while the list loads are added once it is in.
    const arrived: EventMessage[] = [];
    const add = (e: EventMessage) =>
      setOpen((o) => (o === null ? (arrived.push(e), o) : o.events.some((x) => x.Key === e.Key) ? o : { ...o, events: [...o.events, e] }));
    const stop = onLiveEvent((e) => {
      if (live && isOpenAlarm(e)) add(e as EventMessage);
    });
    listOpenAlarms<EventMessage>(instance).then(
      (l) => {
        if (!live) return;
        const keys = new Set(l.events.map((e) => e.Key));
        setOpen({ ...l, events: [...l.events, ...arrived.filter((e) => !keys.has(e.Key))] });
      },
      (err: unknown) => live && setError(err),
    );
    listEvents<EventMessage>(instance, { query: ACKNOWLEDGED_QUERY }, ACKNOWLEDGED_SHOWN).then(
      (l) => live && setAcked(l),
      (err: unknown) => live && setError(err),
    );
    return () => {
      live = false;
      stop();
    };
  }, [instance]);

  const done = (e: EventMessage) => {
    const rows = open ? [...open.events].sort(byPriorityThenTime) : [];
    const next = rows[rows.findIndex((r) => r.Key === e.Key) + 1]?.Key;
    setAcking(null);
    setOpen((o) => (o ? { ...o, events: o.events.filter((x) => x.Key !== e.Key) } : o));
    setAcked((a) => ({ ...(a ?? {}), events: [e, ...(a?.events ?? []).filter((x) => x.Key !== e.Key)].slice(0, ACKNOWLEDGED_SHOWN) }));
    setStatus(`Acknowledged: ${eventTypeName(e)}, ${formatTime(e.OccurredOn)}.`);
    alarmAcknowledged(String(e.Key));
    // Focus goes on to the next alarm's button (the one pressed is gone), else to the table.
    setTimeout(() => {
      const button = next ? document.querySelector<HTMLButtonElement>(`[data-alarm="${CSS.escape(next)}"]`) : null;
      (button ?? caption.current)?.focus();
    }, 0);
  };

  const rows = open ? [...open.events].sort(byPriorityThenTime) : [];
  const count = unacknowledgedAlarms.value;
  return html`<${PageHeader} title="Alarms" />
    <${ErrorAlert} error=${error} />
    <${Status} text=${status} />
    <p class="muted">
      ${count === null ? 'Counting the unacknowledged alarms…' : `${count} unacknowledged ${count === 1 ? 'alarm' : 'alarms'}.`}
      ${open?.sinceDays ? ` Only the last ${open.sinceDays} days are listed: the instance has too many events to read them all at once.` : ''}
    </p>
    <div class="table-wrap" tabindex="0" role="region" aria-labelledby="open-alarms-caption">
      <table class="alarms-table">
        <caption id="open-alarms-caption" ref=${caption} tabindex="-1">Unacknowledged alarms</caption>
        <thead>
          <tr><th scope="col">Priority</th><th scope="col">Occurred</th><th scope="col">Type</th><th scope="col">Message</th><th scope="col">Action</th></tr>
        </thead>
        <tbody>
          ${open === null
            ? html`<tr><td colspan="5" aria-busy="true">Loading…</td></tr>`
            : rows.length === 0
              ? html`<tr><td colspan="5" class="muted">No alarm waits for acknowledgement.</td></tr>`
              : rows.map(
                  (e) => html`<tr key=${e.Key} class=${priorityClass(e.Priority)}>
                    <td>${priorityText(e.Priority)}</td>
                    <td><time datetime=${e.OccurredOn}>${formatTime(e.OccurredOn)}</time></td>
                    <td>${eventTypeName(e)}</td>
                    <td><a href=${hrefOf('alarms', e.Key)}>${e.MessageLong || e.MessageShort || '(no message)'}</a></td>
                    <td><button type="button" data-alarm=${e.Key} onClick=${() => setAcking(e)}>Acknowledge</button></td>
                  </tr>`,
                )}
        </tbody>
      </table>
    </div>
    <div class="table-wrap" tabindex="0" role="region" aria-labelledby="acknowledged-alarms-caption">
      <table class="alarms-table">
        <caption id="acknowledged-alarms-caption">Acknowledged alarms</caption>
        <thead>
          <tr>
            <th scope="col">Priority</th><th scope="col">Occurred</th><th scope="col">Type</th><th scope="col">Message</th>
            <th scope="col">Acknowledged by</th><th scope="col">Acknowledged</th><th scope="col">Comment</th>
          </tr>
        </thead>
        <tbody>
          ${acked === null
            ? html`<tr><td colspan="7" aria-busy="true">Loading…</td></tr>`
            : acked.events.length === 0
              ? html`<tr><td colspan="7" class="muted">No acknowledged alarm${acked.sinceDays ? ` in the last ${acked.sinceDays} days` : ''}.</td></tr>`
              : acked.events.map((e) => {
                  const a = lastAck(e);
                  return html`<tr key=${e.Key}>
                    <td>${priorityText(e.Priority)}</td>
                    <td><time datetime=${e.OccurredOn}>${formatTime(e.OccurredOn)}</time></td>
                    <td>${eventTypeName(e)}</td>
                    <td><a href=${hrefOf('alarms', e.Key)}>${e.MessageLong || e.MessageShort || '(no message)'}</a></td>
                    <td>${a?.AcknowledgedBy ?? ''}</td>
                    <td><time datetime=${a?.AcknowledgedOn ?? ''}>${formatTime(a?.AcknowledgedOn)}</time></td>
                    <td>${a?.Comment ?? ''}</td>
                  </tr>`;
                })}
        </tbody>
      </table>
    </div>
    ${acking ? html`<${AcknowledgeDialog} alarm=${acking} onDone=${done} onCancel=${() => setAcking(null)} />` : null}
    ${pageKey ? html`<${EventDetailDialog} eventKey=${pageKey} onClose=${() => here.value.key && navigate(hrefOf('alarms'))} />` : null}`;
}
