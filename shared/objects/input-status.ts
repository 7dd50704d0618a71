/**
 * The latest status of an input (`PUT`/`GET <input Href>/status`, an InputStatusItem). Kept in its
 * own item beside the input (`O#<key>` / `STATUS`), so frequent status reports never touch the
 * input's document or version; deleted with the input. The PUT is in `link-writes.ts`.
 */
import { deleteObjectStatusItem, getObjectStatus, type StoredObject } from '../db/objects-repo.ts';
import { renderValue } from '../model/render.ts';
import { typeTag } from '../model/types.ts';
import type { Override } from './behaviour.ts';
import type { Ctx } from './context.ts';

export const STATUS_TYPE = 'InputStatusItem';

export const inputBehaviour: Override = (base) => ({
  ...base,
  deleteExtra: (ctx, o) => [...base.deleteExtra(ctx, o), deleteObjectStatusItem(ctx.db, o.key)],
});

/** An input's latest status (one GetItem); an InputStatusItem without fields until one is reported. */
export async function statusOf(ctx: Ctx, input: StoredObject): Promise<unknown> {
  const status = await getObjectStatus(ctx.db, input.key);
  return status ? renderValue(status, ctx.ns) : { $type: typeTag(ctx.ns, STATUS_TYPE) };
}
