/** People: polymorphic addresses, card assignments saved with the person, card uniqueness per instance. */
import { beforeAll, describe, expect, it } from 'vitest';
import { placementCache } from '#shared/objects/cursor-cache.ts';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { seedTenant, setupApi, type Tenant } from '../support/tokens.ts';

const NS = 'Gatehouse.Model';
const tag = (name: string) => `${NS}.${name}, ${NS}`;
const orig = (name: string) => `Original.Model.${name}, Original.Model`;

let t: TestDb;
let env: Awaited<ReturnType<typeof setupApi>>;
let base: string;
let token: string;
let next = 100_000;
/** A card number no other test uses. */
const freshCard = () => next++;

beforeAll(async () => {
  t = await createTestDb();
  env = await setupApi(t);
  base = `/api/f/${env.root.instance.key}/people`;
  token = env.root.tokens.Operator;
});

const card = (n: number, extra: Record<string, unknown> = {}) => ({
  $type: orig('CardAssignmentInfo'),
  EncodedCardNumber: n,
  DisplayCardNumber: String(n),
  ActiveOn: '2024-01-01T00:00:00Z',
  ExpiresOn: '2030-01-01T00:00:00Z',
  ...extra,
});
const person = (cards: unknown[], extra: Record<string, unknown> = {}) => ({
  $type: orig('PersonInfo'),
  GivenName: 'Ann',
  Surname: 'Lee',
  CardAssignments: cards,
  ...extra,
});

const measure = <T>(fn: () => Promise<T>) => commandsOf(t, fn);

describe('people', () => {
  it('saves polymorphic addresses selected by $type, and card assignments, with the person', async () => {
    const c = freshCard();
    const r = await env.api.post(base, {
      token,
      body: person([card(c, { FacilityCode: 12, CardFormat: 'H10301', IsDisabled: false })], {
        Addresses: [
          { $type: orig('MailingAddressInfo'), Street: '1 Main St', City: 'Ottawa', Province: 'ON', PostalCode: 'K1A', Country: 'CA', Type: 'Home' },
          { $type: orig('EmailAddressInfo'), MailTo: 'ann@example.com', Type: 'Work' },
          { $type: orig('PhoneInfo'), Number: '6135550100', Type: 'Mobile' },
        ],
      }),
    });
    expect(r.status).toBe(201);
    expect(r.body.Addresses.map((a: { $type: string }) => a.$type)).toEqual([tag('MailingAddressInfo'), tag('EmailAddressInfo'), tag('PhoneInfo')]);
    expect(r.body.Addresses[0].City).toBe('Ottawa');
    expect(r.body.CardAssignments).toEqual([
      {
        $type: tag('CardAssignmentInfo'),
        EncodedCardNumber: c,
        DisplayCardNumber: String(c),
        ActiveOn: '2024-01-01T00:00:00Z',
        ExpiresOn: '2030-01-01T00:00:00Z',
        FacilityCode: 12,
        CardFormat: 'H10301',
        IsDisabled: false,
        // The server gives each card a stable key (see objects-cards.test.ts).
        Key: expect.stringMatching(/^[0-9a-f]{24}$/),
      },
    ]);
    const got = await env.api.get(r.body.Href, { token });
    expect(got.body.CardAssignments).toEqual(r.body.CardAssignments);
  });

  it('rejects an address whose type neither $type nor its fields tell, and badly typed card fields, naming the field', async () => {
    const inferred = await env.api.post(base, { token, body: person([], { Addresses: [{ City: 'x' }, { MailTo: 'a@example.com' }] }) });
    expect(inferred.status).toBe(201);
    expect(inferred.body.Addresses.map((a: { $type: string }) => a.$type)).toEqual([tag('MailingAddressInfo'), tag('EmailAddressInfo')]);
    const noType = await env.api.post(base, { token, body: person([], { Addresses: [{ City: 'x' }, { Type: 'Home' }] }) });
    expect([noType.status, noType.body.Error]).toEqual([400, 'MissingType']);
    expect(noType.body.Message).toContain('Addresses[1]');
    const unknown = await env.api.post(base, { token, body: person([], { Addresses: [{ $type: 'PigeonInfo' }] }) });
    expect(unknown.status).toBe(400);
    const badDate = await env.api.post(base, { token, body: person([card(freshCard(), { ExpiresOn: 'tomorrow' })]) });
    expect(badDate.status).toBe(400);
    expect(badDate.body.Message).toContain('CardAssignments[0].ExpiresOn');
    const badNumber = await env.api.post(base, { token, body: person([card(freshCard(), { EncodedCardNumber: true })]) });
    expect(badNumber.body.Message).toContain('CardAssignments[0].EncodedCardNumber');
    const tooMany = await env.api.post(base, { token, body: person(Array.from({ length: 49 }, () => card(freshCard()))) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.Message).toContain('CardAssignments');
  });
});

describe('card uniqueness', () => {
  it('rejects a card assigned to another person of the instance (409 CardIsAlreadyAssigned), saving nothing', async () => {
    const c = freshCard();
    const other = freshCard();
    expect((await env.api.post(base, { token, body: person([card(c)]) })).status).toBe(201);
    const dup = await env.api.post(base, { token, body: person([card(other), card(c)], { GivenName: 'Bob' }) });
    expect(dup.status).toBe(409);
    expect(dup.body.Error).toBe('CardIsAlreadyAssigned');
    expect(dup.body.Message).toContain(String(c));
    // Nothing of that request was saved: its other card is still free.
    expect((await env.api.post(base, { token, body: person([card(other)]) })).status).toBe(201);
  });

  it('counts disabled cards, and tells cards apart by facility code', async () => {
    const c = freshCard();
    await env.api.post(base, { token, body: person([card(c, { FacilityCode: 1, IsDisabled: true })]) });
    expect((await env.api.post(base, { token, body: person([card(c, { FacilityCode: 1 })]) })).status).toBe(409);
    expect((await env.api.post(base, { token, body: person([card(c, { FacilityCode: 2 })]) })).status).toBe(201);
    expect((await env.api.post(base, { token, body: person([card(c)]) })).status).toBe(201);
    // The number as a string is the same card.
    expect((await env.api.post(base, { token, body: person([card(c, { EncodedCardNumber: String(c) })]) })).status).toBe(409);
  });

  it('rejects a PUT that assigns another person\'s card, leaving the person as it was', async () => {
    const c1 = freshCard();
    const c2 = freshCard();
    await env.api.post(base, { token, body: person([card(c1)]) });
    const p = (await env.api.post(base, { token, body: person([card(c2)]) })).body;
    const r = await env.api.put(p.Href, { token, body: { ...p, GivenName: 'Changed', CardAssignments: [card(c2), card(c1)] } });
    expect(r.status).toBe(409);
    expect(r.body.Error).toBe('CardIsAlreadyAssigned');
    const now = (await env.api.get(p.Href, { token })).body;
    expect(now.GivenName).toBe('Ann');
    expect(now.ConcurrencyVersion).toBe(1);
  });

  it('frees a card removed from a person, and the cards of a deleted person', async () => {
    const c1 = freshCard();
    const c2 = freshCard();
    const p = (await env.api.post(base, { token, body: person([card(c1), card(c2)]) })).body;
    const put = await env.api.put(p.Href, { token, body: { ...p, CardAssignments: [card(c2)] } });
    expect(put.status).toBe(200);
    expect((await env.api.post(base, { token, body: person([card(c1)]) })).status).toBe(201);
    expect((await env.api.post(base, { token, body: person([card(c2)]) })).status).toBe(409);
    expect((await env.api.del(p.Href, { token })).status).toBe(204);
    expect((await env.api.post(base, { token, body: person([card(c2)]) })).status).toBe(201);
  });

  it('lets a person keep its own cards across PUTs, and list a card twice', async () => {
    const c = freshCard();
    const p = (await env.api.post(base, { token, body: person([card(c), card(c)]) })).body;
    expect(p.CardAssignments).toHaveLength(2);
    const r = await env.api.put(p.Href, { token, body: { ...p, Surname: 'Li' } });
    expect(r.status).toBe(200);
  });

  it('is per instance: another instance may assign the same number', async () => {
    const c = freshCard();
    await env.api.post(base, { token, body: person([card(c)]) });
    const other: Tenant = await seedTenant(t, env.deps);
    const r = await env.api.post(`/api/f/${other.instance.key}/people`, { token: other.tokens.Operator, body: person([card(c)]) });
    expect(r.status).toBe(201);
  });

  it('applies across the folders of an instance', async () => {
    const c = freshCard();
    const f = (await env.api.post(`/api/f/${env.root.instance.key}/folders`, { token, body: { $type: 'FolderInfo', CommonName: 'wing' } })).body;
    await env.api.post(base, { token, body: person([card(c)]) });
    const r = await env.api.post(`/api/f/${f.Key}/people`, { token, body: person([card(c)]) });
    expect(r.status).toBe(409);
  });

  it('lets exactly one of parallel requests assigning the same card win', async () => {
    const c = freshCard();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => env.api.post(base, { token, body: person([card(c)], { GivenName: `p${i}` }) })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.Error).toBe('CardIsAlreadyAssigned');
    // Same race through PUTs of existing people.
    const d = freshCard();
    const people = await Promise.all(Array.from({ length: 6 }, () => env.api.post(base, { token, body: person([]) })));
    const puts = await Promise.all(people.map((p) => env.api.put(p.body.Href, { token, body: { ...p.body, CardAssignments: [card(d)] } })));
    expect(puts.filter((r) => r.status === 200)).toHaveLength(1);
    expect(puts.filter((r) => r.status === 409)).toHaveLength(5);
  });
});

describe('cost', () => {
  it('creates and updates a person with k cards in one TransactWriteItems', async () => {
    await env.api.get('/api', { token }); // warm the authenticator's status cache
    const k = 10;
    const cards = Array.from({ length: k }, () => card(freshCard()));
    placementCache.clear();
    const { result: cold, commands: c0 } = await measure(() => env.api.post(base, { token, body: person([]) }));
    expect(cold.status).toBe(201);
    // The first create in a folder reads it (placement and scope); the execution environment keeps its placement.
    expect(c0).toEqual(['GetItem', 'TransactWriteItems']);
    const { result: created, commands: c1 } = await measure(() => env.api.post(base, { token, body: person(cards) }));
    expect(created.status).toBe(201);
    // Then one transaction writes the person and its k claims.
    expect(c1).toEqual(['TransactWriteItems']);
    const more = [...cards.slice(3), ...Array.from({ length: 5 }, () => card(freshCard()))];
    const { result: updated, commands: c2 } = await measure(() =>
      env.api.put(created.body.Href, { token, body: { ...created.body, CardAssignments: more } }),
    );
    expect(updated.status).toBe(200);
    expect(c2).toEqual(['GetItem', 'TransactWriteItems']);
    const { commands: c3 } = await measure(() => env.api.get(created.body.Href, { token }));
    expect(c3).toEqual(['GetItem']);
    const { commands: c4 } = await measure(() => env.api.del(created.body.Href, { token }));
    // The delete itself, then the relationships hook's Queries of connections from and to it.
    expect(c4).toEqual(['GetItem', 'TransactWriteItems', 'Query', 'Query']);
  });
});
