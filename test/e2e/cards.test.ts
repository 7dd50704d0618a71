/**
 * A person's card calls and the lookup by card, over HTTP against the local runtime, as field
 * clients send them: bodies without `$type`, `Content-Type: application/json` on every call, and
 * 64-bit card numbers kept exact in bodies and in the query string.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { fieldClient } from '../support/field-client.ts';
import { adminToken } from '../support/runtime.ts';

const url = inject('url');
const admin = inject('admin');
const KEY = /^[0-9a-f]{24}$/;

let token: string;
let root: string;

const call = fieldClient(url, () => token);

/** A card number no other run uses (the runtime's data directory outlives a test file). */
const freshNumber = (): number => Number.parseInt(randomBytes(5).toString('hex'), 16);
const bycard = (query: Record<string, string | number>) => call('GET', `/api/f/${root}/people/bycard?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`);

beforeAll(async () => {
  token = await adminToken(url, admin);
  root = admin.instanceKey;
});

describe('card calls over HTTP', () => {
  it('adds, lists, replaces, looks up and removes a card of a person; a PUT of the whole person keeps the keys', async () => {
    const [first, second, third] = [freshNumber(), freshNumber(), freshNumber()];
    const created = await call('POST', `/api/f/${root}/people`, {
      GivenName: 'Grace',
      Surname: 'Hopper',
      CardAssignments: [{ EncodedCardNumber: first, FacilityCode: 21, ActiveOn: '2024-01-01T00:00:00Z' }],
    });
    expect(created.status).toBe(201);
    const p = created.body;
    const firstKey = p.CardAssignments[0].Key as string;
    expect(firstKey).toMatch(KEY);

    const added = await call('POST', `${p.Href}/cards`, { EncodedCardNumber: second, FacilityCode: 21, DisplayCardNumber: 'B' });
    expect(added.status).toBe(201);
    expect(added.body.Key).toMatch(KEY);
    expect(added.body.$type).toMatch(/\.CardAssignmentInfo, /);
    const listed = await call('GET', `${p.Href}/cards`);
    expect([listed.status, listed.body.map((c: { Key: string }) => c.Key)]).toEqual([200, [firstKey, added.body.Key]]);

    const cardHref = `${p.Href}/cards/${added.body.Key}`;
    const replaced = await call('PUT', cardHref, { EncodedCardNumber: third, FacilityCode: 21, DisplayCardNumber: 'C' });
    expect([replaced.status, replaced.body.Key, replaced.body.EncodedCardNumber]).toEqual([200, added.body.Key, third]);
    const same = await call('PUT', cardHref, { EncodedCardNumber: third, FacilityCode: 21, DisplayCardNumber: 'C' });
    expect([same.status, same.text]).toEqual([204, '']);

    const found = await bycard({ cardNumber: third, facilityCode: 21 });
    expect([found.status, found.body.Key]).toEqual([200, p.Key]);
    expect((await bycard({ cardNumber: second })).status).toBe(404);

    // A PUT of the whole person as read, without $type and with the keys dropped, keeps them.
    const read = (await call('GET', p.Href)).body;
    const { $type: _t, ...untyped } = read;
    const put = await call('PUT', p.Href, { ...untyped, Surname: 'Murray', CardAssignments: read.CardAssignments.map(({ Key: _k, ...c }: Record<string, unknown>) => c) });
    expect(put.status).toBe(200);
    expect(put.body.CardAssignments.map((c: { Key: string }) => c.Key)).toEqual([firstKey, added.body.Key]);

    expect((await call('DELETE', cardHref)).status).toBe(204);
    const gone = await bycard({ cardNumber: third });
    expect([gone.status, gone.body.Error]).toEqual([404, 'PersonNotFound']);
    const unknown = await call('DELETE', cardHref);
    expect([unknown.status, unknown.body.Error]).toEqual([404, 'CardNotFound']);
  });

  it('rejects a card another person holds with 409 CardIsAlreadyAssigned', async () => {
    const n = freshNumber();
    expect((await call('POST', `/api/f/${root}/people`, { GivenName: 'A', CardAssignments: [{ EncodedCardNumber: n }] })).status).toBe(201);
    const b = (await call('POST', `/api/f/${root}/people`, { GivenName: 'B' })).body;
    const dup = await call('POST', `${b.Href}/cards`, { EncodedCardNumber: n });
    expect([dup.status, dup.body.Error]).toEqual([409, 'CardIsAlreadyAssigned']);
    expect((await call('GET', `${b.Href}/cards`)).body).toEqual([]);
  });

  it('finds the holder of a 64-bit card number sent in the query string, exactly', async () => {
    // 2^63 - 1 - a random offset: beyond 2^53, so a double would round it onto its neighbours.
    const big = (2n ** 63n - 1n - BigInt(Number.parseInt(randomBytes(3).toString('hex'), 16))).toString();
    const p = await call('POST', `/api/f/${root}/people`, undefined, `{"GivenName":"Big","CardAssignments":[]}`);
    const added = await call('POST', `${p.body.Href}/cards`, undefined, `{"EncodedCardNumber":${big},"ExpiresOn":"2099-01-01T00:00:00Z"}`);
    expect(added.status).toBe(201);
    expect(added.text).toContain(`"EncodedCardNumber":${big}`);
    const found = await bycard({ cardNumber: big });
    expect([found.status, found.body.Key]).toEqual([200, p.body.Key]);
    expect(found.text).toContain(`"EncodedCardNumber":${big}`);
    expect((await bycard({ cardNumber: (BigInt(big) - 1n).toString() })).status).toBe(404);
  });
});
