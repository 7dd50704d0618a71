/** An object as its caller may see it, shared by the read and the write operations. */
import type { StoredObject } from '../model/stored-object.ts';
import { hideOuterFolder, renderObject } from '../model/object-render.ts';
import type { Ctx } from './domain-context.ts';

/**
 * The caller's own instance is held by a parent the caller cannot see, so its `InFolderKey` and
 * `InFolderHref` are not shown (a Key of another tenant).
 */
export function view(ctx: Ctx, o: StoredObject): Record<string, unknown> {
  return hideOuterFolder(renderObject(o, ctx.ns), o, ctx.principal.instanceKey);
}
