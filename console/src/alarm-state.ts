/**
 * The number of unacknowledged alarms the navigation shows. Counted from the events list
 * (`requiresAck=true`: events that require acknowledgement and have none) on sign-in and on a
 * change of instance, then kept current by the live events: a new alarm adds one. The service
 * publishes no event for an acknowledgement, so the count is taken again after the console's own
 * acknowledgement, from the Alarms page's own listing, and every few minutes (another operator's).
 * Null while unknown.
 *
 * The events list has no index on acknowledgement: it reads the timelines until it has a page of
 * matches or the timelines end, and refuses (400 QueryTooBroad) a listing that would read too
 * much. Such a listing is narrowed to recent days instead, and says so.
 */
import { computed, effect, signal } from '@preact/signals';
import { api } from './api.ts';
import { onLiveEvent, type LiveEvent } from './live.ts';
import { instanceKey, session } from './session.ts';

export const unacknowledgedAlarms = signal<number | null>(null);

/** How often the count is taken again, for acknowledgements made elsewhere (each is a full listing). */
const RECOUNT_MS = 5 * 60_000;
const PAGE = 1000;
/** Windows tried, widest first, when a listing would read too much. */
const WINDOWS_DAYS = [undefined, 30, 7, 1] as const;

/**
 * The events list's scope the alarm views use: the instance's folders and its child instances',
 * as the live subscription (`/<instance>/$`) covers them.
 */
const ALARM_SCOPE = { includeSubFolders: true, spanScope: true } as const;

/** Whether a live or listed event is an alarm nobody has acknowledged yet. */
export function isOpenAlarm(e: LiveEvent): boolean {
  return e.RequiresAcknowledgement === true && !(Array.isArray(e.AlarmAcknowledgements) && e.AlarmAcknowledgements.length > 0);
}

export interface Listing<T> {
  readonly events: T[];
  /** Set when the listing had to be narrowed to these recent days. */
  readonly sinceDays?: number;
}

/**
 * Events of the instance and below (the alarm views' scope), every page up to `limit`, narrowed to
 * recent days when the service finds the listing too broad.
 */
export async function listEvents<T extends LiveEvent>(instance: string, query: Record<string, string | number | boolean>, limit: number): Promise<Listing<T>> {
  for (const days of WINDOWS_DAYS) {
    const startingOn = days ? new Date(Date.now() - days * 86_400_000).toISOString() : undefined;
    try {
      const events: T[] = [];
      const pageSize = Math.min(PAGE, limit);
      for (let page = 0; events.length < limit; page++) {
        const list = await api<T[]>(`/api/f/${instance}/events`, { query: { ...ALARM_SCOPE, ...query, startingOn, page, pageSize } });
        events.push(...list);
        if (list.length < pageSize) break;
      }
      return days ? { events, sinceDays: days } : { events };
    } catch (err) {
      if ((err as { code?: string }).code !== 'QueryTooBroad' || days === 1) throw err;
    }
  }
  return { events: [] };
}

/** The keys of the open alarms: a set, so an alarm both listed and received live counts once. */
let open = new Set<string>();
let counting = 0;

function publish(): void {
  unacknowledgedAlarms.value = open.size;
}

/**
 * The open alarms listed (the count's own listing, or the Alarms page's): they replace the count's
 * keys, with the alarms received live since `round` began kept.
 */
function settle(instance: string, round: number, keys: Set<string>, arrived: ReadonlySet<string>): void {
  if (round !== counting || instance !== instanceKey.value) return;
  for (const k of arrived) keys.add(k);
  open = keys;
  publish();
}

/** Follows live alarms from now on, for a listing that starts now. */
function watchArrivals(): { arrived: Set<string>; stop: () => void; round: number } {
  const arrived = new Set<string>();
  const stop = onLiveEvent((e) => {
    if (isOpenAlarm(e) && e.Key) arrived.add(e.Key);
  });
  return { arrived, stop, round: ++counting };
}

/** Lists the open alarms for a page (every one) and takes the count from that listing. */
export async function listOpenAlarms<T extends LiveEvent>(instance: string): Promise<Listing<T>> {
  const w = watchArrivals();
  try {
    const listing = await listEvents<T>(instance, { requiresAck: true }, Number.POSITIVE_INFINITY);
    settle(instance, w.round, new Set(listing.events.flatMap((e) => (e.Key ? [e.Key] : []))), w.arrived);
    return listing;
  } finally {
    w.stop();
  }
}

async function recount(): Promise<void> {
  const instance = instanceKey.value;
  if (!session.value || !instance) return;
  // A failed count leaves the last one shown; the next recount tries again.
  await listOpenAlarms(instance).catch(() => undefined);
}

/** An alarm the console acknowledged: out of the count at once, then counted again. */
export function alarmAcknowledged(key: string): void {
  if (open.delete(key)) publish();
  void recount();
}

/** Counts while someone is signed in, again on a change of instance, following live events. */
export function startAlarmCount(): void {
  const signedIn = computed(() => session.value !== null);
  let timer: ReturnType<typeof setInterval> | undefined;
  onLiveEvent((e) => {
    if (!isOpenAlarm(e) || !e.Key || open.has(e.Key) || unacknowledgedAlarms.value === null) return;
    open.add(e.Key);
    publish();
  });
  effect(() => {
    const on = signedIn.value;
    const instance = instanceKey.value;
    clearInterval(timer);
    open = new Set();
    counting++;
    unacknowledgedAlarms.value = null;
    if (!on || !instance) return;
    void recount();
    timer = setInterval(() => void recount(), RECOUNT_MS);
  });
}
