/**
 * The live event feed's message protocol (JSON text frames).
 *
 * Client → server: `{"action":"subscribe","topic":…}`, `{"action":"unsubscribe","topic":…}`,
 * `{"action":"ping"}`.
 *
 * Server → client: `{"type":"subscribed","topic":…}`, `{"type":"unsubscribed","topic":…}`,
 * `{"type":"pong"}`, `{"type":"event","topic":…,"event":<EventMessageData>}` and
 * `{"type":"error","topic":…,"error":"Forbidden"|"InvalidTopic"|"InvalidMessage","message":…}`
 * (no `topic` for InvalidMessage).
 */

export type ClientMessage =
  | { readonly action: 'subscribe' | 'unsubscribe'; readonly topic: string }
  | { readonly action: 'ping' };

export type LiveErrorCode = 'Forbidden' | 'InvalidTopic' | 'InvalidMessage';

export type ServerMessage =
  | { readonly type: 'subscribed' | 'unsubscribed'; readonly topic: string }
  | { readonly type: 'pong' }
  | { readonly type: 'event'; readonly topic: string; readonly event: unknown }
  | { readonly type: 'error'; readonly topic?: string; readonly error: LiveErrorCode; readonly message: string };

export interface InvalidMessage {
  readonly invalid: string;
}

/** Parses one client frame; anything that is not a known action answers InvalidMessage. */
export function parseClientMessage(body: string | undefined): ClientMessage | InvalidMessage {
  let msg: unknown;
  try {
    msg = JSON.parse(body ?? '');
  } catch {
    return { invalid: 'The message is not valid JSON.' };
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return { invalid: 'The message must be a JSON object.' };
  const { action, topic } = msg as { action?: unknown; topic?: unknown };
  if (action === 'ping') return { action };
  if (action === 'subscribe' || action === 'unsubscribe') {
    if (typeof topic !== 'string') return { invalid: `"${action}" needs a "topic" string.` };
    return { action, topic };
  }
  return { invalid: 'The "action" must be "subscribe", "unsubscribe" or "ping".' };
}

export const liveError = (error: LiveErrorCode, message: string, topic?: string): ServerMessage =>
  topic === undefined ? { type: 'error', error, message } : { type: 'error', topic, error, message };
