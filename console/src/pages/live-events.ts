/**
 * Live events: every event of the current instance as it arrives over the shared WebSocket,
 * newest first, tinted by priority, filtered by text, type and minimum priority, with a pause.
 *
 * Memory stays flat and the page responsive under a burst: the newest {@link KEEP} rows are kept
 * (older ones counted), events are taken in batches at most once an animation frame and not more
 * often than every {@link MIN_RENDER_MS}, and the newest {@link ROWS_STEP} matching rows are
 * rendered ("Show more" adds as many), so a burst re-lays out a short table. While paused,
 * arriving events are counted and held (the newest {@link KEEP}), shown on resume. A row opens
 * the event's detail at `/console/live/<eventKey>`.
 */
import { signal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.ts';
import { api } from '../api.ts';
import { onLiveEvent, type LiveEvent } from '../live.ts';
import { here, hrefOf, navigate } from '../router.ts';
import { instanceKey } from '../session.ts';
import { Field, PageHeader, Select, formatTime } from '../ui.ts';
import { EventDetailDialog } from '../event-detail.ts';
import { eventTypeName, eventTypeNames } from '../event-type-names.ts';
import { PRIORITY_LEVELS, priorityClass, priorityText } from '../event-priority.ts';
import '../styles/live.css';

/** Rows kept; older ones are counted, not kept. */
const KEEP = 500;
/** The least time between two renders of a burst. */
const MIN_RENDER_MS = 200;
/** Rows rendered at first, and added by each "Show more": the rest of the kept rows wait for it. */
const ROWS_STEP = 100;
/** Recent events read when the page opens, before any arrives. */
const RECENT = 50;

/** The feed of one instance: kept for the session, so leaving the page and coming back keeps it. */
interface Feed {
  instance: string;
  /** Newest first, at most KEEP. */
  rows: LiveEvent[];
  /** Arrived and not yet shown (oldest first): the next batch, or what a pause holds. */
  incoming: LiveEvent[];
  received: number;
  /** Events no longer kept (beyond KEEP), shown or held. */
  dropped: number;
  paused: boolean;
  since: string;
  recentRead: boolean;
}

const newFeed = (instance: string): Feed => ({ instance, rows: [], incoming: [], received: 0, dropped: 0, paused: false, since: new Date().toISOString(), recentRead: false });
let feed = newFeed('');
/** Bumped after each batch: the page re-renders on it. */
const version = signal(0);
let scheduled = false;
let lastRender = 0;
let listening = false;

function flush(): void {
  scheduled = false;
  if (feed.paused || feed.incoming.length === 0) return;
  const wait = lastRender + MIN_RENDER_MS - performance.now();
  if (wait > 0) {
    schedule(wait);
    return;
  }
  lastRender = performance.now();
  const batch = feed.incoming;
  feed.incoming = [];
  batch.reverse();
  const rows = batch.concat(feed.rows);
  if (rows.length > KEEP) {
    feed.dropped += rows.length - KEEP;
    rows.length = KEEP;
  }
  feed.rows = rows;
  version.value++;
}

function schedule(delay = 0): void {
  if (scheduled) return;
  scheduled = true;
  // A hidden tab runs no animation frames: the timer still takes the batch (and bounds memory).
  if (delay > 0 || document.hidden) setTimeout(flush, Math.max(delay, 0));
  else requestAnimationFrame(flush);
}

function receive(e: LiveEvent): void {
  if (feed.instance !== instanceKey.value) feed = newFeed(instanceKey.value);
  feed.received++;
  feed.incoming.push(e);
  // Held events beyond what could be shown are only counted.
  if (feed.incoming.length > KEEP * 2) {
    const over = feed.incoming.length - KEEP;
    feed.incoming.splice(0, over);
    feed.dropped += over;
  }
  if (feed.paused) version.value++;
  else schedule();
}

/** The newest events before the page opened: the feed starts with them rather than empty. */
async function readRecent(f: Feed): Promise<void> {
  f.recentRead = true;
  const recent = await api<LiveEvent[]>(`/api/f/${f.instance}/events`, { query: { includeSubFolders: true, spanScope: true, pageSize: RECENT } }).catch(() => []);
  if (feed !== f) return;
  const have = new Set([...f.rows, ...f.incoming].map((e) => e.Key));
  const older = recent.filter((e) => !have.has(e.Key));
  f.rows = f.rows.concat(older).slice(0, KEEP);
  version.value++;
}

function setPaused(paused: boolean): void {
  feed.paused = paused;
  if (!paused) schedule();
  version.value++;
}

interface Filters {
  readonly text: string;
  readonly type: string;
  readonly minPriority: number;
}

/** The text a row is searched in: its type, messages and related objects' names. */
function haystack(e: LiveEvent): string {
  const related = (e.RelatedObjects ?? []).map((r) => r.Name ?? (r as { CommonName?: string }).CommonName ?? '').join(' ');
  return `${eventTypeName(e)} ${e.MessageLong ?? ''} ${e.MessageShort ?? ''} ${related}`.toLowerCase();
}

function matches(e: LiveEvent, f: Filters): boolean {
  if (f.minPriority > 0 && (typeof e.Priority === 'number' ? e.Priority : 0) < f.minPriority) return false;
  if (f.type && (e.EventTypeKey ?? '').toLowerCase() !== f.type) return false;
  return !f.text || haystack(e).includes(f.text.toLowerCase());
}

function Row({ e }: { readonly e: LiveEvent }) {
  const occurred = (e.OccurredOn ?? e.Occurred) as string | undefined;
  const message = e.MessageLong || e.MessageShort || '(no message)';
  const related = (e.RelatedObjects ?? [])
    .map((r) => (r as { CommonName?: string }).CommonName ?? r.Name)
    .filter(Boolean)
    .join(', ');
  return html`<tr class=${priorityClass(e.Priority)}>
    <td><time datetime=${occurred}>${formatTime(occurred)}</time></td>
    <td>${priorityText(e.Priority)}</td>
    <td>${eventTypeName(e)}</td>
    <td>${e.Key ? html`<a href=${hrefOf('live', e.Key)}>${message}</a>` : message}</td>
    <td>${related}</td>
  </tr>`;
}

export function LiveEventsPage({ pageKey }: { readonly pageKey: string | undefined }) {
  const instance = instanceKey.value;
  const [text, setText] = useState('');
  const [type, setType] = useState('');
  const [minPriority, setMinPriority] = useState('0');
  const [rowsShown, setRowsShown] = useState(ROWS_STEP);
  useEffect(() => {
    if (!listening) {
      listening = true;
      onLiveEvent(receive);
    }
  }, []);
  if (feed.instance !== instance) feed = newFeed(instance);
  useEffect(() => {
    if (instance && !feed.recentRead) void readRecent(feed);
  }, [instance]);
  const renders = version.value;
  const names = eventTypeNames.value;
  const f = feed;
  const filters: Filters = { text: text.trim(), type, minPriority: Number(minPriority) };
  const filtering = filters.text !== '' || filters.type !== '' || filters.minPriority > 0;
  const shown = filtering ? f.rows.filter((e) => matches(e, filters)) : f.rows;
  // The types to filter by: the instance's, and any an arrived event names.
  const types = new Map<string, string>(names);
  for (const e of f.rows) if (e.EventTypeKey && !types.has(e.EventTypeKey.toLowerCase())) types.set(e.EventTypeKey.toLowerCase(), eventTypeName(e));
  const typeOptions = [{ value: '', label: 'All types' }, ...[...types].map(([value, label]) => ({ value, label })).sort((a, b) => a.label.localeCompare(b.label))];
  const held = f.paused ? f.incoming.length : 0;
  return html`<${PageHeader} title="Live events">
      <button type="button" class=${f.paused ? '' : 'secondary'} onClick=${() => setPaused(!f.paused)}>${f.paused ? 'Resume' : 'Pause'}</button>
    </${PageHeader}>
    <div class="toolbar" role="group" aria-label="Filters">
      <${Field} label="Filter text" type="search" value=${text} onInput=${setText} />
      <${Select} label="Event type" value=${type} onChange=${setType} options=${typeOptions} />
      <${Select} label="Minimum priority" value=${minPriority} onChange=${setMinPriority} options=${PRIORITY_LEVELS} />
    </div>
    <p class="live-summary" data-received=${f.received} data-kept=${f.rows.length} data-dropped=${f.dropped} data-held=${held} data-renders=${renders}>
      ${f.received} received since ${formatTime(f.since)}; ${f.rows.length} kept${filtering ? `, ${shown.length} matching the filters` : ''}${shown.length > rowsShown ? `, the newest ${rowsShown} shown` : ''}${f.dropped ? `; ${f.dropped} older not kept` : ''}.
      ${f.paused ? html` <strong>Paused: ${held} new ${held === 1 ? 'event' : 'events'} held${f.incoming.length >= KEEP ? ' (the newest kept)' : ''}.</strong>` : null}
    </p>
    <div class="table-wrap" tabindex="0" role="region" aria-labelledby="live-caption">
      <table class="live-table">
        <caption id="live-caption">Live events</caption>
        <thead>
          <tr><th scope="col">Occurred</th><th scope="col">Priority</th><th scope="col">Type</th><th scope="col">Message</th><th scope="col">Related</th></tr>
        </thead>
        <tbody>
          ${shown.length === 0
            ? html`<tr><td colspan="5" class="muted">${f.rows.length ? 'No event matches the filters.' : 'No event yet: they appear here as they happen.'}</td></tr>`
            : shown.slice(0, rowsShown).map((e) => html`<${Row} key=${e.Key} e=${e} />`)}
        </tbody>
      </table>
    </div>
    ${shown.length > rowsShown
      ? html`<div class="actions"><button type="button" class="secondary" onClick=${() => setRowsShown((n) => n + ROWS_STEP)}>Show more</button></div>`
      : null}
    ${pageKey ? html`<${EventDetailDialog} eventKey=${pageKey} onClose=${() => here.value.key && navigate(hrefOf('live'))} />` : null}`;
}
