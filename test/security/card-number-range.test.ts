/**
 * Issue #34, finding 9 (b): card numbers above 2^63-1 were accepted, stored as sent and read back
 * rounded in some answers (1e+26), so a reader could be shown another card's number. A card
 * number is 0..2^63-1 in every write that carries one (a person's CardAssignments in POST and
 * PUT of the person, POST and PUT of `<person>/cards`), as a JSON number or as decimal text;
 * anything else is 400 ValidationFailed with nothing written, and 2^63-1 comes back digit for digit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi } from '../support/tokens.ts';

const MAX = '9223372036854775807';
/** Card numbers as they appear in the JSON text of a request (numbers, then strings). */
const OUT_OF_RANGE = ['9223372036854775808', '18446744073709551615', '1e26', '100000000000000000000000000', '-1', '"9223372036854775808"', '"-1"'];

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let people: string;
let token: string;

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  people = `/api/f/${env.root.instance.key}/people`;
  token = env.root.tokens.Operator;
});

afterAll(() => t?.db.raw.destroy());

/** A body with the card number written into the JSON text as is (a JS number would round it). */
const cardJson = (number: string, facility = 9) => `{"EncodedCardNumber":${number},"DisplayCardNumber":"x","FacilityCode":${facility}}`;
const personJson = (number: string, extra = '') => `{"$type":"PersonInfo","GivenName":"Card","Surname":"Range"${extra},"CardAssignments":[${cardJson(number)}]}`;

function expectRefused(r: { status: number; body: any }, what: string) {
  expect(r.status, what).toBe(400);
  expect(r.body, what).toEqual({ Error: 'ValidationFailed', Message: expect.any(String) });
}

describe('card numbers', () => {
  it('keeps 2^63-1 digit for digit in every answer', async () => {
    const created = await env.api.post(people, { token, body: personJson(MAX) });
    expect(created.status).toBe(201);
    expect(created.text).toContain(`"EncodedCardNumber":${MAX}`);
    const href = created.body.Href as string;
    expect((await env.api.get(href, { token })).text).toContain(`"EncodedCardNumber":${MAX}`);
    expect((await env.api.get(`${href}/cards`, { token })).text).toContain(`"EncodedCardNumber":${MAX}`);
    const found = await env.api.get(`${people}/bycard`, { token, query: { cardNumber: MAX } });
    expect(found.status).toBe(200);
    expect(found.text).toContain(`"EncodedCardNumber":${MAX}`);
    expect((await env.api.get(people, { token })).text).toContain(`"EncodedCardNumber":${MAX}`);
    const searched = await env.api.post(`/api/f/${env.root.instance.key}/search`, { token, body: `{"CardAssignments.EncodedCardNumber":${MAX}}` });
    expect(searched.status).toBe(200);
    expect(searched.body).toHaveLength(1);
    expect(searched.text).toContain(`"EncodedCardNumber":${MAX}`);
  });

  it('refuses a number outside 0..2^63-1 in a person written whole, with nothing written', async () => {
    for (const n of OUT_OF_RANGE) expectRefused(await env.api.post(people, { token, body: personJson(n) }), `POST person ${n}`);

    const created = await env.api.post(people, { token, body: personJson('42') });
    expect(created.status).toBe(201);
    const href = created.body.Href as string;
    for (const n of OUT_OF_RANGE) {
      const body = `{"$type":"PersonInfo","GivenName":"Card","Surname":"Range","ConcurrencyVersion":${created.body.ConcurrencyVersion},"CardAssignments":[${cardJson(n)}]}`;
      expectRefused(await env.api.put(href, { token, body }), `PUT person ${n}`);
    }
    const after = await env.api.get(href, { token });
    expect(after.body.ConcurrencyVersion).toBe(created.body.ConcurrencyVersion);
    expect(after.body.CardAssignments.map((c: { EncodedCardNumber: unknown }) => c.EncodedCardNumber)).toEqual([42]);
  });

  it('refuses a number outside 0..2^63-1 in the card calls, with nothing written', async () => {
    const created = await env.api.post(people, { token, body: personJson('43') });
    expect(created.status).toBe(201);
    const href = created.body.Href as string;
    const cardKey = created.body.CardAssignments[0].Key as string;
    for (const n of OUT_OF_RANGE) {
      expectRefused(await env.api.post(`${href}/cards`, { token, body: cardJson(n) }), `POST card ${n}`);
      expectRefused(await env.api.put(`${href}/cards/${cardKey}`, { token, body: cardJson(n) }), `PUT card ${n}`);
    }
    const cards = await env.api.get(`${href}/cards`, { token });
    expect(cards.body.map((c: { EncodedCardNumber: unknown }) => c.EncodedCardNumber)).toEqual([43]);

    // The largest one is a card like any other, as a number or as its decimal text.
    const added = await env.api.post(`${href}/cards`, { token, body: cardJson(`"${MAX}"`, 10) });
    expect(added.status).toBe(201);
    expect(added.text).toContain(`"EncodedCardNumber":"${MAX}"`);
  });
});
