/**
 * Administration › Webhooks: the instance's subscriptions (docs/webhooks.md), a new one (its
 * signing secret shown once, as the API shows it once), a test delivery now, and a subscription's
 * delivery attempts, newest first.
 */
import { useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { instanceKey } from '../session.ts';
import { Check, ErrorAlert, Field, Modal, Select, Status, formatTime, useLoad, useAction } from '../ui.ts';
import { eventTypeChoices } from '../event-type-names.ts';

interface Webhook {
  readonly Key: string;
  readonly Href: string;
  readonly CommonName?: string | null;
  readonly Url: string;
  readonly Enabled?: boolean;
  readonly DisabledReason?: string | null;
  readonly LastDeliveryOn?: string | null;
  readonly LastFailureOn?: string | null;
  readonly MinimumPriority?: number | null;
  readonly EventTypeKeys?: readonly string[] | null;
  readonly Secret?: string;
}

interface Delivery {
  readonly Key: string;
  readonly EventKey?: string | null;
  readonly Attempt?: number;
  readonly StatusCode?: number | null;
  readonly Error?: string | null;
  readonly DurationMs?: number;
  readonly AttemptedOn?: string;
  readonly NextAttemptOn?: string | null;
  readonly DeadLettered?: boolean;
}

const DELIVERIES_PAGE = 20;

const nameOf = (w: Webhook) => w.CommonName || w.Url;

function NewWebhookDialog({ instance, onClose, onCreated }: { readonly instance: string; readonly onClose: () => void; readonly onCreated: (w: Webhook) => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [priority, setPriority] = useState('');
  const [type, setType] = useState('');
  const [audit, setAudit] = useState(true);
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      const minimum = Number.parseInt(priority, 10);
      const created = await api<Webhook>(`/api/f/${instance}/webhooks`, {
        method: 'POST',
        body: {
          CommonName: name,
          Url: url,
          EventTypeKeys: type ? [type] : [],
          ...(Number.isFinite(minimum) ? { MinimumPriority: minimum } : {}),
          IncludeAuditEvents: audit,
        },
      });
      onCreated(created);
    });
  };
  return html`<${Modal} title="New webhook" onClose=${onClose}>
    <form onSubmit=${(e: Event) => void submit(e)}>
      <${Field} label="Name" value=${name} onInput=${setName} required />
      <${Field} label="URL" type="url" value=${url} onInput=${setUrl} required hint="https (http only to this computer on a local Gatehouse). Each matching event is POSTed to it, signed." />
      <${Select}
        label="Event type"
        value=${type}
        onChange=${setType}
        options=${[{ value: '', label: 'Every type' }, ...eventTypeChoices.value.map((t) => ({ value: t.key, label: t.name }))]}
      />
      <${Field} label="Minimum priority" type="number" inputmode="numeric" value=${priority} onInput=${setPriority} hint="Only events of this priority or higher; empty for all." />
      <${Check} label="Include object changes (the audit trail)" checked=${audit} onChange=${setAudit} />
      <${ErrorAlert} error=${error} />
      <div class="actions">
        <button type="submit" disabled=${busy}>Create webhook</button>
        <button type="button" class="secondary" onClick=${onClose}>Cancel</button>
      </div>
    </form>
  <//>`;
}

function Deliveries({ hook }: { readonly hook: Webhook }) {
  const [page, setPage] = useState(0);
  const list = useLoad(() => api<Delivery[]>(`${hook.Href}/deliveries`, { query: { page, pageSize: DELIVERIES_PAGE } }), [hook.Href, page]);
  const rows = list.data ?? [];
  return html`<div class="deliveries">
    <div class="actions">
      <button type="button" class="secondary" onClick=${list.reload}>Refresh deliveries</button>
    </div>
    <${ErrorAlert} error=${list.error} />
    <div class="table-wrap" tabindex="0" role="region" aria-label=${`Deliveries of ${nameOf(hook)}, scrolls sideways on a narrow screen`}>
      <table aria-busy=${list.loading ? 'true' : 'false'}>
        <caption>${`Deliveries of ${nameOf(hook)}`}</caption>
        <thead>
          <tr>
            <th scope="col">Attempted</th>
            <th scope="col">Event</th>
            <th scope="col">Attempt</th>
            <th scope="col">Result</th>
            <th scope="col">Duration</th>
            <th scope="col">Next attempt</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (d) => html`<tr key=${d.Key}>
              <td>${formatTime(d.AttemptedOn)}</td>
              <td>${d.EventKey ?? 'Test delivery'}</td>
              <td>${d.Attempt ?? ''}</td>
              <td>${d.StatusCode != null ? `HTTP ${d.StatusCode}` : (d.Error ?? '')}${d.DeadLettered ? ' (given up)' : ''}</td>
              <td>${d.DurationMs != null ? `${d.DurationMs} ms` : ''}</td>
              <td>${formatTime(d.NextAttemptOn)}</td>
            </tr>`,
          )}
          ${!list.loading && rows.length === 0 ? html`<tr><td colspan="6">No delivery${page > 0 ? ' on this page' : ' yet'}.</td></tr>` : null}
        </tbody>
      </table>
    </div>
    <nav class="pager" aria-label=${`Pages of deliveries of ${nameOf(hook)}`}>
      <button type="button" class="secondary" disabled=${page === 0} onClick=${() => setPage(page - 1)}>Previous page</button>
      <span>Page ${page + 1}</span>
      <button type="button" class="secondary" disabled=${rows.length < DELIVERIES_PAGE} onClick=${() => setPage(page + 1)}>Next page</button>
    </nav>
  </div>`;
}

export function WebhooksSection() {
  const instance = instanceKey.value;
  const hooks = useLoad(() => api<Webhook[]>(`/api/f/${instance}/webhooks`, { query: { pageSize: 1000 } }), [instance]);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ name: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const test = async (w: Webhook) => {
    setError(null);
    setStatus(`Sending a test delivery to ${nameOf(w)}…`);
    try {
      const r = await api<{ StatusCode?: number; Error?: string; DurationMs?: number }>(`${w.Href}/test`, { method: 'POST' });
      setStatus(
        r.StatusCode != null
          ? `Test delivery to ${nameOf(w)}: HTTP ${r.StatusCode} in ${r.DurationMs ?? '?'} ms.`
          : `Test delivery to ${nameOf(w)} failed: ${r.Error ?? 'no answer'}`,
      );
      setOpen(w.Key);
      setRound((n) => n + 1);
      hooks.reload();
    } catch (err) {
      setStatus(null);
      setError(err);
    }
  };

  const list = hooks.data ?? [];
  const shown = list.find((w) => w.Key === open);
  return html`<section class="panel" aria-labelledby="admin-webhooks">
    <div class="section-header">
      <h2 id="admin-webhooks">Webhooks</h2>
      <button type="button" onClick=${() => setCreating(true)}>New webhook</button>
    </div>
    ${secret
      ? html`<div class="secret" role="region" aria-label="Signing secret">
          <p>The signing secret of <strong>${secret.name}</strong>, shown this once: give it to the receiver, which verifies each delivery with it.</p>
          <p><code>${secret.secret}</code></p>
          <button type="button" class="secondary" onClick=${() => setSecret(null)}>I have kept the secret</button>
        </div>`
      : null}
    <${Status} text=${status} />
    <${ErrorAlert} error=${error ?? hooks.error} />
    <div class="table-wrap" tabindex="0" role="region" aria-label="Webhooks, scrolls sideways on a narrow screen">
      <table aria-busy=${hooks.loading ? 'true' : 'false'}>
        <caption>Webhooks</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">URL</th>
            <th scope="col">State</th>
            <th scope="col">Last delivery</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${list.map(
            (w) => html`<tr key=${w.Key} data-webhook=${nameOf(w)}>
              <th scope="row">${nameOf(w)}</th>
              <td class="url">${w.Url}</td>
              <td>${w.Enabled === false ? `Disabled${w.DisabledReason ? `: ${w.DisabledReason}` : ''}` : 'Enabled'}</td>
              <td>${formatTime(w.LastDeliveryOn)}${w.LastFailureOn ? html`<br /><small>Last failure ${formatTime(w.LastFailureOn)}</small>` : null}</td>
              <td class="row-actions">
                <button type="button" class="secondary" onClick=${() => void test(w)}>Test</button>
                <button type="button" class="secondary" aria-expanded=${open === w.Key ? 'true' : 'false'} onClick=${() => setOpen(open === w.Key ? null : w.Key)}>
                  Deliveries
                </button>
              </td>
            </tr>`,
          )}
          ${!hooks.loading && list.length === 0 ? html`<tr><td colspan="5">No webhook.</td></tr>` : null}
        </tbody>
      </table>
    </div>
    ${shown ? html`<${Deliveries} key=${`${shown.Key}-${round}`} hook=${shown} />` : null}
    ${creating
      ? html`<${NewWebhookDialog}
          instance=${instance}
          onClose=${() => setCreating(false)}
          onCreated=${(w: Webhook) => {
            setCreating(false);
            if (w.Secret) setSecret({ name: nameOf(w), secret: w.Secret });
            setStatus(`${nameOf(w)} was created.`);
            hooks.reload();
          }}
        />`
      : null}
  </section>`;
}
