/**
 * The webhooks collection of an instance (`/api/f/<instance_key>/webhooks`): list, create, read,
 * replace, delete, rotate the secret, a test delivery, the delivery attempts, redelivery and
 * replay. Administrators and Operators of the instance (or of an instance above it) manage them;
 * ReadOnly users list and read them. The secret is shown on create and on rotation only. The calls
 * that write or send are in webhook-writes.ts.
 */
import { badRequest, methodNotAllowed } from '../../errors.ts';
import { isObjectKey } from '../../db/keys.ts';
import { listAttempts, webhooksOf } from '../../db/webhooks-repo.ts';
import { operationsOnFirstCall } from '../../http/lazy-operations.ts';
import { parsePaging } from '../../http/params.ts';
import { ok, type Operation } from '../../http/types.ts';
import { contextOf } from '../../objects/context.ts';
import { objectNotFound } from '../../objects/errors.ts';
import { instanceOf, webhookOf, type WebhookDeps } from './access.ts';
import { publicReason } from './reasons.ts';
import { renderWebhook } from './subscriptions.ts';

/** The calls that write or send (webhook-writes.ts), loaded with the first of them: reading never loads them. */
const writes = operationsOnFirstCall(
  () => import('./webhook-writes.ts').then((m) => m.webhookWrites),
  ['createWebhook', 'replaceWebhook', 'removeWebhook', 'rotateSecret', 'testWebhook', 'redeliver', 'replay'],
);

const listWebhooks: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const paging = parsePaging(req);
  // The subscriptions are read beside the instance: they count only once it is in the caller's scope.
  const folderKey = req.params.folderKey!;
  const [, hooks] = await Promise.all([instanceOf(ctx, req), isObjectKey(folderKey) ? webhooksOf(ctx.db, folderKey) : []]);
  const start = paging.page * paging.pageSize;
  return ok(hooks.slice(start, start + paging.pageSize).map((w) => renderWebhook(w, ctx.ns)));
};

const getWebhookOp: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  return ok(renderWebhook(await webhookOf(ctx, req), ctx.ns));
};

const listDeliveries: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  const hook = await webhookOf(ctx, req);
  const paging = parsePaging(req);
  const skip = paging.page * paging.pageSize;
  if (skip + paging.pageSize > 100_000) throw badRequest('InvalidParameter', 'Deliveries are listed up to the 100 000th.');
  const attempts = await listAttempts(ctx.db, hook.key, skip, paging.pageSize, Math.floor(ctx.now.getTime() / 1000));
  return ok(
    attempts.map((a) => ({
      Key: a.key,
      EventKey: a.eventKey,
      WebhookId: a.messageId,
      Attempt: a.attempt,
      ...(a.statusCode !== null ? { StatusCode: a.statusCode } : {}),
      ...(a.error !== null ? { Error: publicReason(a.error) } : {}),
      DurationMs: a.durationMs,
      AttemptedOn: a.attemptedOn,
      NextAttemptOn: a.nextAttemptOn,
      DeadLettered: a.deadLettered,
    })),
  );
};

/** The links a subscription's Links name that are calls: GET on them answers 405. */
const ACTIONS = new Set(['rotatesecret', 'test', 'replay']);

const getWebhookLink: Operation<WebhookDeps> = async (req, deps) => {
  const ctx = contextOf(req, deps);
  await webhookOf(ctx, req);
  if (ACTIONS.has(req.params.link!)) throw methodNotAllowed('POST');
  throw objectNotFound();
};

export const webhookOperations: Readonly<Record<string, Operation<WebhookDeps>>> = {
  listWebhooks,
  getWebhook: getWebhookOp,
  listDeliveries,
  getWebhookLink,
  ...writes,
};
