/**
 * A person's card assignments as the card calls see them: each card has a stable `Key` (a
 * 24-hex key like an object's), how a card is told apart from another (its number with its
 * facility code), and whether it is active. Pure functions, no I/O.
 *
 * Keys are stored in the card (`CardAssignments[i].Key`), set by the server on every write of
 * the person. A person stored before cards had keys has keyless cards until its next write; until
 * then each such card reads with a key derived from the person's key and the card's position, and
 * that write stores the same key (the stored document does not change between reads, so the
 * derived key cannot either). A keyless card is therefore addressable by the card calls at once.
 */
import { createHash } from 'node:crypto';

export type Card = Record<string, unknown>;

export const isCard = (v: unknown): v is Card => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A card key as the server makes them (24 lower-case hex digits). */
const CARD_KEY = /^[0-9a-f]{24}$/;
export const isCardKey = (v: unknown): v is string => typeof v === 'string' && CARD_KEY.test(v);

/** A card number or facility code that was sent: a 64-bit card number above 2^53 is a `bigint`. */
export const presentCardValue = (v: unknown): v is string | number | bigint =>
  (typeof v === 'string' && v !== '') || typeof v === 'number' || typeof v === 'bigint';

/** The largest card number: the field's card numbers are signed 64-bit integers, 0 and up. */
export const MAX_CARD_NUMBER = 2n ** 63n - 1n;

const DECIMAL = /^[+-]?\d+$/;

/**
 * Whether a card number that was sent is in 0..2^63-1. A number above 2^53 arrives as a `bigint`
 * (shared/json.ts) and is compared exactly; one written as decimal text is the same number and
 * held to the same range (text in other forms, such as hex encodings, is kept as sent). A number
 * out of range would be stored as sent but read back rounded wherever it passes through a double.
 */
export function cardNumberInRange(v: string | number | bigint): boolean {
  if (typeof v === 'string') {
    if (!DECIMAL.test(v)) return true;
    const n = BigInt(v);
    return n >= 0n && n <= MAX_CARD_NUMBER;
  }
  if (typeof v === 'bigint') return v >= 0n && v <= MAX_CARD_NUMBER;
  return Number.isSafeInteger(v) && v >= 0;
}

/**
 * What makes a card unique in its instance: `<facility code>:<number>` as decimal text (the claim
 * value), or undefined for a card without a number. Never through a JS number: a `bigint` card
 * number keeps all its digits.
 */
export function cardIdentity(card: unknown): string | undefined {
  if (!isCard(card) || !presentCardValue(card.EncodedCardNumber)) return undefined;
  const facility = presentCardValue(card.FacilityCode) ? String(card.FacilityCode) : '';
  return `${facility}:${String(card.EncodedCardNumber)}`;
}

/** The key a keyless stored card reads with (see the module comment). */
export function derivedCardKey(personKey: string, index: number): string {
  return createHash('sha256').update(`card\u0000${personKey}\u0000${index}`).digest('hex').slice(0, 24);
}

/** The cards of a stored person document, each with its `Key` (stored, or derived when it has none). */
export function cardsWithKeys(personKey: string, doc: Readonly<Record<string, unknown>>): Card[] {
  const list = Array.isArray(doc.CardAssignments) ? doc.CardAssignments : [];
  return list.map((c, i) => (isCard(c) && !isCardKey(c.Key) ? { ...c, Key: derivedCardKey(personKey, i) } : c) as Card);
}

/** The document with every card keyed (unchanged when every card already has its key). */
export function docWithCardKeys(personKey: string, doc: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const list = doc.CardAssignments;
  if (!Array.isArray(list) || list.every((c) => !isCard(c) || isCardKey(c.Key))) return doc;
  return { ...doc, CardAssignments: cardsWithKeys(personKey, doc) };
}

/**
 * True when a card lets its holder in at `now`: not disabled (`IsDisabled`, the vendor flag field
 * clients send), `ActiveOn` reached (included) and `ExpiresOn` not yet (excluded), as the access
 * decision engine reads them (either may be absent).
 */
export function isActiveCard(card: Card, now: Date): boolean {
  if (card.IsDisabled === true) return false;
  const t = now.getTime();
  const from = typeof card.ActiveOn === 'string' ? Date.parse(card.ActiveOn) : Number.NaN;
  const until = typeof card.ExpiresOn === 'string' ? Date.parse(card.ExpiresOn) : Number.NaN;
  if (!Number.isNaN(from) && from > t) return false;
  if (!Number.isNaN(until) && until <= t) return false;
  return true;
}
