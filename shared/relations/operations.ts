/**
 * The relationship calls, shared by every family whose collections have relation kinds:
 * connect, disconnect, and the people's access level PUT that field clients use.
 */
import { badRequest } from '../errors.ts';
import { boolParam, stringParam } from '../http/params.ts';
import { noContent, ok, type ApiRequest, type BaseDeps, type Operation } from '../http/types.ts';
import { renderObject } from '../model/render.ts';
import { locate, type Locator } from '../objects/access.ts';
import { requireAnyWrite } from '../objects/collection.ts';
import { contextOf } from '../objects/context.ts';
import { getObject } from '../db/objects-repo.ts';
import { objectNotFound } from '../objects/errors.ts';
import { connect, disconnect } from './service.ts';

const memberOf = (req: ApiRequest): Locator => ({
  kind: 'member',
  collection: req.route.collection!,
  folderKey: req.params.folderKey!,
  key: req.params.key!,
});

/** `POST <Href>/connections/<relation>?relatedKey=&isOneToOne=`: answers the source with its new links. */
export const connectOperation: Operation = async (req, deps: BaseDeps) => {
  const ctx = contextOf(req, deps);
  requireAnyWrite(ctx);
  const source = await locate(ctx, memberOf(req));
  const relatedKey = stringParam(req, 'relatedKey');
  if (!relatedKey) throw badRequest('InvalidParameter', 'Query parameter relatedKey is required.');
  // Accepted for compatibility; the relation table decides what is one-to-one.
  boolParam(req, 'isOneToOne');
  await connect(ctx, source, req.params.relation!, relatedKey.toLowerCase());
  const updated = await getObject(ctx.db, source.key, true);
  if (!updated) throw objectNotFound();
  return ok(renderObject(updated, ctx.ns));
};

/** `DELETE <Href>/connections/<relation>/<related_key>` */
export const disconnectOperation: Operation = async (req, deps: BaseDeps) => {
  const ctx = contextOf(req, deps);
  requireAnyWrite(ctx);
  const source = await locate(ctx, memberOf(req));
  await disconnect(ctx, source, req.params.relation!, req.params.relatedKey!.toLowerCase());
  return noContent();
};

/** The key an object Href names (`/api/f/<folder>/<collection>/<key>`), or the body itself when it is a key. */
export function keyOfHref(body: unknown, collection: string): string {
  if (typeof body !== 'string') throw badRequest('ValidationFailed', `The body must be a JSON string holding the Href of one of ${collection}.`);
  const m = new RegExp(`^(?:/api/f/[0-9a-fA-F]{24}/${collection}/)?([0-9a-fA-F]{24})/?$`).exec(body.trim());
  if (!m) throw badRequest('ValidationFailed', `"${body.slice(0, 100)}" is not the Href of one of ${collection}.`);
  return m[1]!.toLowerCase();
}

/** `PUT /people/<key>/accesslevels` with an access level's Href: connects it, keeping the others. */
export const putPersonAccessLevel = async (req: ApiRequest, deps: BaseDeps) => {
  const ctx = contextOf(req, deps);
  requireAnyWrite(ctx);
  const person = await locate(ctx, memberOf(req));
  await connect(ctx, person, 'AccessLevel', keyOfHref(req.body, 'accesslevels'));
  return noContent();
};
