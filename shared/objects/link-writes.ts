/**
 * The calls on an object's sub-resources that change something (POST, PUT and DELETE of
 * `<Href>/<link>`; the table is in `links.ts`). Loaded with the first of them: a cold start that
 * serves a read never reads this code.
 */
import { renderElements } from '../model/object-render.ts';
import { notFound } from '../errors.ts';
import type { Locator } from './tenant-scope.ts';
import { requireAnyWrite, requireWrite } from './collection.ts';
import type { Ctx } from './domain-context.ts';
import { notImplemented } from './object-errors.ts';
import { putInputStatus } from './input-status.ts';
import { addCard, removeCard, replaceCard } from './card-writes.ts';
import { collectionOf, resolve } from './links.ts';
import { addNote, removeNote } from './notes.ts';
import { behaviourOf } from './registry.ts';
import type { StoredNote } from '../model/schemas/index.ts';
import { collectionByName } from '../model/collections.ts';

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
