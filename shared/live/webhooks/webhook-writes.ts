/**
 * The webhooks calls that write or send: create, replace, delete, rotate the secret, a test
 * delivery, redelivery and replay (see webhook-operations.ts, which loads this module with the first of
 * them, and holds the reads and the scope checks).
 */
import { ApiError, badRequest, conflict, ConditionFailed } from '../../errors.ts';
import { getEvent, queryFolderEvents } from '../../db/event-reads.ts';
import type { StoredObject } from '../../model/stored-object.ts';
import { claimReplaySlot, deleteWebhook, getAttempt, putWebhook, replaceWebhookSettings, rotateWebhookSecret, type StoredWebhook } from '../../db/webhooks-repo.ts';
import { foldersOf } from '../../events/timeline-folders.ts';
import { renderEvent } from '../../events/event-render.ts';
import { accepted, created, noContent, ok, type Operation } from '../../http/operation-contract.ts';
import { linkedObjectKeys } from '../topics.ts';
import { newKey } from '../../model/placement.ts';
import { contextOf } from '../../objects/domain-context.ts';
import { objectNotFound } from '../../objects/object-errors.ts';
import { instanceOf, manage, webhookOf, type WebhookDeps } from './webhook-scope.ts';
import type { DeliveryJob } from './queue.ts';
import { PREVIOUS_SECRET_MS } from './schedule.ts';
import { sendTest } from './sender.ts';
import { messageIdOf, newSecret } from './signing.ts';
import { ownEndpoints } from './self-target.ts';
import { settingsFrom } from './settings.ts';
import { matchable, renderWebhook, webhookReceives } from './subscriptions.ts';

/** Most events one replay may re-send. */
const MAX_REPLAY = 10_000;
/** Most events one replay may read (matching or not) before it is refused as too broad. */
const MAX_REPLAY_SCANNED = 50_000;
/**
 * One replay per subscription in this interval: a replay queues up to {@link MAX_REPLAY} jobs at
 * once, and repeating it is how a tenant would flood the delivery queue (the sender's fairness
 * rule keeps other instances' deliveries on time; this keeps the backlog itself bounded).
 */
const REPLAY_INTERVAL_MS = 60_000;

const createWebhook: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const instance = await instanceOf(ctx, req);
  manage(ctx);
  const settings = await settingsFrom(ctx.db, req.body, instance.key, deps.config.webhookAllowLoopback, ownEndpoints(deps.config));
  const secret = newSecret();
  const hook: StoredWebhook = {
    key: newKey(),
    instanceKey: instance.key,
    settings,
    secret,
    previousSecret: undefined,
    previousSecretUntil: undefined,
    version: 1,
    disabledReason: null,
    lastDeliveryOn: null,
    lastFailureOn: null,
    failingSince: null,
  };
  await putWebhook(ctx.db, hook);
  return created(renderWebhook(hook, ctx.ns, secret));
};

const replaceWebhook: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const hook = await webhookOf(ctx, req);
  manage(ctx);
  const settings = await settingsFrom(ctx.db, req.body, hook.instanceKey, deps.config.webhookAllowLoopback, ownEndpoints(deps.config));
  const v = (req.body as { ConcurrencyVersion?: unknown }).ConcurrencyVersion;
  const expected = typeof v === 'number' ? v : undefined;
  try {
    return ok(renderWebhook(await replaceWebhookSettings(ctx.db, hook, settings, expected), ctx.ns));
  } catch (err) {
    if (err instanceof ConditionFailed) throw conflict('ConcurrencyConflict', 'The webhook was changed meanwhile; read it again.');
    throw err;
  }
};

const removeWebhook: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const hook = await webhookOf(ctx, req);
  manage(ctx);
  await deleteWebhook(ctx.db, hook.instanceKey, hook.key);
  return noContent();
};

const rotateSecret: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const hook = await webhookOf(ctx, req);
  manage(ctx);
  const secret = newSecret();
  try {
    const rotated = await rotateWebhookSecret(ctx.db, hook, secret, ctx.now.getTime() + PREVIOUS_SECRET_MS);
    return ok(renderWebhook(rotated, ctx.ns, secret));
  } catch (err) {
    if (err instanceof ConditionFailed) throw objectNotFound();
    throw err;
  }
};

const testWebhook: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const hook = await webhookOf(ctx, req);
  manage(ctx);
  const o = await sendTest(deps, hook);
  return ok({ ...(o.statusCode !== null ? { StatusCode: o.statusCode } : {}), ...(o.error !== null ? { Error: o.error } : {}), DurationMs: o.durationMs });
};

/** The first attempt's job of an event for a subscription (same `webhook-id` every time). */
function eventJob(hook: StoredWebhook, event: StoredObject, ns: string, now: Date): DeliveryJob {
  return {
    webhookKey: hook.key,
    instanceKey: hook.instanceKey,
    eventKey: event.key,
    messageId: messageIdOf(event.key, hook.key),
    type: 'event',
    timestamp: now.toISOString(),
    data: renderEvent(event, ns),
    webhookVersion: hook.version,
    attempt: 1,
    notBefore: now.getTime(),
  };
}

const redeliver: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const hook = await webhookOf(ctx, req);
  manage(ctx);
  const nowEpoch = Math.floor(ctx.now.getTime() / 1000);
  const attempt = await getAttempt(ctx.db, hook.key, req.params.linkKey!, nowEpoch);
  if (!attempt) throw objectNotFound();
  if (!attempt.eventKey) throw badRequest('NotAnEvent', 'A test delivery cannot be redelivered; send another test.');
  const event = await getEvent(ctx.db, attempt.eventKey, nowEpoch);
  if (!event || !event.instances.includes(hook.instanceKey)) {
    throw new ApiError(404, 'EventGone', 'The event is no longer stored (live-only or expired); it cannot be redelivered.');
  }
  await deps.queue.send([eventJob(hook, event, ctx.ns, ctx.now)]);
  return accepted({ EventKey: event.key, WebhookId: messageIdOf(event.key, hook.key) });
};

function isoField(body: Record<string, unknown>, field: string): string {
  const v = body[field];
  const d = typeof v === 'string' ? new Date(v) : undefined;
  if (!d || Number.isNaN(d.getTime())) throw badRequest('ValidationFailed', `${field} must be an ISO 8601 date-time.`);
  return d.toISOString();
}

const replay: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const hook = await webhookOf(ctx, req);
  manage(ctx);
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('ValidationFailed', 'The body must be {"Since": ISO, "Until": ISO}.');
  const since = isoField(body, 'Since');
  const until = isoField(body, 'Until');
  if (since >= until) throw badRequest('ValidationFailed', 'Since must be before Until.');
  // Claimed before the window is read: a replay refused later (too broad) still used its slot,
  // as it used the reads.
  const freeAt = await claimReplaySlot(ctx.db, hook.key, ctx.now.getTime(), REPLAY_INTERVAL_MS);
  if (freeAt !== undefined) {
    const seconds = Math.max(1, Math.ceil((freeAt - ctx.now.getTime()) / 1000));
    throw new ApiError(429, 'TooManyRequests', `A replay of this subscription began within the last ${REPLAY_INTERVAL_MS / 1000} s; retry after ${seconds} s.`, {
      'Retry-After': String(seconds),
    });
  }
  // Replay re-sends what the subscription would receive now, disabled or not: it is the catch-up.
  const active: StoredWebhook = { ...hook, settings: { ...hook.settings, Enabled: true } };

  const folders = await foldersOf(ctx, hook.instanceKey, { includeSubFolders: true, spanScope: true });
  const nowEpoch = Math.floor(ctx.now.getTime() / 1000);
  const events: StoredObject[] = [];
  const tooMany = () => badRequest('TooManyEvents', `The window holds more than ${MAX_REPLAY} matching events; replay a shorter window.`);
  let scanned = 0;
  for (const folder of folders) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await queryFolderEvents(ctx.db, folder, { from: since, to: until }, 1000, start, nowEpoch);
      scanned += page.scanned;
      if (scanned > MAX_REPLAY_SCANNED) {
        throw badRequest('QueryTooBroad', `The window holds more than ${MAX_REPLAY_SCANNED} events of the instance; replay a shorter window.`);
      }
      for (const e of page.items) {
        if (webhookReceives(active, matchable(e.doc, e.instances, linkedObjectKeys(e.doc)))) events.push(e);
      }
      if (events.length > MAX_REPLAY) throw tooMany();
      start = page.next;
    } while (start);
  }
  // Oldest first, as they happened.
  events.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const jobs = events.map((e) => eventJob(hook, e, ctx.ns, ctx.now));
  for (let i = 0; i < jobs.length; i += 100) await deps.queue.send(jobs.slice(i, i + 100));
  return accepted({ Count: jobs.length, Since: since, Until: until });
};

export const webhookWrites = { createWebhook, replaceWebhook, removeWebhook, rotateSecret, testWebhook, redeliver, replay };
