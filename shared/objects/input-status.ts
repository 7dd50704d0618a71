/**
 * The latest status of an input (`PUT`/`GET <input Href>/status`, an InputStatusItem). Kept in its
 * own item beside the input (`O#<key>` / `STATUS`), so frequent status reports never touch the
 * input's document or version; deleted with the input. The GET is in `links.ts`.
 */
import { deleteObjectStatusItem, putObjectStatus } from '../db/object-writes.ts';
import { locate, requireRole, type Locator } from './tenant-scope.ts';
import type { Override } from './behaviour.ts';
import type { Ctx } from './domain-context.ts';
import { STATUS_TYPE } from './links.ts';
import { parseElementBody } from './validate.ts';

export const inputBehaviour: Override = (base) => ({
  ...base,
  deleteExtra: (ctx, o) => [...base.deleteExtra(ctx, o), deleteObjectStatusItem(ctx.db, o.key)],
});

/** Stores an input's latest status: one GetItem (the input, for scope) and one PutItem. */
export async function putInputStatus(ctx: Ctx, loc: Locator, body: unknown): Promise<void> {
  requireRole(ctx, 'Operator', 'report input status');
  const status = await parseElementBody(body, STATUS_TYPE);
  const input = await locate(ctx, loc);
  await putObjectStatus(ctx.db, input.key, status, ctx.now.toISOString());
}
