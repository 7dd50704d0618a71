/**
 * People and their cards. A card is its `EncodedCardNumber` together with its `FacilityCode`
 * (when given), unique within the person's instance: each card of a person is a claim item written
 * in the same transaction as the person, so a card already assigned to another person (disabled
 * cards included) fails the whole write (409 CardIsAlreadyAssigned, nothing saved), two parallel
 * writers of the same card have exactly one winner, and removing a card (or the person) releases
 * its claim in the same transaction. A person with k cards is one TransactWriteItems of 1 + k items
 * (a replace: 1 + added + removed, so at most 48 cards a person keep it within 100 items).
 */
import { ownInstance, type Claim, type StoredObject } from '../db/objects-repo.ts';
import { cardClaim } from '../model/claims.ts';
import type { Override } from './behaviour.ts';
import { cardIsAlreadyAssigned } from './errors.ts';
import { isPlainObject } from './validate.ts';

/** A card number or facility code that was sent: a 64-bit card number above 2^53 is a `bigint`. */
const present = (v: unknown): v is string | number | bigint => (typeof v === 'string' && v !== '') || typeof v === 'number' || typeof v === 'bigint';

/** The card claims of a person (each card once, even if listed twice). */
export function cardClaims(o: StoredObject): Claim[] {
  const cards = Array.isArray(o.doc.CardAssignments) ? o.doc.CardAssignments : [];
  const claims = new Map<string, Claim>();
  for (const card of cards) {
    if (!isPlainObject(card) || !present(card.EncodedCardNumber)) continue;
    const facility = present(card.FacilityCode) ? card.FacilityCode : undefined;
    const c = cardClaim(ownInstance(o), String(card.EncodedCardNumber), facility);
    claims.set(c.value, c);
  }
  return [...claims.values()];
}

/** `5:1234` → `1234 (facility code 5)`. */
function describeCard(value: string): string {
  const at = value.indexOf(':');
  const facility = value.slice(0, at);
  const number = value.slice(at + 1);
  return facility ? `${number} (facility code ${facility})` : number;
}

export const peopleBehaviour: Override = (base) => ({
  ...base,
  claims: (o) => [...base.claims(o), ...cardClaims(o)],
  claimError: (c) => (c.kind === 'card' ? cardIsAlreadyAssigned(describeCard(c.value)) : base.claimError(c)),
});
