/** A person's card calls (`<person Href>/cards`) and the lookup of a person by card, on DynamoDB Local. */
import { beforeAll, describe, expect, it } from 'vitest';
import { claimOwner, getObject } from '#shared/db/objects-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createObject } from '#shared/db/object-writes.ts';
import { cardClaim } from '#shared/model/claims.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';
import { placementCache } from '#shared/objects/cursor-cache.ts';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

const NS = 'Gatehouse.Model';
const tag = (name: string) => `${NS}.${name}, ${NS}`;
const orig = (name: string) => `Original.Model.${name}, Original.Model`;
const KEY = /^[0-9a-f]{24}$/;

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let base: string;
let token: string;
let next = 700_000;
/** A card number no other test uses. */
const freshCard = () => next++;

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  base = `/api/f/${env.root.instance.key}/people`;
  token = env.root.tokens.Operator;
});

const card = (n: number | string, extra: Record<string, unknown> = {}) => ({
  EncodedCardNumber: n,
  DisplayCardNumber: String(n),
  ActiveOn: '2024-01-01T00:00:00Z',
  ExpiresOn: '2099-01-01T00:00:00Z',
  ...extra,
});
const person = (cards: unknown[], extra: Record<string, unknown> = {}) => ({
  $type: orig('PersonInfo'),
  GivenName: 'Ann',
  Surname: 'Lee',
  CardAssignments: cards,
  ...extra,
});
const newPerson = async (cards: unknown[], extra: Record<string, unknown> = {}, folder = base) => {
  const r = await env.api.post(folder, { token, body: person(cards, extra) });
  expect(r.status).toBe(201);
  return r.body;
};
const bycard = (query: Record<string, string | number>, folderKey = env.root.instance.key, tok = token) =>
  env.api.get(`/api/f/${folderKey}/people/bycard`, { token: tok, query });
const owner = (n: number | string, facility?: number | string) => claimOwner(t.db, cardClaim(env.root.instance.key, String(n), facility), true);

describe('card keys', () => {
  it('gives every card a stable Key on POST, and keeps the keys of the cards a PUT of the whole person keeps', async () => {
    const [a, b, c] = [freshCard(), freshCard(), freshCard()];
    const p = await newPerson([card(a), card(b, { FacilityCode: 7 })]);
    const [ka, kb] = p.CardAssignments.map((x: { Key: string }) => x.Key);
    expect([ka, kb].every((k: string) => KEY.test(k))).toBe(true);
    expect(ka).not.toBe(kb);
    // A client that drops the keys (an old client) keeps them through the number and facility code;
    // a sent key keeps its card even when the number changes; a new card gets a new key.
    const put = await env.api.put(p.Href, {
      token,
      body: { ...p, CardAssignments: [card(b, { FacilityCode: 7 }), { ...card(c), Key: ka }, card(freshCard())] },
    });
    expect(put.status).toBe(200);
    const keys = put.body.CardAssignments.map((x: { Key: string }) => x.Key);
    expect(keys.slice(0, 2)).toEqual([kb, ka]);
    expect(keys[2]).toMatch(KEY);
    expect([ka, kb]).not.toContain(keys[2]);
    // Every read shows the same keys: GET of the person, its cards, a search.
    expect((await env.api.get(p.Href, { token })).body.CardAssignments.map((x: { Key: string }) => x.Key)).toEqual(keys);
    expect((await env.api.get(`${p.Href}/cards`, { token })).body.map((x: { Key: string }) => x.Key)).toEqual(keys);
    const found = await env.api.post(`/api/f/${env.root.instance.key}/search`, {
      token,
      body: { 'CardAssignments.EncodedCardNumber': c },
    });
    expect(found.status).toBe(200);
    expect(found.body[0].CardAssignments.map((x: { Key: string }) => x.Key)).toEqual(keys);
    // Unchanged, keys and all: 204 and nothing written.
    const again = await env.api.put(p.Href, { token, body: put.body });
    expect(again.status).toBe(204);
  });

  it('gives a card a new key when it names a key the person does not have', async () => {
    const other = await newPerson([card(freshCard())]);
    const p = await newPerson([]);
    const r = await env.api.put(p.Href, { token, body: { ...p, CardAssignments: [{ ...card(freshCard()), Key: other.CardAssignments[0].Key }] } });
    expect(r.status).toBe(200);
    expect(r.body.CardAssignments[0].Key).toMatch(KEY);
    expect(r.body.CardAssignments[0].Key).not.toBe(other.CardAssignments[0].Key);
  });

  it('addresses the keyless cards of a person stored before cards had keys, and stores the same keys on its next write', async () => {
    const [a, b] = [freshCard(), freshCard()];
    const key = newKey();
    const legacy: StoredObject = {
      key,
      collection: 'people',
      type: 'PersonInfo',
      ...placeIn(env.root.instance),
      version: 1,
      doc: { $type: 'PersonInfo', GivenName: 'Old', CardAssignments: [{ $type: 'CardAssignmentInfo', ...card(a) }, { $type: 'CardAssignmentInfo', ...card(b) }] },
    };
    await createObject(t.db, legacy, [cardClaim(env.root.instance.key, String(a)), cardClaim(env.root.instance.key, String(b))]);
    const href = `${base}/${key}`;
    const listed = await env.api.get(`${href}/cards`, { token });
    expect(listed.status).toBe(200);
    const keys = listed.body.map((x: { Key: string }) => x.Key);
    expect(keys.every((k: string) => KEY.test(k))).toBe(true);
    expect((await env.api.get(`${href}/cards`, { token })).body.map((x: { Key: string }) => x.Key)).toEqual(keys);
    expect((await env.api.get(href, { token })).body.CardAssignments.map((x: { Key: string }) => x.Key)).toEqual(keys);
    // Removing the second card by its read key stores the first card's key as it read.
    expect((await env.api.del(`${href}/cards/${keys[1]}`, { token })).status).toBe(204);
    const stored = await getObject(t.db, key, true);
    expect((stored!.doc.CardAssignments as Array<{ Key: string }>).map((x) => x.Key)).toEqual([keys[0]]);
    expect(await owner(b)).toBeUndefined();
  });
});

describe('card calls', () => {
  it('lists, adds (201 with the stored card), replaces (200, 204 unchanged) and removes (204) a card, each one write of the person', async () => {
    const [a, b, c] = [freshCard(), freshCard(), freshCard()];
    const p = await newPerson([card(a)]);
    const cards = `${p.Href}/cards`;

    const listed = await env.api.get(cards, { token: env.root.tokens.ReadOnly });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual(p.CardAssignments);

    // Production clients send the CardAssignmentInfo without $type.
    const added = await env.api.post(cards, { token, body: card(b, { FacilityCode: 3, CardFormat: 'H10301', Key: 'ignored' }) });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ $type: tag('CardAssignmentInfo'), ...card(b, { FacilityCode: 3, CardFormat: 'H10301' }), Key: expect.stringMatching(KEY) });
    const key = added.body.Key as string;
    expect(await owner(b, 3)).toBe(p.Key);
    const afterAdd = (await env.api.get(p.Href, { token })).body;
    expect(afterAdd.ConcurrencyVersion).toBe(2);
    expect(afterAdd.CardAssignments[1]).toEqual(added.body);

    const changed = await env.api.put(`${cards}/${key}`, { token, body: { $type: orig('CardAssignmentInfo'), ...card(c, { FacilityCode: 3 }) } });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ $type: tag('CardAssignmentInfo'), ...card(c, { FacilityCode: 3 }), Key: key });
    expect(await owner(b, 3)).toBeUndefined();
    expect(await owner(c, 3)).toBe(p.Key);
    const unchanged = await env.api.put(`${cards}/${key}`, { token, body: card(c, { FacilityCode: 3 }) });
    expect([unchanged.status, unchanged.text]).toEqual([204, '']);
    expect((await env.api.get(p.Href, { token })).body.ConcurrencyVersion).toBe(3);

    expect((await env.api.del(`${cards}/${key}`, { token })).status).toBe(204);
    expect(await owner(c, 3)).toBeUndefined();
    const left = (await env.api.get(cards, { token })).body;
    expect(left.map((x: { Key: string }) => x.Key)).toEqual([p.CardAssignments[0].Key]);
  });

  it('answers 404 CardNotFound for an unknown card key, 405 for PUT of the list, and 404 for cards of other collections', async () => {
    const p = await newPerson([card(freshCard())]);
    const missing = newKey();
    const put = await env.api.put(`${p.Href}/cards/${missing}`, { token, body: card(freshCard()) });
    expect([put.status, put.body.Error]).toEqual([404, 'CardNotFound']);
    const del = await env.api.del(`${p.Href}/cards/${missing}`, { token });
    expect([del.status, del.body.Error]).toEqual([404, 'CardNotFound']);
    const putList = await env.api.put(`${p.Href}/cards`, { token, body: [card(freshCard())] });
    expect(putList.status).toBe(405);
    expect(putList.headers.allow).toBe('GET, POST');
    const door = (await env.api.post(`/api/f/${env.root.instance.key}/doors`, { token, body: { $type: 'DoorInfo', CommonName: 'd' } })).body;
    expect((await env.api.get(`${door.Href}/cards`, { token })).status).toBe(404);
    expect((await env.api.post(`${door.Href}/cards`, { token, body: card(freshCard()) })).status).toBe(404);
    expect((await env.api.get(`${base}/${missing}/cards`, { token })).status).toBe(404);
  });

  it('rejects bad cards with a field-named 400, a ReadOnly writer with 403, and another tenant with 403, writing nothing', async () => {
    const p = await newPerson([card(freshCard())]);
    const cards = `${p.Href}/cards`;
    const bad = await env.api.post(cards, { token, body: card(freshCard(), { ExpiresOn: 'soon' }) });
    expect([bad.status, bad.body.Error]).toEqual([400, 'ValidationFailed']);
    expect(bad.body.Message).toContain('ExpiresOn');
    const wrong = await env.api.post(cards, { token, body: { $type: orig('PersonInfo') } });
    expect([wrong.status, wrong.body.Error]).toEqual([400, 'WrongType']);
    const ro = await env.api.post(cards, { token: env.root.tokens.ReadOnly, body: card(freshCard()) });
    expect(ro.status).toBe(403);
    const other: Tenant = await seedTenant(t, env.deps);
    for (const call of [
      () => env.api.get(cards, { token: other.tokens.Administrator }),
      () => env.api.post(cards, { token: other.tokens.Administrator, body: card(freshCard()) }),
      () => env.api.put(`${cards}/${p.CardAssignments[0].Key}`, { token: other.tokens.Administrator, body: card(freshCard()) }),
      () => env.api.del(`${cards}/${p.CardAssignments[0].Key}`, { token: other.tokens.Administrator }),
    ]) {
      expect((await call()).status).toBe(403);
    }
    expect((await env.api.get(p.Href, { token })).body.ConcurrencyVersion).toBe(1);
  });

  it('holds the card limit', async () => {
    const p = await newPerson(Array.from({ length: 48 }, () => card(freshCard())));
    const over = await env.api.post(`${p.Href}/cards`, { token, body: card(freshCard()) });
    expect([over.status, over.body.Error]).toEqual([400, 'ValidationFailed']);
    expect(over.body.Message).toContain('48');
  });

  it('rejects a card another person holds (409 CardIsAlreadyAssigned) or this person holds, writing nothing', async () => {
    const [a, b] = [freshCard(), freshCard()];
    await newPerson([card(a, { FacilityCode: 1 })]);
    const p = await newPerson([card(b)]);
    const dup = await env.api.post(`${p.Href}/cards`, { token, body: card(a, { FacilityCode: 1 }) });
    expect([dup.status, dup.body.Error]).toEqual([409, 'CardIsAlreadyAssigned']);
    const byPut = await env.api.put(`${p.Href}/cards/${p.CardAssignments[0].Key}`, { token, body: card(a, { FacilityCode: 1 }) });
    expect([byPut.status, byPut.body.Error]).toEqual([409, 'CardIsAlreadyAssigned']);
    const own = await env.api.post(`${p.Href}/cards`, { token, body: card(b) });
    expect([own.status, own.body.Error]).toEqual([409, 'CardIsAlreadyAssigned']);
    const now = (await env.api.get(p.Href, { token })).body;
    expect([now.ConcurrencyVersion, now.CardAssignments]).toEqual([1, p.CardAssignments]);
    expect(await owner(b)).toBe(p.Key);
    // The same number under another facility code is another card.
    expect((await env.api.post(`${p.Href}/cards`, { token, body: card(a, { FacilityCode: 2 }) })).status).toBe(201);
  });

  it('lets exactly one of parallel adds of the same card win, and loses no parallel add of different cards', async () => {
    const c = freshCard();
    const people = await Promise.all(Array.from({ length: 6 }, () => newPerson([])));
    const adds = await Promise.all(people.map((p) => env.api.post(`${p.Href}/cards`, { token, body: card(c) })));
    expect(adds.filter((r) => r.status === 201)).toHaveLength(1);
    expect(adds.filter((r) => r.status === 409 && r.body.Error === 'CardIsAlreadyAssigned')).toHaveLength(5);
    const winner = people[adds.findIndex((r) => r.status === 201)];
    expect(await owner(c)).toBe(winner.Key);
    // Parallel adds to one person are retried on the fresh version: none is lost.
    const p = await newPerson([]);
    const numbers = Array.from({ length: 5 }, () => freshCard());
    const many = await Promise.all(numbers.map((n) => env.api.post(`${p.Href}/cards`, { token, body: card(n) })));
    expect(many.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const after = (await env.api.get(p.Href, { token })).body;
    expect(after.ConcurrencyVersion).toBe(6);
    expect(after.CardAssignments.map((x: { EncodedCardNumber: number }) => x.EncodedCardNumber).sort()).toEqual(numbers);
  });

  it('costs a GetItem and one TransactWriteItems per card write, and one GetItem per list', async () => {
    await env.api.get('/api', { token }); // warm the authenticator's status cache
    const p = await newPerson([card(freshCard())]);
    const { result: added, commands: add } = await commandsOf(t, () => env.api.post(`${p.Href}/cards`, { token, body: card(freshCard()) }));
    expect(added.status).toBe(201);
    expect(add).toEqual(['GetItem', 'TransactWriteItems']);
    const cardHref = `${p.Href}/cards/${added.body.Key}`;
    expect((await commandsOf(t, () => env.api.put(cardHref, { token, body: card(freshCard()) }))).commands).toEqual(['GetItem', 'TransactWriteItems']);
    expect((await commandsOf(t, () => env.api.get(`${p.Href}/cards`, { token }))).commands).toEqual(['GetItem']);
    expect((await commandsOf(t, () => env.api.del(cardHref, { token }))).commands).toEqual(['GetItem', 'TransactWriteItems']);
  });
});

describe('person by card', () => {
  it('finds the holder of an active card through the card index: one Query and one GetItem', async () => {
    const c = freshCard();
    const p = await newPerson([card(c, { FacilityCode: 9 })]);
    const { result: r, commands } = await commandsOf(t, () => bycard({ cardNumber: c }));
    expect(r.status).toBe(200);
    expect([r.body.Key, r.body.Href, r.body.$type]).toEqual([p.Key, p.Href, tag('PersonInfo')]);
    expect(r.body.CardAssignments).toEqual(p.CardAssignments);
    expect(commands).toEqual(['Query', 'GetItem']);
    expect((await bycard({ cardNumber: c, facilityCode: 9 })).body.Key).toBe(p.Key);
    expect((await bycard({ cardNumber: c, facilityCode: '9' }, undefined, env.root.tokens.ReadOnly)).body.Key).toBe(p.Key);
    const otherFacility = await bycard({ cardNumber: c, facilityCode: 8 });
    expect([otherFacility.status, otherFacility.body.Error]).toEqual([404, 'PersonNotFound']);
    const none = await bycard({ cardNumber: freshCard() });
    expect([none.status, none.body.Error]).toEqual([404, 'PersonNotFound']);
  });

  it('answers 404 for a card not active now: expired, not yet active, disabled, removed', async () => {
    const [expired, future, disabled, removed] = [freshCard(), freshCard(), freshCard(), freshCard()];
    const p = await newPerson([
      card(expired, { ExpiresOn: '2020-01-01T00:00:00Z' }),
      card(future, { ActiveOn: '2098-01-01T00:00:00Z' }),
      card(disabled, { IsDisabled: true }),
      card(removed, { ActiveOn: null, ExpiresOn: null }),
    ]);
    for (const n of [expired, future, disabled]) expect((await bycard({ cardNumber: n })).status).toBe(404);
    // Without dates a card is active.
    expect((await bycard({ cardNumber: removed })).body.Key).toBe(p.Key);
    expect((await env.api.del(`${p.Href}/cards/${p.CardAssignments[3].Key}`, { token })).status).toBe(204);
    expect((await bycard({ cardNumber: removed })).status).toBe(404);
  });

  it('keeps 64-bit card numbers exact (neighbouring numbers differ beyond 2^53)', async () => {
    const big = '9223372036854775807';
    const neighbour = '9223372036854775806';
    const r = await env.api.post(base, {
      token,
      body: `{"GivenName":"Big","CardAssignments":[{"EncodedCardNumber":${big},"FacilityCode":5}]}`,
      contentType: 'application/json',
    });
    expect(r.status).toBe(201);
    const found = await bycard({ cardNumber: big });
    expect(found.status).toBe(200);
    expect(found.body.Key).toBe(r.body.Key);
    expect(found.text).toContain(`"EncodedCardNumber":${big}`);
    expect((await bycard({ cardNumber: neighbour })).status).toBe(404);
    // The card calls keep it exact too.
    const listed = await env.api.get(`${r.body.Href}/cards`, { token });
    expect(listed.text).toContain(`"EncodedCardNumber":${big}`);
  });

  it('without a facility code: one active holder wins, several holders are 409 AmbiguousCard', async () => {
    const c = freshCard();
    const a = await newPerson([card(c, { FacilityCode: 1 })]);
    await newPerson([card(c, { FacilityCode: 2, ExpiresOn: '2020-01-01T00:00:00Z' })]);
    expect((await bycard({ cardNumber: c })).body.Key).toBe(a.Key);
    const b = await newPerson([card(c, { FacilityCode: 3 })]);
    const amb = await bycard({ cardNumber: c });
    expect([amb.status, amb.body.Error]).toEqual([409, 'AmbiguousCard']);
    expect((await bycard({ cardNumber: c, facilityCode: 3 })).body.Key).toBe(b.Key);
    expect((await bycard({ cardNumber: c, facilityCode: 1 })).body.Key).toBe(a.Key);
  });

  it('looks in the folder of the path and below it; a parent looks in a child instance; a sibling gets 403', async () => {
    const c = freshCard();
    const wing = (await env.api.post(`/api/f/${env.root.instance.key}/folders`, { token, body: { $type: 'FolderInfo', CommonName: 'wing' } })).body;
    const other = (await env.api.post(`/api/f/${env.root.instance.key}/folders`, { token, body: { $type: 'FolderInfo', CommonName: 'other' } })).body;
    const p = await newPerson([card(c)], {}, `/api/f/${wing.Key}/people`);
    expect((await bycard({ cardNumber: c })).body.Key).toBe(p.Key);
    expect((await bycard({ cardNumber: c }, wing.Key)).body.Key).toBe(p.Key);
    expect((await bycard({ cardNumber: c }, other.Key)).status).toBe(404);

    const child = await seedTenant(t, env.deps, { parent: env.root.instance });
    const sibling = await seedTenant(t, env.deps, { parent: env.root.instance });
    const d = freshCard();
    const q = (await env.api.post(`/api/f/${child.instance.key}/people`, { token: child.tokens.Operator, body: person([card(d)]) })).body;
    // The child's cards are its own: the parent's card index does not hold them.
    expect((await bycard({ cardNumber: d })).status).toBe(404);
    placementCache.clear();
    expect((await bycard({ cardNumber: d }, child.instance.key)).body.Key).toBe(q.Key);
    expect((await bycard({ cardNumber: d }, child.instance.key, child.tokens.ReadOnly)).body.Key).toBe(q.Key);
    const fromSibling = await bycard({ cardNumber: d }, child.instance.key, sibling.tokens.Administrator);
    expect(fromSibling.status).toBe(403);
    const childUp = await bycard({ cardNumber: c }, env.root.instance.key, child.tokens.Administrator);
    expect(childUp.status).toBe(403);
    expect((await bycard({ cardNumber: d }, newKey(), child.tokens.Administrator)).status).toBe(403);
  });

  it('rejects a missing or oversized cardNumber with 400 InvalidParameter', async () => {
    const missing = await env.api.get(`${base}/bycard`, { token });
    expect([missing.status, missing.body.Error]).toEqual([400, 'InvalidParameter']);
    const long = await bycard({ cardNumber: '1'.repeat(300) });
    expect([long.status, long.body.Error]).toEqual([400, 'InvalidParameter']);
  });
});
