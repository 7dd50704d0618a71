/**
 * Events: the events list of the instance (or one of its folders) with the spec's filters — a date
 * range, a minimum priority, awaiting acknowledgement, an event type — the API's paging, and
 * "Export CSV" of everything the filters select. The filters live in the URL's query, so a reload,
 * the back button and a copied link show the same list.
 */
import '../styles/events.css';
import { useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api, messageOf } from '../api.ts';
import { here, hrefOf, navigate } from '../router.ts';
import { instanceKey, currentInstance, session } from '../session.ts';
import { Check, ErrorAlert, Field, PageHeader, Select, Status, formatTime, useLoad } from '../ui.ts';
import { eventsCsv, type EventRow } from './events-csv.ts';
import { foldersOf, type FolderName } from './events-folders.ts';
import { eventTypeChoices, eventTypeName } from '../event-type-names.ts';
import { priorityClass } from '../event-priority.ts';

/** An event as the events list answers it (EventMessageData; the fields shown). */
interface EventMessage {
  readonly Key: string;
  readonly OccurredOn?: string;
  readonly Priority?: number;
  readonly EventTypeKey?: string;
  readonly EventTypeMoniker?: { readonly Nickname?: string } | null;
  readonly MessageLong?: string | null;
  readonly MessageShort?: string | null;
  readonly RelatedObjects?: ReadonlyArray<{ readonly CommonName?: string | null; readonly Relation?: string | null; readonly LinkedObjectKey?: string }>;
  readonly RequiresAcknowledgement?: boolean;
  readonly AlarmAcknowledgements?: ReadonlyArray<{ readonly AcknowledgedBy?: string; readonly AcknowledgedOn?: string; readonly Comment?: string }>;
  readonly InFolderKey?: string;
}

/** The filters as the URL keeps them (every value a string; '' is "not set"). */
interface Filters {
  readonly from: string;
  readonly to: string;
  readonly priority: string;
  readonly ack: boolean;
  readonly type: string;
  readonly folder: string;
  readonly children: boolean;
  readonly size: string;
}

const PAGE_SIZES = ['20', '50', '100'];
/** The most rows an export holds: beyond it the file says so and the operator narrows the filters. */
const EXPORT_CAP = 10_000;
/** The export reads pages of the API's largest size. */
const EXPORT_PAGE = 1000;

function filtersOf(q: URLSearchParams): Filters {
  const size = q.get('size') ?? '';
  return {
    from: q.get('from') ?? '',
    to: q.get('to') ?? '',
    priority: q.get('priority') ?? '',
    ack: q.get('ack') === '1',
    type: q.get('type') ?? '',
    folder: q.get('folder') ?? '',
    children: q.get('children') === '1',
    size: PAGE_SIZES.includes(size) ? size : PAGE_SIZES[0]!,
  };
}

function queryOf(f: Filters, page = 0): Record<string, string | undefined> {
  return {
    from: f.from,
    to: f.to,
    priority: f.priority,
    ack: f.ack ? '1' : undefined,
    type: f.type,
    folder: f.folder,
    children: f.children ? '1' : undefined,
    size: f.size === PAGE_SIZES[0] ? undefined : f.size,
    page: page > 0 ? String(page + 1) : undefined,
  };
}

/** Midnight starting a `yyyy-mm-dd` day in the operator's own time zone, as an instant. */
function startOfDay(day: string, plusDays = 0): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + plusDays);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** The events list's query parameters for the filters: the "to" day is included whole. */
function apiQuery(f: Filters): Record<string, string | number | boolean | undefined> {
  const priority = Number.parseInt(f.priority, 10);
  return {
    includeSubFolders: true,
    spanScope: f.children || undefined,
    startingOn: startOfDay(f.from),
    endingOn: startOfDay(f.to, 1),
    priorityThreshold: Number.isFinite(priority) && priority > 0 ? priority : undefined,
    requiresAck: f.ack || undefined,
    query: f.type ? JSON.stringify({ EventTypeKey: f.type }) : undefined,
  };
}

const eventsPath = (f: Filters) => `/api/f/${f.folder || instanceKey.value}/events`;

const relatedText = (e: EventMessage) =>
  (e.RelatedObjects ?? [])
    .map((o) => (o.Relation ? `${o.Relation}: ${o.CommonName || o.LinkedObjectKey || ''}` : o.CommonName || o.LinkedObjectKey || ''))
    .filter(Boolean)
    .join('; ');

const acknowledgedText = (e: EventMessage) =>
  (e.AlarmAcknowledgements ?? []).map((a) => [a.AcknowledgedBy, a.AcknowledgedOn].filter(Boolean).join(' ')).join('; ');

function rowOf(e: EventMessage, folders: ReadonlyMap<string, string>): EventRow {
  return {
    occurredOn: e.OccurredOn ?? '',
    priority: e.Priority,
    type: eventTypeName(e),
    message: e.MessageLong || e.MessageShort || '',
    related: relatedText(e),
    requiresAcknowledgement: e.RequiresAcknowledgement === true,
    acknowledged: acknowledgedText(e),
    folder: (e.InFolderKey && folders.get(e.InFolderKey)) || e.InFolderKey || '',
    key: e.Key,
  };
}

function download(text: string, name: string): void {
  // A byte-order mark: spreadsheet programs then read the file as UTF-8.
  const url = URL.createObjectURL(new Blob(['\uFEFF', text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function FilterForm({ filters, folders }: { readonly filters: Filters; readonly folders: readonly FolderName[] | undefined }) {
  const [draft, setDraft] = useState(filters);
  const set = (patch: Partial<Filters>) => setDraft((d) => ({ ...d, ...patch }));
  const instanceName = currentInstance.value?.name ?? session.value?.instanceName ?? '';
  return html`<form
    class="toolbar events-filters"
    aria-label="Event filters"
    onSubmit=${(e: Event) => {
      e.preventDefault();
      navigate(hrefOf('events', undefined, queryOf(draft)));
    }}
  >
    <${Field} label="From" type="date" value=${draft.from} onInput=${(v: string) => set({ from: v })} />
    <${Field} label="To" type="date" value=${draft.to} onInput=${(v: string) => set({ to: v })} />
    <${Field} label="Minimum priority" type="number" inputmode="numeric" value=${draft.priority} onInput=${(v: string) => set({ priority: v })} />
    <${Select}
      label="Event type"
      value=${draft.type}
      onChange=${(v: string) => set({ type: v })}
      options=${[{ value: '', label: 'Any type' }, ...eventTypeChoices.value.map((t) => ({ value: t.key, label: t.name }))]}
    />
    <${Select}
      label="Folder"
      value=${draft.folder}
      onChange=${(v: string) => set({ folder: v })}
      options=${[{ value: '', label: `${instanceName} (every folder)` }, ...(folders ?? []).map((f) => ({ value: f.key, label: f.name }))]}
    />
    <${Select} label="Rows per page" value=${draft.size} onChange=${(v: string) => set({ size: v })} options=${PAGE_SIZES.map((s) => ({ value: s, label: s }))} />
    <div class="events-checks">
      <${Check} label="Awaiting acknowledgement only" checked=${draft.ack} onChange=${(v: boolean) => set({ ack: v })} />
      <${Check} label="Include child instances" checked=${draft.children} onChange=${(v: boolean) => set({ children: v })} />
    </div>
    <div class="actions">
      <button type="submit">Apply filters</button>
      <a class="button secondary" href=${hrefOf('events')}>Clear filters</a>
    </div>
  </form>`;
}

export function EventsPage(_p: { readonly pageKey: string | undefined }) {
  const query = here.value.query;
  const filters = filtersOf(query);
  const pageNumber = Math.max(1, Number.parseInt(query.get('page') ?? '1', 10) || 1);
  const page = pageNumber - 1;
  const pageSize = Number(filters.size);
  const instance = instanceKey.value;
  const signature = JSON.stringify(queryOf(filters));

  const folders = useLoad(() => foldersOf(instance), [instance]);
  const list = useLoad(() => api<EventMessage[]>(eventsPath(filters), { query: { ...apiQuery(filters), page, pageSize } }), [instance, signature, page]);

  const [exporting, setExporting] = useState(false);
  const [exportError, setExportError] = useState<unknown>(null);
  const [exportStatus, setExportStatus] = useState<string | null>(null);

  const folderMap = new Map((folders.data ?? []).map((f) => [f.key, f.name]));
  const events = list.data ?? [];

  const exportCsv = async () => {
    setExporting(true);
    setExportError(null);
    setExportStatus('Exporting…');
    try {
      const rows: EventRow[] = [];
      let capped = false;
      for (let p = 0; ; p++) {
        const batch = await api<EventMessage[]>(eventsPath(filters), { query: { ...apiQuery(filters), page: p, pageSize: EXPORT_PAGE } });
        for (const e of batch) rows.push(rowOf(e, folderMap));
        if (rows.length > EXPORT_CAP) {
          capped = true;
          rows.length = EXPORT_CAP;
          break;
        }
        if (batch.length < EXPORT_PAGE) break;
      }
      const stamp = new Date().toISOString().slice(0, 19).replace(/:/g, '-');
      download(eventsCsv(rows), `events-${stamp}${capped ? `-first-${EXPORT_CAP}` : ''}.csv`);
      setExportStatus(
        capped
          ? `Exported the newest ${EXPORT_CAP.toLocaleString()} events only: more match. Narrow the dates to export the rest.`
          : `Exported ${rows.length.toLocaleString()} ${rows.length === 1 ? 'event' : 'events'}.`,
      );
    } catch (err) {
      setExportError(err);
      setExportStatus(null);
    } finally {
      setExporting(false);
    }
  };

  // The filter form is keyed by the URL's filters: after the back button or a link it shows what the URL says.
  const goTo = (n: number) => navigate(hrefOf('events', undefined, queryOf(filters, n)));

  return html`<section class="events-page">
    <${PageHeader} title="Events">
      <button type="button" onClick=${() => void exportCsv()} disabled=${exporting} aria-describedby="events-export-note">Export CSV</button>
    <//>
    <p id="events-export-note" class="muted">Export CSV saves every event the filters select (up to ${EXPORT_CAP.toLocaleString()}), not only this page; times in UTC.</p>
    <${Status} text=${exportStatus} />
    <${ErrorAlert} error=${exportError} />
    <${FilterForm} key=${signature} filters=${filters} folders=${folders.data} />
    <${ErrorAlert} error=${folders.error ? new Error(`The folders could not be read: ${messageOf(folders.error)}`) : null} />
    <${ErrorAlert} error=${list.error} />
    <div class="table-wrap" tabindex="0" role="region" aria-label="Events, scrolls sideways on a narrow screen">
      <table aria-busy=${list.loading ? 'true' : 'false'}>
        <caption>Events</caption>
        <thead>
          <tr>
            <th scope="col">Occurred</th>
            <th scope="col">Priority</th>
            <th scope="col">Type</th>
            <th scope="col">Message</th>
            <th scope="col">Related objects</th>
            <th scope="col">Acknowledgement</th>
          </tr>
        </thead>
        <tbody>
          ${events.map((e) => {
            const r = rowOf(e, folderMap);
            return html`<tr key=${e.Key} class=${priorityClass(e.Priority)}>
              <td><time datetime=${r.occurredOn}>${formatTime(r.occurredOn)}</time></td>
              <td>${r.priority ?? ''}</td>
              <td>${r.type}</td>
              <td class="events-message">${r.message}</td>
              <td>${r.related}</td>
              <td>${r.acknowledged ? `Acknowledged by ${r.acknowledged}` : r.requiresAcknowledgement ? 'Awaiting acknowledgement' : ''}</td>
            </tr>`;
          })}
          ${!list.loading && events.length === 0
            ? html`<tr><td colspan="6">${page > 0 ? 'No more events on this page.' : 'No event matches the filters.'}</td></tr>`
            : null}
        </tbody>
      </table>
    </div>
    <nav class="pager" aria-label="Pages of events">
      <button type="button" class="secondary" disabled=${page === 0} onClick=${() => goTo(page - 1)}>Previous page</button>
      <span aria-live="polite">Page ${pageNumber}</span>
      <button type="button" class="secondary" disabled=${events.length < pageSize} onClick=${() => goTo(page + 1)}>Next page</button>
    </nav>
  </section>`;
}
