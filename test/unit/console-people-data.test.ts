/**
 * The console People pages' conversions: a scheduled level's window read out of the link's
 * `MetaDataBson` (checked against the `bson` package's own encoding, as the server writes it), a
 * card's state, the date-time inputs' round trip, and card numbers beyond 2^53 sent digit for digit.
 */
import { serialize } from 'bson';
import { describe, expect, it } from 'vitest';
import { cardNumberText, cardNumberValue, cardState, isoOfLocal, localInput, windowHolds, windowOfLink } from '../../console/src/pages/people-data.ts';

const meta = (doc: Record<string, unknown>) => Buffer.from(serialize(doc)).toString('base64');

describe('windowOfLink', () => {
  it('reads dates, nulls and ISO strings of the BSON document, as base64 or as bytes', () => {
    const activeOn = new Date('2026-03-01T00:00:00.000Z');
    const expiresOn = new Date('2026-03-31T23:59:59.000Z');
    expect(windowOfLink({ MetaDataBson: meta({ ActiveOn: activeOn, ExpiresOn: expiresOn }) })).toEqual({ activeOn: activeOn.toISOString(), expiresOn: expiresOn.toISOString() });
    expect(windowOfLink({ MetaDataBson: meta({ ActiveOn: null, ExpiresOn: expiresOn }) })).toEqual({ activeOn: null, expiresOn: expiresOn.toISOString() });
    expect(windowOfLink({ MetaDataBson: meta({ ActiveOn: '2026-03-01T00:00:00Z' }) })).toEqual({ activeOn: '2026-03-01T00:00:00Z', expiresOn: null });
    expect(windowOfLink({ MetaDataBson: [...serialize({ ActiveOn: activeOn, ExpiresOn: null })] })).toEqual({ activeOn: activeOn.toISOString(), expiresOn: null });
    // A date before 1970 is a negative count of milliseconds.
    const old = new Date('1960-01-01T00:00:00.000Z');
    expect(windowOfLink({ MetaDataBson: meta({ ActiveOn: old }) }).activeOn).toBe(old.toISOString());
  });

  it('reads no link data, or data it cannot read, as an open window', () => {
    expect(windowOfLink({})).toEqual({ activeOn: null, expiresOn: null });
    expect(windowOfLink({ MetaDataBson: null })).toEqual({ activeOn: null, expiresOn: null });
    expect(windowOfLink({ MetaDataBson: '%%%not base64' })).toEqual({ activeOn: null, expiresOn: null });
  });

  it('tells whether now lies in a window, from included to until excluded', () => {
    const now = Date.parse('2026-03-10T00:00:00Z');
    expect(windowHolds({ activeOn: null, expiresOn: null }, now)).toBe(true);
    expect(windowHolds({ activeOn: '2026-03-10T00:00:00.000Z', expiresOn: null }, now)).toBe(true);
    expect(windowHolds({ activeOn: null, expiresOn: '2026-03-10T00:00:00.000Z' }, now)).toBe(false);
    expect(windowHolds({ activeOn: '2026-04-01T00:00:00.000Z', expiresOn: null }, now)).toBe(false);
  });
});

describe('cards', () => {
  it('names a card state as the decision engine reads it', () => {
    const now = Date.parse('2026-03-10T00:00:00Z');
    expect(cardState({}, now)).toBe('Active');
    expect(cardState({ IsDisabled: true, ActiveOn: '2027-01-01T00:00:00Z' }, now)).toBe('Disabled');
    expect(cardState({ ActiveOn: '2026-03-10T00:00:01Z' }, now)).toBe('Not yet active');
    expect(cardState({ ExpiresOn: '2026-03-10T00:00:00Z' }, now)).toBe('Expired');
  });

  it('sends a number up to 2^53 as a number and a larger one digit for digit', () => {
    expect(cardNumberValue('1234')).toBe(1234);
    const big = '9223372036854775807';
    const value = cardNumberValue(big);
    expect(cardNumberText(value)).toBe(big);
    // As JSON: the raw digits where the runtime has JSON.rawJSON, else the digits as text (never rounded).
    expect(JSON.stringify({ n: value })).toMatch(new RegExp(`^\\{"n":"?${big}"?\\}$`));
  });
});

describe('date-time inputs', () => {
  it('round-trips an instant through the local input value (to the minute)', () => {
    const iso = '2026-07-04T15:30:00.000Z';
    expect(isoOfLocal(localInput(iso))).toBe(iso);
    expect(localInput(null)).toBe('');
    expect(isoOfLocal('')).toBeNull();
  });
});
