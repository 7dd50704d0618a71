/**
 * The card calls of a person (`<person Href>/cards`) and the lookup of a person by card.
 *
 * | call                                   | answer                              | requests                                   |
 * | -------------------------------------- | ----------------------------------- | ------------------------------------------ |
 * | GET `<person>/cards`                   | the person's cards, each with `Key` | one GetItem                                |
 * | POST `<person>/cards`                  | 201, the stored card                | GetItem + one TransactWriteItems           |
 * | PUT `<person>/cards/<card key>`        | 200 the card, 204 when unchanged    | GetItem + one TransactWriteItems (none when unchanged) |
 * | DELETE `<person>/cards/<card key>`     | 204                                 | GetItem + one TransactWriteItems           |
 * | GET `<folder>/people/bycard?cardNumber=` | the person holding the active card | Query on GSI3 + GetItem (BatchGetItem for several holders) |
 *
 * A card write is a write of the person (see `editAt`): the person's version is bumped, its card
 * claims are added and released in the same transaction, a card another person holds is 409
 * CardIsAlreadyAssigned with nothing written, and a concurrent writer makes it read again.
 */
import { getObject, getObjects, ownInstance, type StoredObject } from '../db/objects-repo.ts';
import { cardHolders } from '../db/search-repo.ts';
import { badRequest, conflict, notFound, type ApiError } from '../errors.ts';
import { cardIdentity, cardsWithKeys, isActiveCard, presentCardValue } from '../model/cards.ts';
import { newKey } from '../model/placement.ts';
import { renderElement, renderElements } from '../model/render.ts';
import { LIMITS } from '../model/limits.ts';
import { createTarget, type Locator } from './access.ts';
import { editAt } from './collection.ts';
import type { Ctx } from './context.ts';
import { invalidField } from './errors.ts';
import { canonicalJson, parseElementBody, type Doc } from './validate.ts';

const CARD_TYPE = 'CardAssignmentInfo';

export const cardNotFound = (): ApiError => notFound('The person has no card with that key.', 'CardNotFound');
export const personNotFound = (): ApiError => notFound('No person in this folder holds an active card with that number.', 'PersonNotFound');
const ambiguousCard = (): ApiError =>
  conflict('AmbiguousCard', 'Several people hold an active card with that number under different facility codes; send facilityCode.');

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

/** GET `<person>/cards` of the person as read (scope-checked by the caller), each card with its key. */
export function listCards(ctx: Ctx, person: StoredObject): unknown[] {
  return renderElements('CardAssignments', cardsWithKeys(person.key, person.doc), ctx.ns);
}

/** POST `<person>/cards`: adds a card with a new key; answers the stored card. */
export async function addCard(ctx: Ctx, loc: Locator, body: unknown): Promise<unknown> {
  const fields = await parseCard(body);
  const { result } = await editAt(ctx, loc, (cur) => {
    const cards = cardsWithKeys(cur.key, cur.doc);
    if (cards.length >= LIMITS.cards) throw invalidField('CardAssignments', `a person holds at most ${LIMITS.cards} cards`);
    const card: Doc = { $type: CARD_TYPE, ...fields, Key: newKey() };
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
    const card: Doc = { $type: CARD_TYPE, ...fields, Key: cardKey };
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

/** Whether `card` is the card number (and facility code, when given) looked up. */
function isCard(card: Doc, number: string, facility: string | undefined): boolean {
  if (!presentCardValue(card.EncodedCardNumber) || String(card.EncodedCardNumber) !== number) return false;
  return facility === undefined || (presentCardValue(card.FacilityCode) ? String(card.FacilityCode) : '') === facility;
}

/**
 * The person holding an active card (see {@link isActiveCard}) with `number` (and `facility`, when
 * given) in the folder a path names or below it. Card numbers are unique per instance, so the
 * lookup reads the card index of the folder's instance; child instances are not searched (their
 * cards are unique in themselves, not with the parent's). Numbers are compared as text, never
 * through a JS number (64-bit card numbers stay exact).
 *
 * Without a facility code several people may hold the number under different codes: when more
 * than one of them holds it active, the answer is 409 AmbiguousCard, never an arbitrary one of
 * them (a door would let the wrong person in).
 */
export async function personByCard(ctx: Ctx, folderKey: string, number: string, facility: string | undefined): Promise<StoredObject> {
  if (number === '' || number.length > LIMITS.code) {
    throw badRequest('InvalidParameter', `Query parameter cardNumber must be a card number of 1 to ${LIMITS.code} characters.`);
  }
  if (facility !== undefined && facility.length > LIMITS.code) {
    throw badRequest('InvalidParameter', `Query parameter facilityCode must be at most ${LIMITS.code} characters.`);
  }
  // The path's folder decides the instance (403 outside the caller's scope); a folder this
  // execution environment read in the last minute is not read again.
  const instanceKey = folderKey === ctx.principal.instanceKey ? folderKey : ownInstance((await createTarget(ctx, folderKey, undefined)).folder);
  const wanted = facility === undefined ? undefined : `${facility}:${number}`;
  const owners = [...new Set((await cardHolders(ctx.db, instanceKey, number)).filter((h) => wanted === undefined || h.card === wanted).map((h) => h.owner))];
  if (owners.length === 0) throw personNotFound();
  const people = owners.length === 1 ? [await getObject(ctx.db, owners[0]!)].filter((o) => o !== undefined) : await getObjects(ctx.db, owners);
  // The index is eventually consistent: the person's own document decides.
  const holders = people.filter(
    (p) =>
      p.collection === 'people' &&
      (p.folder === folderKey || p.path.includes(folderKey)) &&
      cardsWithKeys(p.key, p.doc).some((c) => isCard(c, number, facility) && isActiveCard(c, ctx.now)),
  );
  if (holders.length > 1) throw ambiguousCard();
  const holder = holders[0];
  if (!holder) throw personNotFound();
  return holder;
}
