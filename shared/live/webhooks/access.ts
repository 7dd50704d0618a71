/**
 * What the webhooks collection's reads (operations.ts) and writes (webhook-writes.ts) both need:
 * their dependencies and the instance or subscription a path names, in the caller's scope. Kept
 * apart so the writes, loaded with the first of them, do not import the module that loads them.
 */
import { ApiError } from '../../errors.ts';
import { isObjectKey } from '../../db/keys.ts';
import type { StoredObject } from '../../model/stored-object.ts';
import { getWebhook, type StoredWebhook } from '../../db/webhooks-repo.ts';
import type { ApiRequest } from '../../http/types.ts';
import type { CoreDeps } from '../../deps.ts';
import { loadFolder, requireRole } from '../../objects/access.ts';
import type { Ctx } from '../../objects/context.ts';
import { objectNotFound } from '../../objects/errors.ts';
import type { WebhookQueue } from './queue.ts';

export interface WebhookDeps extends CoreDeps {
  readonly queue: WebhookQueue;
}

/** The instance a webhooks path names, in the caller's scope (a folder that is not an instance: 404). */
export async function instanceOf(ctx: Ctx, req: ApiRequest): Promise<StoredObject> {
  const f = await loadFolder(ctx, req.params.folderKey!);
  if (f.collection !== 'instances') throw new ApiError(404, 'NotFound', 'Webhooks belong to an instance, not a folder.');
  return f;
}

/**
 * A subscription of the instance a path names. The subscription is read beside the instance (one
 * request where reads are gathered, as on a cold GET in Lambda; two at once elsewhere), and counts
 * only once the folder is an instance in the caller's scope.
 */
export async function webhookOf(ctx: Ctx, req: ApiRequest): Promise<StoredWebhook> {
  const folderKey = req.params.folderKey!;
  const [, hook] = await Promise.all([instanceOf(ctx, req), isObjectKey(folderKey) ? getWebhook(ctx.db, folderKey, req.params.key!) : undefined]);
  if (!hook) throw objectNotFound();
  return hook;
}

export const manage = (ctx: Ctx) => requireRole(ctx, 'Operator', 'manage webhooks');
