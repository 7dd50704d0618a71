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
 *
 * The reads are here; the writes are in `card-writes.ts`, loaded with the first of them.
 */
import { getObject, getObjects, ownInstance } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { cardHolders } from '../db/search-repo.ts';
import { badRequest, conflict, notFound, type ApiError } from '../errors.ts';
import { cardsWithKeys, isActiveCard, presentCardValue } from '../model/card-assignments.ts';
import { renderElements } from '../model/object-render.ts';
import { LIMITS } from '../model/limits.ts';
import { createTarget } from './tenant-scope.ts';
import type { Ctx } from './domain-context.ts';
import type { Doc } from './validate.ts';

export const cardNotFound = (): ApiError => notFound('The person has no card with that key.', 'CardNotFound');
const personNotFound = (): ApiError => notFound('No person in this folder holds an active card with that number.', 'PersonNotFound');
const ambiguousCard = (): ApiError =>
  conflict('AmbiguousCard', 'Several people hold an active card with that number under different facility codes; send facilityCode.');

/** GET `<person>/cards` of the person as read (scope-checked by the caller), each card with its key. */
export function listCards(ctx: Ctx, person: StoredObject): unknown[] {
  return renderElements('CardAssignments', cardsWithKeys(person.key, person.doc), ctx.ns);
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
