/**
 * The live events connection: one JSON WebSocket per signed-in page (`EventPublisherUrl` of
 * sysinfo, the access token in the query as browsers cannot set headers), subscribed to the
 * current instance's every event (`/<instance>/$`). Pages listen with {@link onLiveEvent}; it
 * reconnects after a close (a new token each time), backing off to 30 s.
 */
import { computed, effect, signal } from '@preact/signals';
import { refresh, session, instanceKey } from './session.ts';

/** An event as published (EventMessageData). */
export interface LiveEvent {
  readonly Key?: string;
  readonly EventTypeKey?: string;
  readonly AppKey?: string;
  readonly Priority?: number;
  readonly Occurred?: string;
  readonly Published?: string;
  readonly MessageLong?: string;
  readonly MessageShort?: string;
  readonly Name?: string;
  readonly RelatedObjects?: ReadonlyArray<{ readonly Key?: string; readonly Name?: string; readonly Type?: string; readonly Href?: string }>;
  readonly [field: string]: unknown;
}

export type LiveState = 'off' | 'connecting' | 'open' | 'retrying';
export const liveState = signal<LiveState>('off');

type Listener = (event: LiveEvent) => void;
const listeners = new Set<Listener>();

/** Calls `listener` with every live event until the returned function is called. */
export function onLiveEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

let publisherUrl: Promise<string> | undefined;

function eventPublisherUrl(): Promise<string> {
  publisherUrl ??= fetch('/api/sysinfo')
    .then((r) => r.json() as Promise<{ EventPublisherUrl?: string }>)
    .then((s) => s.EventPublisherUrl || `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/events`)
    .catch((err: unknown) => {
      publisherUrl = undefined;
      throw err;
    });
  return publisherUrl;
}

let socket: WebSocket | null = null;
let retry: ReturnType<typeof setTimeout> | undefined;
let attempts = 0;

function close(): void {
  clearTimeout(retry);
  const s = socket;
  socket = null;
  if (s) {
    s.onclose = null;
    s.close();
  }
  liveState.value = 'off';
}

async function open(instance: string): Promise<void> {
  liveState.value = attempts === 0 ? 'connecting' : 'retrying';
  let url: string;
  let token: string | undefined;
  try {
    url = await eventPublisherUrl();
    const s = session.value && session.value.expiresAt - Date.now() > 60_000 ? session.value : await refresh();
    token = s?.accessToken;
  } catch {
    schedule(instance);
    return;
  }
  if (!token || instanceKey.value !== instance || socket) return;
  const ws = new WebSocket(`${url}${url.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}`);
  socket = ws;
  ws.onopen = () => ws.send(JSON.stringify({ action: 'subscribe', topic: `/${instance}/$` }));
  ws.onmessage = (m) => {
    let msg: { type?: string; event?: LiveEvent };
    try {
      msg = JSON.parse(String(m.data)) as typeof msg;
    } catch {
      return;
    }
    if (msg.type === 'subscribed') {
      attempts = 0;
      liveState.value = 'open';
    } else if (msg.type === 'event' && msg.event) for (const l of listeners) l(msg.event);
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = null;
    schedule(instance);
  };
}

function schedule(instance: string): void {
  attempts++;
  liveState.value = 'retrying';
  clearTimeout(retry);
  retry = setTimeout(() => {
    if (session.value && instanceKey.value === instance) void open(instance);
  }, Math.min(30_000, 500 * 2 ** Math.min(attempts, 6)));
}

/** Keeps the connection to the current instance while someone is signed in. */
export function startLive(): void {
  // A renewed token changes the session, not whether there is one: no reconnect for it.
  const signedIn = computed(() => session.value !== null);
  effect(() => {
    const on = signedIn.value;
    const instance = instanceKey.value;
    close();
    attempts = 0;
    if (on && instance) void open(instance);
  });
}
