/**
 * The sub-resources of an object (`<Href>/<link>`): the spec's standard links and, for inputs,
 * `status`.
 *
 * | link           | GET                                   | POST                  | PUT        | DELETE `/<key>` |
 * | -------------- | ------------------------------------- | --------------------- | ---------- | --------------- |
 * | meta           | the object's Metadata                 | 405                   | 405        | 405             |
 * | monikers       | the object's Monikers                 | 405                   | 405        | 405             |
 * | commonname     | CommonName as a JSON string           | 405                   | 405        | 405             |
 * | images         | `[]` (no images are stored yet)       | 405                   | 405        | 405             |
 * | notes          | the notes, chronological              | add a note (201)      | 405        | remove a note   |
 * | connections    | the connected objects (`/<relation>`: of one relation, its own route) | 405 (connect: its own route) | 405 | 405 |
 * | references     | `[]` until relationships exist        | 405                   | 405        | 405             |
 * | takeownership  | 405, `Allow: POST`                    | 204 (see below)       | 405        | 405             |
 * | status (inputs)| latest InputStatusItem                | 405                   | store (204)| 405             |
 * | cards (people) | the cards, each with its `Key`        | add a card (201)      | 405 (`PUT cards/<key>`: replace a card) | remove a card |
 *
 * Take ownership: in Gatehouse an object is always owned by the instance whose folder holds it,
 * and objects do not move, so there is nothing to transfer. `POST takeownership` is accepted as
 * an idempotent action by anyone who may change the object (ReadOnly: 403) and answers 204; it
 * changes nothing (not even the version) and writes nothing.
 *
 * Every call is one GetItem (the object, with its scope) plus the work of the link. The GETs are
 * here; the calls that change something are in `link-writes.ts`, loaded with the first of them.
 */
import { documentLink, renderValue } from '../model/object-render.ts';
import { notFound } from '../errors.ts';
import { locate, type Locator } from './tenant-scope.ts';
import type { Ctx } from './domain-context.ts';
import { onlyMethods } from './object-errors.ts';
import { listCards } from './card-reads.ts';
import { getObjectStatus } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { typeTag } from '../model/type-tags.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The type of an input's latest status (`<input Href>/status`, see `input-status.ts`). */
export const STATUS_TYPE = 'InputStatusItem';

/** Methods each link answers (the Allow header of a 405). */
const STANDARD: Readonly<Record<string, readonly Method[]>> = {
  meta: ['GET'],
  monikers: ['GET'],
  commonname: ['GET'],
  images: ['GET'],
  notes: ['GET', 'POST', 'DELETE'],
  connections: ['GET'],
  references: ['GET'],
  takeownership: ['POST'],
};

/** Links that only some collections have (`PUT inputs/<key>/status`). */
const EXTRA: Readonly<Record<string, Readonly<Record<string, readonly Method[]>>>> = {
  inputs: { status: ['GET', 'PUT'] },
  // PUT and DELETE of `cards/<card key>` are answered before this check (see putLinkItem).
  people: { cards: ['GET', 'POST'] },
};

/** The collection a locator names before any read (folders and peripherals: known after it). */
export const collectionOf = (loc: Locator): string | undefined => (loc.kind === 'member' ? loc.collection : undefined);

function methodsOf(collection: string | undefined, link: string): readonly Method[] | undefined {
  // `link` comes from the path: only own entries count (`constructor` is no link).
  if (Object.hasOwn(STANDARD, link)) return STANDARD[link];
  const extra = collection && Object.hasOwn(EXTRA, collection) ? EXTRA[collection] : undefined;
  return extra && Object.hasOwn(extra, link) ? extra[link] : undefined;
}

/** Finds the object and checks that its link answers `method` (404 unknown link, 405 other method). */
export async function resolve(ctx: Ctx, loc: Locator, link: string, method: Method): Promise<StoredObject> {
  const o = await locate(ctx, loc);
  const methods = methodsOf(o.collection, link);
  if (!methods) throw notFound(`${o.collection} have no "${link}".`);
  if (!methods.includes(method)) throw onlyMethods(methods.join(', '));
  return o;
}

/** GET `<Href>/<link>`. */
export async function readLink(ctx: Ctx, loc: Locator, link: string): Promise<unknown> {
  const o = await resolve(ctx, loc, link, 'GET');
  const fromDoc = documentLink(o.doc, link, ctx.ns);
  if (fromDoc !== undefined) return fromDoc;
  switch (link) {
    // No images are stored yet. Connections and references come from the relationships hooks;
    // without them each is an empty array.
    case 'images':
      return [];
    case 'connections':
      return (await ctx.hooks.connections?.(ctx, o)) ?? [];
    case 'references':
      return (await ctx.hooks.references?.(ctx, o)) ?? [];
    case 'status':
      return statusOf(ctx, o);
    case 'cards':
      return listCards(ctx, o);
    default:
      throw notFound();
  }
}

/** An input's latest status (one GetItem); an InputStatusItem without fields until one is reported. */
async function statusOf(ctx: Ctx, input: StoredObject): Promise<unknown> {
  const status = await getObjectStatus(ctx.db, input.key);
  return status ? renderValue(status, ctx.ns) : { $type: typeTag(ctx.ns, STATUS_TYPE) };
}
