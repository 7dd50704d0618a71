import { describe, expect, it } from 'vitest';
import { assignCardKeys } from '#shared/model/card-keys.ts';
import { cardIdentity, cardsWithKeys, derivedCardKey, docWithCardKeys, isActiveCard } from '#shared/model/card-assignments.ts';

const PERSON = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const K1 = '111111111111111111111111';
const K2 = '222222222222222222222222';
const KEY = /^[0-9a-f]{24}$/;

describe('card identity', () => {
  it('is the facility code and the number as text, 64-bit numbers digit for digit', () => {
    expect(cardIdentity({ EncodedCardNumber: 12, FacilityCode: 5 })).toBe('5:12');
    expect(cardIdentity({ EncodedCardNumber: '12' })).toBe(':12');
    expect(cardIdentity({ EncodedCardNumber: 9223372036854775807n, FacilityCode: '7' })).toBe('7:9223372036854775807');
    expect(cardIdentity({ EncodedCardNumber: null })).toBeUndefined();
    expect(cardIdentity('x')).toBeUndefined();
  });
});

describe('card keys', () => {
  it('reads keyless stored cards with keys derived from the person and the position, and leaves keyed ones alone', () => {
    const doc = { CardAssignments: [{ EncodedCardNumber: 1, Key: K1 }, { EncodedCardNumber: 2 }] };
    const cards = cardsWithKeys(PERSON, doc);
    expect(cards.map((c) => c.Key)).toEqual([K1, derivedCardKey(PERSON, 1)]);
    expect(cards[1]!.Key).toMatch(KEY);
    expect(cardsWithKeys(PERSON, doc)).toEqual(cards);
    expect(derivedCardKey(PERSON, 1)).not.toBe(derivedCardKey(PERSON, 0));
    const keyed = { CardAssignments: [{ EncodedCardNumber: 1, Key: K1 }] };
    expect(docWithCardKeys(PERSON, keyed)).toBe(keyed);
  });

  it('keeps a stored key for the card that names it, else for the card with its number and facility code, else makes one', () => {
    const stored = [
      { EncodedCardNumber: 1, FacilityCode: 5, Key: K1 },
      { EncodedCardNumber: 2, Key: K2 },
    ];
    const out = assignCardKeys(
      [{ EncodedCardNumber: 2 }, { EncodedCardNumber: 9, Key: K1 }, { EncodedCardNumber: 1, FacilityCode: 5 }, { EncodedCardNumber: 3, Key: 'bbbbbbbbbbbbbbbbbbbbbbbb' }],
      stored,
    ) as Array<{ Key: string }>;
    expect(out[0]!.Key).toBe(K2);
    // K1 goes to the card naming it, even though another card has K1's number.
    expect(out[1]!.Key).toBe(K1);
    expect(out[2]!.Key).toMatch(KEY);
    expect([K1, K2]).not.toContain(out[2]!.Key);
    // A key the person does not have is replaced.
    expect(out[3]!.Key).toMatch(KEY);
    expect(out[3]!.Key).not.toBe('bbbbbbbbbbbbbbbbbbbbbbbb');
  });

  it('gives each stored key to one card only', () => {
    const out = assignCardKeys([{ EncodedCardNumber: 1, Key: K1 }, { EncodedCardNumber: 1, Key: K1 }], [{ EncodedCardNumber: 1, Key: K1 }]) as Array<{ Key: string }>;
    expect(out[0]!.Key).toBe(K1);
    expect(out[1]!.Key).not.toBe(K1);
  });
});

describe('active cards', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  it('is active between ActiveOn and ExpiresOn, either open, unless disabled', () => {
    expect(isActiveCard({}, now)).toBe(true);
    expect(isActiveCard({ ActiveOn: '2026-06-01T00:00:00Z' }, now)).toBe(true);
    expect(isActiveCard({ ExpiresOn: '2026-06-01T00:00:00Z' }, now)).toBe(false);
    expect(isActiveCard({ ExpiresOn: '2026-06-01T00:00:00.001Z' }, now)).toBe(true);
    expect(isActiveCard({ ActiveOn: '2026-06-01T00:00:01Z' }, now)).toBe(false);
    expect(isActiveCard({ ExpiresOn: '2026-05-31T23:59:59Z' }, now)).toBe(false);
    expect(isActiveCard({ ActiveOn: null, ExpiresOn: null }, now)).toBe(true);
    expect(isActiveCard({ IsDisabled: true }, now)).toBe(false);
    expect(isActiveCard({ IsDisabled: false }, now)).toBe(true);
  });
});
