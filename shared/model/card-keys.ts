/**
 * The keys a write of the whole person gives its cards (see cards.ts for what a card key is):
 * apart from the reads of cards.ts because only writes assign keys, and a function serving reads
 * loads the write side with its first write.
 */
import { cardIdentity, isCard, isCardKey, type Card } from './cards.ts';
import { newKey } from './placement.ts';

/**
 * Gives the cards sent in a write of the whole person their keys, keeping the key of each card the
 * person keeps: a sent card takes the stored card whose `Key` it carries; else the stored card with
 * its number and facility code; else a new key. A `Key` the person does not have (copied from
 * another person, or a card removed meanwhile) is not an error: the server owns card keys, as it
 * owns object keys, and that card gets a new one. Each stored key is given to one card at most.
 */
export function assignCardKeys(sent: readonly unknown[], stored: readonly Card[]): unknown[] {
  const byKey = new Map<string, Card>();
  const byIdentity = new Map<string, Card[]>();
  for (const c of stored) {
    if (!isCardKey(c.Key)) continue;
    byKey.set(c.Key, c);
    const id = cardIdentity(c);
    if (id !== undefined) byIdentity.set(id, [...(byIdentity.get(id) ?? []), c]);
  }
  const used = new Set<string>();
  const take = (c: Card | undefined): string | undefined => {
    if (!c || used.has(c.Key as string)) return undefined;
    used.add(c.Key as string);
    return c.Key as string;
  };
  // Cards naming a stored key first, so a card matched by number cannot take a key another claims.
  const keys: Array<string | undefined> = sent.map((c) => (isCard(c) && isCardKey(c.Key) ? take(byKey.get(c.Key)) : undefined));
  return sent.map((c, i) => {
    if (!isCard(c)) return c;
    let key = keys[i];
    if (key === undefined) {
      const id = cardIdentity(c);
      const candidates = id === undefined ? [] : (byIdentity.get(id) ?? []);
      for (const s of candidates) {
        key = take(s);
        if (key !== undefined) break;
      }
    }
    return { ...c, Key: key ?? newKey() };
  });
}

/**
 * The card a write stores, given the card it replaces (`stored`, matched by key; none for a new
 * card). `CurrentUseCount` and `LastUsed` are the server's (it counts the uses of a recorded
 * grant): a write keeps the stored ones, except that `CurrentUseCount: 0` re-arms the card, and a
 * new card starts unused. `PinCode` is never read back, so a client writing back what it read
 * sends none: a write without `PinCode` keeps the stored PIN, `PinCode: null` removes it.
 */
export function withServerCardFields(sent: Card, stored: Card | undefined): Card {
  const { CurrentUseCount, LastUsed: _lastUsed, PinCode, ...card } = sent;
  const out: Card = { ...card };
  if (CurrentUseCount === 0) out.CurrentUseCount = 0;
  else if (stored?.CurrentUseCount !== undefined) out.CurrentUseCount = stored.CurrentUseCount;
  if (stored?.LastUsed !== undefined) out.LastUsed = stored.LastUsed;
  const pin = 'PinCode' in sent ? PinCode : stored?.PinCode;
  if (pin !== undefined && pin !== null) out.PinCode = pin;
  return out;
}

/** {@link withServerCardFields} for the cards of a write of the whole person, keyed by {@link assignCardKeys}. */
export function withServerFieldsOfCards(sent: readonly unknown[], stored: readonly Card[]): unknown[] {
  const byKey = new Map(stored.filter((c) => isCardKey(c.Key)).map((c) => [c.Key as string, c]));
  return sent.map((c) => (isCard(c) ? withServerCardFields(c, byKey.get(c.Key as string)) : c));
}
