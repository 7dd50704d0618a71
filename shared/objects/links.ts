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
 * Every call is one GetItem (the object, with its scope) plus the work of the link.
 */
import { documentLink, renderElements } from '../model/render.ts';
import { notFound } from '../errors.ts';
import { locate, type Locator } from './access.ts';
import { requireAnyWrite, requireWrite } from './collection.ts';
import type { Ctx } from './context.ts';
import { onlyMethods, notImplemented } from './errors.ts';
import { putInputStatus, statusOf } from './input-status.ts';
import { addCard, listCards, removeCard, replaceCard } from './cards.ts';
import { addNote, removeNote } from './notes.ts';
import { behaviourOf } from './registry.ts';
import type { StoredNote } from '../model/schemas/index.ts';
import { collectionByName } from '../model/collections.ts';
import type { StoredObject } from '../db/objects-repo.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

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
const collectionOf = (loc: Locator): string | undefined => (loc.kind === 'member' ? loc.collection : undefined);

function methodsOf(collection: string | undefined, link: string): readonly Method[] | undefined {
  // `link` comes from the path: only own entries count (`constructor` is no link).
  if (Object.hasOwn(STANDARD, link)) return STANDARD[link];
  const extra = collection && Object.hasOwn(EXTRA, collection) ? EXTRA[collection] : undefined;
  return extra && Object.hasOwn(extra, link) ? extra[link] : undefined;
}

/** Finds the object and checks that its link answers `method` (404 unknown link, 405 other method). */
async function resolve(ctx: Ctx, loc: Locator, link: string, method: Method): Promise<StoredObject> {
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

export type PostResult = { readonly created: unknown } | { readonly noContent: true };

/** POST `<Href>/<link>`: add a note, add a card, take ownership. */
export async function postLink(ctx: Ctx, loc: Locator, link: string, body: unknown): Promise<PostResult> {
  const known = collectionOf(loc);
  if (known === 'people' && link === 'cards') return { created: await addCard(ctx, loc, body) };
  if (link === 'notes') {
    const note: StoredNote = await addNote(ctx, loc, body);
    return { created: renderElements('Notes', [note], ctx.ns)[0] };
  }
  if (link === 'takeownership') {
    requireAnyWrite(ctx);
    if (known) requireWrite(ctx, behaviourOf(known));
    const o = await resolve(ctx, loc, link, 'POST');
    requireWrite(ctx, behaviourOf(o.collection));
    return { noContent: true };
  }
  await resolve(ctx, loc, link, 'POST');
  throw notFound();
}

/** DELETE `<Href>/<link>/<linkKey>`: remove a note, remove a card. */
export async function deleteLinkItem(ctx: Ctx, loc: Locator, link: string, linkKey: string): Promise<void> {
  if (link === 'notes') return removeNote(ctx, loc, linkKey);
  if (collectionOf(loc) === 'people' && link === 'cards') return removeCard(ctx, loc, linkKey);
  await resolve(ctx, loc, link, 'DELETE');
  throw notFound();
}

/** PUT `<Href>/<link>`: an input's status. Other PUT links of the route table are not implemented here. */
export async function putLink(ctx: Ctx, loc: Locator, link: string, body: unknown): Promise<void> {
  const known = collectionOf(loc);
  if (known === 'inputs' && link === 'status') return putInputStatus(ctx, loc, body);
  if (known && collectionByName(known)?.putLinks?.includes(link)) throw notImplemented(`PUT ${known}/<key>/${link}`);
  await resolve(ctx, loc, link, 'PUT');
  throw notFound();
}

/** PUT `<Href>/<link>/<linkKey>` (collections listing the link in `putLinkItems`): replace a card. */
export async function putLinkItem(ctx: Ctx, loc: Locator, link: string, linkKey: string, body: unknown): Promise<{ item: unknown; changed: boolean }> {
  if (collectionOf(loc) === 'people' && link === 'cards') {
    const r = await replaceCard(ctx, loc, linkKey, body);
    return { item: r.card, changed: r.changed };
  }
  await resolve(ctx, loc, link, 'PUT');
  throw notFound();
}
