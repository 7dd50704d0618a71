/**
 * The object operations that change something, each given the context and the locator its route
 * row resolved: create, replace, delete, the writes of sub-resources and "sign out everywhere".
 *
 * The write side of the object families loads with this module, on the first write, relationship
 * hook or relationship call (`operations.ts`, `relation-hooks.ts`, shared/relations/operations.ts
 * import it on first use): the validators, behaviours and transactions it brings, and the
 * relationship service and calls it re-exports, are code a cold start serving a read never reads.
 * One lazily loaded module, not three: esbuild groups the modules a cold start loads by which lazy
 * modules also reach them, so each more lazy module splits the start code into more files, and
 * each file costs the loader time of its own (what the deferral saves: docs/cost.md).
 */
import { created, noContent, ok, type ApiResponse } from '../http/operation-contract.ts';
import type { CollectionDef } from '../model/collections.ts';
import type { Locator } from './tenant-scope.ts';
import { createIn, removeAt, replaceAt } from './collection.ts';
import type { Ctx } from './domain-context.ts';
import * as links from './link-writes.ts';
import { revokeSessionsAt } from './sessions.ts';
import { view } from './view.ts';

/** POST of a collection: 201 with the stored object. */
export async function create(ctx: Ctx, def: CollectionDef, folderKey: string, body: unknown): Promise<ApiResponse> {
  return created(view(ctx, await createIn(ctx, def, folderKey, body)));
}

/** PUT of an object: 200 with the stored object, 204 when unchanged or when its collection answers no content. */
export async function replace(ctx: Ctx, loc: Locator, body: unknown): Promise<ApiResponse> {
  const r = await replaceAt(ctx, loc, body);
  return r.changed && !r.behaviour.def.putAnswersNoContent ? ok(view(ctx, r.object)) : noContent();
}

/** DELETE of an object: 204. */
export async function remove(ctx: Ctx, loc: Locator): Promise<ApiResponse> {
  await removeAt(ctx, loc);
  return noContent();
}

/** POST `<Href>/<link>`: 201 with what was added, or 204. */
export async function postLink(ctx: Ctx, loc: Locator, link: string, body: unknown): Promise<ApiResponse> {
  const r = await links.postLink(ctx, loc, link, body);
  return 'created' in r ? created(r.created) : noContent();
}

/** DELETE `<Href>/<link>/<linkKey>`: 204. */
export async function deleteLinkItem(ctx: Ctx, loc: Locator, link: string, linkKey: string): Promise<ApiResponse> {
  await links.deleteLinkItem(ctx, loc, link, linkKey);
  return noContent();
}

/** PUT `<Href>/<link>`: 204. */
export async function putLink(ctx: Ctx, loc: Locator, link: string, body: unknown): Promise<ApiResponse> {
  await links.putLink(ctx, loc, link, body);
  return noContent();
}

/** PUT `<Href>/<link>/<linkKey>`: 200 with the item, 204 when unchanged. */
export async function putLinkItem(ctx: Ctx, loc: Locator, link: string, linkKey: string, body: unknown): Promise<ApiResponse> {
  const r = await links.putLinkItem(ctx, loc, link, linkKey, body);
  return r.changed ? ok(r.item) : noContent();
}

/** `POST <user Href>/revokesessions`: 204. */
export async function revokeSessions(ctx: Ctx, loc: Locator): Promise<ApiResponse> {
  await revokeSessionsAt(ctx, loc);
  return noContent();
}

/** The relationship service the object hooks call (`relation-hooks.ts`), loaded with the write side. */
export * as relationService from '../relations/relation-links.ts';
/** The relationship calls families route (shared/relations/operations.ts), loaded with the write side. */
export * as relationCalls from '../relations/calls.ts';
