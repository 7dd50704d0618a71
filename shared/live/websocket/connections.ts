/**
 * The WebSocket side of the live event feed: who may connect, what a client may subscribe to,
 * and the answers to its messages.
 */
import { checkPrincipalNow } from '../../auth/status-check.ts';
import { deleteConnection, deleteSubscription, getConnection, putConnection, putSubscription } from '../../db/live-repo.ts';
import { OAuthError } from '../../errors.ts';
import { liveEventsRefusal, type Principal } from '../../auth/principal.ts';
import type { LiveDeps } from '../live-deps.ts';
import { liveError, parseClientMessage, type ServerMessage } from './protocol.ts';
import { inScope, parseTopic, type Topic } from '../topics.ts';

/** API Gateway closes a WebSocket connection after 2 hours; its items expire then too. */
const CONNECTION_LIFETIME_SECONDS = 2 * 60 * 60;
/** Bounds the items one connection can create (and a disconnect must delete). */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;

const epochSeconds = (d: Date): number => Math.floor(d.getTime() / 1000);

/**
 * Accepts a connection whose bearer token verifies and records it. `authorization` is an
 * `Authorization` header value (`Bearer <token>`). Returns false for a missing or invalid token.
 *
 * The caller's status is read again here, past the authenticator's cache: a connection opened
 * after its user was revoked (and after the fan-out closed the user's connections) would
 * otherwise live on for its whole lifetime.
 */
export async function openConnection(deps: LiveDeps, connectionId: string, authorization: string | undefined): Promise<boolean> {
  let principal: Principal;
  try {
    principal = await deps.authenticator.authenticate(authorization);
    await checkPrincipalNow(deps.db, principal);
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    deps.logger.info('websocket connection refused', { reason: err.message });
    return false;
  }
  const refusal = liveEventsRefusal(principal);
  if (refusal) {
    deps.logger.info('websocket connection refused', { reason: refusal });
    return false;
  }
  const now = deps.now();
  await putConnection(deps.db, { connectionId, principal, connectedAt: now, ttl: epochSeconds(now) + CONNECTION_LIFETIME_SECONDS });
  return true;
}

/** Forgets a connection and its subscriptions. */
export async function closeConnection(deps: LiveDeps, connectionId: string): Promise<void> {
  await deleteConnection(deps.db, connectionId);
}

/** Handles one client frame and sends the answer to the client. */
export async function handleClientMessage(deps: LiveDeps, connectionId: string, body: string | undefined): Promise<void> {
  const answer = await answerTo(deps, connectionId, body);
  // A client that left before its answer is not an error.
  if (!(REVOKED in answer)) {
    await deps.connections.post(connectionId, answer);
    return;
  }
  // The refusal goes first, so the client reads why its connection closes.
  const { [REVOKED]: _, ...refusal } = answer;
  await deps.connections.post(connectionId, refusal);
  await deps.connections.close(connectionId);
}

/** Marks an answer after which the connection is closed (its user's sessions were revoked). */
const REVOKED = Symbol('revoked');
type Answer = ServerMessage | (ServerMessage & { readonly [REVOKED]: true });

async function answerTo(deps: LiveDeps, connectionId: string, body: string | undefined): Promise<Answer> {
  const msg = parseClientMessage(body);
  if ('invalid' in msg) return liveError('InvalidMessage', msg.invalid);
  if (msg.action === 'ping') return { type: 'pong' };
  const topic = parseTopic(msg.topic);
  if (!topic) {
    return liveError('InvalidTopic', 'A topic is "/<instance_key>/$" or "/<instance_key>/<object_key>".', msg.topic);
  }
  if (msg.action === 'unsubscribe') {
    await deleteSubscription(deps.db, connectionId, topic.instanceKey, topic.name);
    return { type: 'unsubscribed', topic: topic.name };
  }
  return subscribe(deps, connectionId, topic);
}

/**
 * A subscription re-reads the caller's status (uncached): a revoked user (disabled, new password,
 * signed out everywhere, demoted, deleted) is refused and the connection closed, even when the
 * fan-out has not closed it yet.
 */
async function subscribe(deps: LiveDeps, connectionId: string, topic: Topic): Promise<Answer> {
  const forbidden = liveError('Forbidden', 'The topic is outside the scope of your instance.', topic.name);
  const now = epochSeconds(deps.now());
  const connection = await getConnection(deps.db, connectionId, now);
  if (!connection) return liveError('Forbidden', 'The connection is not open.', topic.name);
  const [current, scoped] = await Promise.all([
    checkPrincipalNow(deps.db, connection.principal).then(
      () => undefined,
      (err: unknown) => {
        if (err instanceof OAuthError) return err;
        throw err;
      },
    ),
    inScope(deps, connection.principal, topic.instanceKey),
  ]);
  if (current) {
    deps.logger.info('websocket subscription refused: the session was revoked', { reason: current.message });
    await deleteConnection(deps.db, connectionId);
    return { ...liveError('Forbidden', current.message, topic.name), [REVOKED]: true };
  }
  if (!scoped) return forbidden;
  const outcome = await putSubscription(deps.db, {
    connectionId,
    instanceKey: topic.instanceKey,
    topic: topic.name,
    ...(topic.kind === 'object' ? { objectKey: topic.objectKey } : {}),
    // The subscription lives as long as its connection.
    ttl: epochSeconds(new Date(connection.connectedAt)) + CONNECTION_LIFETIME_SECONDS,
    maxPerConnection: MAX_SUBSCRIPTIONS_PER_CONNECTION,
  });
  if (outcome === 'connection-gone') return liveError('Forbidden', 'The connection is not open.', topic.name);
  if (outcome === 'limit-reached') {
    return liveError('Forbidden', `A connection may hold at most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions.`, topic.name);
  }
  return { type: 'subscribed', topic: topic.name };
}
