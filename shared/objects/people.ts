/**
 * People and their cards. A card is its `EncodedCardNumber` together with its `FacilityCode`
 * (when given), unique within the person's instance: each card of a person is a claim item written
 * in the same transaction as the person, so a card already assigned to another person (disabled
 * cards included) fails the whole write (409 CardIsAlreadyAssigned, nothing saved), two parallel
 * writers of the same card have exactly one winner, and removing a card (or the person) releases
 * its claim in the same transaction. A person with k cards is one TransactWriteItems of 1 + k items
 * (a replace: 1 + added + removed, so at most 48 cards a person keep it within 100 items).
 *
 * Every card gets a stable `Key` when the person is saved (see `model/card-assignments.ts`): a write of the
 * whole person keeps the key of each card it keeps. The card calls (`<person Href>/cards`) are in
 * `card-reads.ts` (reads) and `card-writes.ts`.
 */
import { ownInstance } from '../db/objects-repo.ts';
import type { Claim, StoredObject } from '../model/stored-object.ts';
import { assignCardKeys, withServerFieldsOfCards } from '../model/card-keys.ts';
import { cardsWithKeys, presentCardValue as present } from '../model/card-assignments.ts';
import { cardClaim, scimExternalIdClaim, scimUserNameClaim } from '../model/claims.ts';
import { scimRecordOf } from '../model/scim-record.ts';
import type { Override } from './behaviour.ts';
import { cardIsAlreadyAssigned, scimExternalIdTaken, scimUserNameTaken } from './object-errors.ts';
import { isPlainObject } from './validate.ts';

/** The card claims of a person (each card once, even if listed twice). */
function cardClaims(o: StoredObject): Claim[] {
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

/**
 * The SCIM identity claims of a person provisioned by a directory (`Scim.UserName`,
 * `Scim.ExternalId`: see model/scim-record.ts), unique within its instance, written in the
 * person's own transaction like its cards, so two directories racing for one user name have one winner.
 */
function scimClaims(o: StoredObject): Claim[] {
  const r = scimRecordOf(o.doc);
  return [
    ...(r.UserName !== undefined ? [scimUserNameClaim(ownInstance(o), r.UserName)] : []),
    ...(r.ExternalId !== undefined ? [scimExternalIdClaim(ownInstance(o), r.ExternalId)] : []),
  ];
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
  claims: (o) => [...base.claims(o), ...cardClaims(o), ...scimClaims(o)],
  complete: (ctx, input, current) => {
    const doc = base.complete(ctx, input, current);
    if (!Array.isArray(doc.CardAssignments)) return doc;
    const stored = current ? cardsWithKeys(current.key, current.doc) : [];
    return { ...doc, CardAssignments: withServerFieldsOfCards(assignCardKeys(doc.CardAssignments, stored), stored) };
  },
  claimError: (c) =>
    c.kind === 'card'
      ? cardIsAlreadyAssigned(describeCard(c.value))
      : c.kind === 'scim-user'
        ? scimUserNameTaken(c.value)
        : c.kind === 'scim-external'
          ? scimExternalIdTaken(c.value)
          : base.claimError(c),
});
