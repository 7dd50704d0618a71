/**
 * The number of unacknowledged alarms the navigation shows. Counted from the events list
 * (`requiresAck=true`: events that require acknowledgement and have none) on sign-in and on a
 * change of instance, then kept current by the live events: a new alarm adds one. The service
 * publishes no event for an acknowledgement, so the count is read again after the console's own
 * acknowledgement and once a minute (another operator's). Null while unknown.
 */
import { computed, effect, signal } from '@preact/signals';
import { api } from './api.ts';
import { onLiveEvent, type LiveEvent } from './live.ts';
import { instanceKey, session } from './session.ts';

export const unacknowledgedAlarms = signal<number | null>(null);

/** How often the count is read again, for acknowledgements made elsewhere. */
const RECOUNT_MS = 60_000;
const PAGE = 1000;

/**
 * The events list's scope the alarm views use: the instance's folders and its child instances',
 * as the live subscription (`/<instance>/$`) covers them.
 */
export const ALARM_SCOPE = { includeSubFolders: true, spanScope: true } as const;

/** Whether a live or listed event is an alarm nobody has acknowledged yet. */
export function isOpenAlarm(e: LiveEvent): boolean {
  return e.RequiresAcknowledgement === true && !(Array.isArray(e.AlarmAcknowledgements) && e.AlarmAcknowledgements.length > 0);
}

/** The keys of the open alarms: a set, so an alarm both listed and received live counts once. */
let open = new Set<string>();
let counting = 0;

function publish(): void {
  unacknowledgedAlarms.value = open.size;
}

/** Reads the count again from the events list (every page); the live alarms received meanwhile are kept. */
async function recountAlarms(): Promise<void> {
  const instance = instanceKey.value;
  if (!session.value || !instance) return;
  const round = ++counting;
  const arrived = new Set<string>();
  const stop = onLiveEvent((e) => {
    if (isOpenAlarm(e) && e.Key) arrived.add(e.Key);
  });
  try {
    const keys = new Set<string>();
    for (let page = 0; ; page++) {
      const list = await api<LiveEvent[]>(`/api/f/${instance}/events`, { query: { ...ALARM_SCOPE, requiresAck: true, page, pageSize: PAGE } });
      for (const e of list) if (e.Key) keys.add(e.Key);
      if (list.length < PAGE) break;
    }
    if (round !== counting || instance !== instanceKey.value) return;
    for (const k of arrived) keys.add(k);
    open = keys;
    publish();
  } catch {
    // A failed count leaves the last one shown; the next recount tries again.
  } finally {
    stop();
  }
}

/** An alarm the console acknowledged: out of the count at once, then read again. */
export function alarmAcknowledged(key: string): void {
  if (open.delete(key)) publish();
  void recountAlarms();
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
    void recountAlarms();
    timer = setInterval(() => void recountAlarms(), RECOUNT_MS);
  });
}
