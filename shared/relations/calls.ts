/**
 * The relationship calls, shared by every family whose collections have relation kinds:
 * connect (POST or PUT), disconnect, the connections of one relation, and the people's access
 * level PUT and scheduled access level batch that field clients use. Families take them from
 * `relation-operations.ts`, which loads this module with the first of them.
 */
import { ApiError, badRequest, validationFailed } from '../errors.ts';
import { boolParam, stringParam } from '../http/params.ts';
import { noContent, ok, type ApiRequest, type BaseDeps, type Operation } from '../http/operation-contract.ts';
import { renderObject } from '../model/object-render.ts';
import { locate, type Locator } from '../objects/tenant-scope.ts';
import { requireAnyWrite } from '../objects/collection.ts';
import { contextOf } from '../objects/domain-context.ts';
import { getObject } from '../db/objects-repo.ts';
import { objectNotFound } from '../objects/object-errors.ts';
import { connect, connectedObjects, disconnect, replaceScheduledAccessLevels, ruleFor, invalidRelation, type ScheduledLevel } from './relation-links.ts';
import { relationRule, SCHEDULED_ACCESS_LEVEL } from './rules.ts';
import { windowFromBody, windowFromMetaData, type Window } from './window.ts';
import { LIMITS } from '../model/limits.ts';

const memberOf = (req: ApiRequest): Locator => ({
  kind: 'member',
  collection: req.route.collection!,
  folderKey: req.params.folderKey!,
  key: req.params.key!,
});

const isEmptyBody = (body: unknown): boolean =>
  body === undefined || body === null || body === '' || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);

/**
 * The window a connect call's body sets: `{ActiveOn, ExpiresOn}` for a scheduled access level (no
 * body: open). Other relation kinds take no body: an empty one (`{}`, `null`, `""`) is ignored,
 * anything else is a 400, so a client never believes it stored something that was dropped.
 */
function windowOfConnect(relationName: string, body: unknown): Window | undefined {
  if (relationRule(relationName)?.relation === SCHEDULED_ACCESS_LEVEL) return windowFromBody(body);
  if (!isEmptyBody(body)) throw validationFailed(`A ${relationName.slice(0, 64)} connection takes no body.`);
  return undefined;
}

/**
 * `POST` or `PUT <Href>/connections/<relation>?relatedKey=&isOneToOne=&addAsTag=`: answers the
 * source with its new links.
 */
export const connectOperation: Operation = async (req, deps: BaseDeps) => {
  const ctx = contextOf(req, deps);
  requireAnyWrite(ctx);
  const source = await locate(ctx, memberOf(req));
  const relatedKey = stringParam(req, 'relatedKey');
  if (!relatedKey) throw badRequest('InvalidParameter', 'Query parameter relatedKey is required.');
  // Accepted for compatibility (and checked to be booleans): the relation table decides what is
  // one-to-one, and there are no tags.
  boolParam(req, 'isOneToOne');
  boolParam(req, 'addAsTag');
  const window = windowOfConnect(req.params.relation!, req.body);
  await connect(ctx, source, req.params.relation!, relatedKey.toLowerCase(), window);
  const updated = await getObject(ctx.db, source.key, true);
  if (!updated) throw objectNotFound();
  return ok(renderObject(updated, ctx.ns));
};

/** `GET <Href>/connections/<relation>`: the connected objects of that relation the caller may see. */
export const listConnectionsOperation: Operation = async (req, deps: BaseDeps) => {
  const ctx = contextOf(req, deps);
  const source = await locate(ctx, memberOf(req));
  const rule = ruleFor(source, req.params.relation!);
  return ok(await connectedObjects(ctx, source, rule.relation));
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
function keyOfHref(body: unknown, collection: string): string {
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

/** Items of one `scheduledaccesslevelbatch` at most (the changes it makes are capped lower, see MAX_LINK_CHANGES). */
export const MAX_SCHEDULED_BATCH = 1000;

/** The ObjectLinkItems of a batch body, as (key, window) pairs; 400 for anything else. */
function scheduledLevelsOf(body: unknown): ScheduledLevel[] {
  if (!Array.isArray(body)) throw validationFailed('The body must be a JSON array of ObjectLinkItem.');
  if (body.length > Math.min(MAX_SCHEDULED_BATCH, LIMITS.array)) throw validationFailed(`At most ${MAX_SCHEDULED_BATCH} links may be sent at once.`);
  const out: ScheduledLevel[] = [];
  for (const [i, item] of body.entries()) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw validationFailed(`[${i}] must be an ObjectLinkItem.`);
    const l = item as Record<string, unknown>;
    if (typeof l.Relation !== 'string' || relationRule(l.Relation)?.relation !== SCHEDULED_ACCESS_LEVEL) {
      throw invalidRelation(`[${i}].Relation must be ${SCHEDULED_ACCESS_LEVEL}.`);
    }
    if (typeof l.LinkedObjectKey !== 'string' || l.LinkedObjectKey.length === 0) throw invalidRelation(`[${i}].LinkedObjectKey is required.`);
    try {
      out.push({ key: l.LinkedObjectKey.trim().toLowerCase().slice(0, 64), window: windowFromMetaData(l.MetaDataBson) });
    } catch (err) {
      // Name the item whose window is wrong.
      throw err instanceof ApiError ? new ApiError(err.status, err.code, `[${i}] ${err.message}`) : err;
    }
  }
  return out;
}

/**
 * `PUT /people/<key>/scheduledaccesslevelbatch` with an array of ObjectLinkItem: the person's
 * scheduled access levels become exactly those (204).
 */
export const putScheduledAccessLevelBatch = async (req: ApiRequest, deps: BaseDeps) => {
  const ctx = contextOf(req, deps);
  requireAnyWrite(ctx);
  const person = await locate(ctx, memberOf(req));
  const wanted = scheduledLevelsOf(req.body);
  await replaceScheduledAccessLevels(ctx, person, wanted);
  return noContent();
};
