/**
 * The latest status of an input (`PUT`/`GET <input Href>/status`, an InputStatusItem). Kept in its
 * own item beside the input (`O#<key>` / `STATUS`), so frequent status reports never touch the
 * input's document or version; deleted with the input.
 */
import { deleteObjectStatusItem, getObjectStatus, putObjectStatus, type StoredObject } from '../db/objects-repo.ts';
import { renderValue } from '../model/render.ts';
import { typeTag } from '../model/types.ts';
import { locate, requireRole, type Locator } from './access.ts';
import type { Override } from './behaviour.ts';
import type { Ctx } from './context.ts';
import { parseElementBody } from './validate.ts';

export const STATUS_TYPE = 'InputStatusItem';

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

/** An input's latest status (one GetItem); an InputStatusItem without fields until one is reported. */
export async function statusOf(ctx: Ctx, input: StoredObject): Promise<unknown> {
  const status = await getObjectStatus(ctx.db, input.key);
  return status ? renderValue(status, ctx.ns) : { $type: typeTag(ctx.ns, STATUS_TYPE) };
}
