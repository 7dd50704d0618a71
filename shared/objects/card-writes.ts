/**
 * The card writes of a person (POST, PUT and DELETE of `<person Href>/cards`; the table is in
 * `cards.ts`), loaded with the first of them.
 */
import { conflict } from '../errors.ts';
import { withServerCardFields } from '../model/card-keys.ts';
import { cardIdentity, cardsWithKeys } from '../model/cards.ts';
import { newKey } from '../model/placement.ts';
import { renderElement } from '../model/render.ts';
import { LIMITS } from '../model/limits.ts';
import type { Locator } from './access.ts';
import { cardNotFound } from './cards.ts';
import { editAt } from './collection.ts';
import type { Ctx } from './context.ts';
import { invalidField } from './errors.ts';
import { canonicalJson, parseElementBody, type Doc } from './validate.ts';

const CARD_TYPE = 'CardAssignmentInfo';

const render = (ctx: Ctx, card: Doc): unknown => renderElement(CARD_TYPE, card, ctx.ns);

/** A CardAssignmentInfo body (no `$type`: read as one); the `Key` is the server's, so a sent one is dropped. */
async function parseCard(body: unknown): Promise<Doc> {
  const { Key: _key, ...fields } = await parseElementBody(body, CARD_TYPE);
  return fields;
}

/** `5:1234` → `1234 (facility code 5)`. */
function describe(identity: string): string {
  const at = identity.indexOf(':');
  return at > 0 ? `${identity.slice(at + 1)} (facility code ${identity.slice(0, at)})` : identity.slice(at + 1);
}

/** 409 when `card` is already among the person's `others` (the claim would not catch it: the person owns it). */
function refuseDuplicate(card: Doc, others: readonly Doc[]): void {
  const id = cardIdentity(card);
  if (id !== undefined && others.some((c) => cardIdentity(c) === id)) {
    throw conflict('CardIsAlreadyAssigned', `Card ${describe(id)} is already assigned to this person.`);
  }
}

/** POST `<person>/cards`: adds a card with a new key; answers the stored card. */
export async function addCard(ctx: Ctx, loc: Locator, body: unknown): Promise<unknown> {
  const fields = await parseCard(body);
  const { result } = await editAt(ctx, loc, (cur) => {
    const cards = cardsWithKeys(cur.key, cur.doc);
    if (cards.length >= LIMITS.cards) throw invalidField('CardAssignments', `a person holds at most ${LIMITS.cards} cards`);
    const card: Doc = withServerCardFields({ $type: CARD_TYPE, ...fields, Key: newKey() }, undefined);
    refuseDuplicate(card, cards);
    return { doc: { ...cur.doc, CardAssignments: [...cards, card] }, result: card };
  });
  return render(ctx, result);
}

/** PUT `<person>/cards/<card key>`: replaces the card, keeping its key. */
export async function replaceCard(ctx: Ctx, loc: Locator, cardKey: string, body: unknown): Promise<{ card: unknown; changed: boolean }> {
  const fields = await parseCard(body);
  const { changed, result } = await editAt(ctx, loc, (cur) => {
    const cards = cardsWithKeys(cur.key, cur.doc);
    const at = cards.findIndex((c) => c.Key === cardKey);
    if (at < 0) throw cardNotFound();
    const card: Doc = withServerCardFields({ $type: CARD_TYPE, ...fields, Key: cardKey }, cards[at]);
    if (canonicalJson(card) === canonicalJson(cards[at])) return { doc: undefined, result: card };
    refuseDuplicate(
      card,
      cards.filter((_, i) => i !== at),
    );
    return { doc: { ...cur.doc, CardAssignments: cards.map((c, i) => (i === at ? card : c)) }, result: card };
  });
  return { card: render(ctx, result), changed };
}

/** DELETE `<person>/cards/<card key>`: removes the card and releases its number. */
export async function removeCard(ctx: Ctx, loc: Locator, cardKey: string): Promise<void> {
  await editAt(ctx, loc, (cur) => {
    const cards = cardsWithKeys(cur.key, cur.doc);
    if (!cards.some((c) => c.Key === cardKey)) throw cardNotFound();
    return { doc: { ...cur.doc, CardAssignments: cards.filter((c) => c.Key !== cardKey) }, result: undefined };
  });
}
