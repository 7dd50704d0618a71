/**
 * The typed client (`clients/typescript`, `@gatehouse/client`) against the local runtime: a whole
 * integrator's flow through it (login, a person with a card, an access level connected, an event
 * published and read back, people paged through, typed errors), and its token renewal under
 * parallel calls — one refresh grant however many calls wait, so the rotating refresh token is
 * never reused and the login is never revoked.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { GatehouseClient, GatehouseError, type FetchLike, type PasswordLogin } from '../../clients/typescript/src/index.ts';
import { OpenApiValidator } from '../support/openapi-validator.ts';

const url = inject('url');
const admin = inject('admin');
const validator = new OpenApiValidator();

/** The runtime's fetch, with every response the client receives checked against the document. */
const checkedFetch: FetchLike = async (request) => {
  const response = await fetch(request);
  const text = await response.clone().text();
  validator.check({ method: request.method, path: new URL(request.url).pathname, status: response.status, contentType: response.headers.get('content-type') ?? undefined, text });
  return response;
};

const unique = () => randomBytes(4).toString('hex');

/** A fetch that passes every request to the runtime and records the token grants and the requests sent. */
function recordingFetch(): { fetch: FetchLike; grants: string[]; sent: Array<{ method: string; path: string; status: number }> } {
  const grants: string[] = [];
  const sent: Array<{ method: string; path: string; status: number }> = [];
  return {
    grants,
    sent,
    fetch: async (request) => {
      const target = new URL(request.url);
      if (target.pathname === '/token') grants.push(new URLSearchParams(await request.clone().text()).get('grant_type') ?? '');
      const response = await checkedFetch(request);
      sent.push({ method: request.method, path: `${target.pathname}${target.search}`, status: response.status });
      return response;
    },
  };
}

const credentials: PasswordLogin = {
  baseUrl: url,
  fetch: checkedFetch,
  instance: admin.instanceName,
  username: admin.userName,
  password: admin.password,
  clientId: admin.clientId,
  clientSecret: admin.clientSecret,
};

/** What `fn` rejects with, which must be a GatehouseError. */
async function gatehouseError(fn: () => Promise<unknown>): Promise<GatehouseError> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatehouseError);
  return err as GatehouseError;
}

describe('the typed client', () => {
  afterAll(() => {
    const { validated, mismatches } = validator.report();
    const total = Object.values(validated).reduce((a, b) => a + b, 0);
    console.info(`[e2e/typed-client] ${total} responses validated against docs/openapi.json, by operation:`, validated);
    expect(mismatches).toEqual([]);
  });

  it('runs an integrator\'s whole flow: login, a person with a card, an access level, an event published and read back, people paged', async () => {
    const gh = await GatehouseClient.login(credentials);
    expect(gh.instanceKey).toBe(admin.instanceKey);
    const instance = await gh.GET('/api');
    expect(instance.Key).toBe(admin.instanceKey);

    // A folder of this test's own, so paging sees only what this test wrote.
    const folder = await gh.POST('/api/f/{folderKey}/folders', { params: { path: { folderKey: gh.instanceKey } }, body: { CommonName: `Client flow ${unique()}` } });
    const folderKey = folder.Key;
    const inFolder = { params: { path: { folderKey } } };

    const cardNumber = randomInt(10_000_000, 2 ** 40);
    const ada = await gh.POST('/api/f/{folderKey}/people', {
      ...inFolder,
      body: { CommonName: `Ada ${unique()}`, GivenName: 'Ada', Surname: 'Lovelace', CardAssignments: [{ EncodedCardNumber: cardNumber, FacilityCode: 21 }] },
    });
    expect(ada.InFolderKey).toBe(folderKey);
    expect(ada.CardAssignments?.[0]).toMatchObject({ EncodedCardNumber: cardNumber, FacilityCode: 21, Key: expect.stringMatching(/^[0-9a-f]{24}$/) });
    const adaPath = { params: { path: { folderKey, key: ada.Key } } };

    const level = await gh.POST('/api/f/{folderKey}/accesslevels', { ...inFolder, body: { CommonName: `Front doors ${unique()}` } });
    await gh.POST('/api/f/{folderKey}/people/{key}/connections/{relation}', {
      params: { path: { folderKey, key: ada.Key, relation: 'AccessLevel' }, query: { relatedKey: level.Key } },
    });
    const levels = await gh.GET('/api/f/{folderKey}/people/{key}/connections/{relation}', { params: { path: { folderKey, key: ada.Key, relation: 'AccessLevel' } } });
    expect(levels.map((l) => l.Key)).toEqual([level.Key]);

    const app = await gh.POST('/api/f/{folderKey}/apps', { ...inFolder, body: { CommonName: `Badge reader app ${unique()}` } });
    const nickname = `Granted-${unique()}`;
    const type = await gh.PUT('/api/f/{folderKey}/apps/{key}/eventtypes', {
      params: { path: { folderKey, key: app.Key } },
      body: { CommonName: 'Access granted', Priority: 3, MessageTemplateShort: 'Granted to {Name}', Monikers: [{ Namespace: 'ClientFlow', Nickname: nickname }] },
    });
    expect(type.Key).toMatch(/^[0-9a-f]{24}$/);
    const published = await gh.POST('/api/f/{folderKey}/eventmessagesink', {
      ...inFolder,
      body: {
        OccurredOn: new Date().toISOString(),
        AppKey: app.Key,
        EventTypeMoniker: { Namespace: 'ClientFlow', Nickname: nickname },
        RelatedObjects: [{ LinkedObjectKey: ada.Key, Relation: 'Name', CommonName: ada.CommonName }],
      },
    });
    expect(published).toMatchObject({ EventTypeKey: type.Key, AppKey: app.Key });
    const event = await gh.GET('/api/f/{folderKey}/events/{key}', { params: { path: { folderKey, key: published!.Key } } });
    expect(event).toMatchObject({ Key: published!.Key, EventTypeKey: type.Key, MessageShort: `Granted to ${ada.CommonName}` });
    // Ada's events: the one published, beside the audit trail's (her creation, her new connection).
    const adasEvents = [];
    for await (const e of gh.list('events', folderKey, { query: { forKeys: [ada.Key] } })) adasEvents.push(e);
    expect(adasEvents.filter((e) => e.AppKey === app.Key).map((e) => e.Key)).toEqual([published!.Key]);

    // Seven more people: with pageSize 3 that is pages of 3, 3 and 2, the short one the last.
    const others = await Promise.all(Array.from({ length: 7 }, (_, i) => gh.POST('/api/f/{folderKey}/people', { ...inFolder, body: { CommonName: `Person ${i} ${unique()}` } })));
    const rec = recordingFetch();
    const reader = GatehouseClient.resume({ ...credentials, fetch: rec.fetch, tokens: (await GatehouseClient.login(credentials)).tokens });
    const paged: string[] = [];
    for await (const person of reader.list('people', folderKey, { pageSize: 3 })) paged.push(person.Key);
    expect(paged.sort()).toEqual([ada.Key, ...others.map((p) => p.Key)].sort());
    expect(rec.sent.map((s) => s.path)).toEqual([0, 1, 2].map((page) => `/api/f/${folderKey}/people?page=${page}&pageSize=3`));
    // Breaking out of the loop stops reading.
    for await (const person of reader.list('people', folderKey, { pageSize: 3 })) if (person) break;
    expect(rec.sent).toHaveLength(4);

    // Typed errors carry the spec's status and code.
    const missing = await gatehouseError(() => gh.GET('/api/f/{folderKey}/people/{key}', { params: { path: { folderKey, key: '0123456789abcdef01234567' } } }));
    expect(missing).toMatchObject({ status: 404, code: 'NotFound' });
    const taken = await gatehouseError(() => gh.POST('/api/f/{folderKey}/people', { ...inFolder, body: { CommonName: 'Copy', CardAssignments: [{ EncodedCardNumber: cardNumber, FacilityCode: 21 }] } }));
    expect(taken).toMatchObject({ status: 409, code: 'CardIsAlreadyAssigned' });
    expect(taken.message).toBeTruthy();
    const badClient = await gatehouseError(() => GatehouseClient.login({ ...credentials, clientSecret: 'not-the-secret' }));
    expect(badClient).toMatchObject({ status: 400, code: 'invalid_client' });

    await gh.DELETE('/api/f/{folderKey}/people/{key}', adaPath);
    expect((await gatehouseError(() => gh.GET('/api/f/{folderKey}/people/{key}', adaPath))).status).toBe(404);
  });

  it('renews an expiring token once for many parallel calls, and the renewed login stays valid', async () => {
    const rec = recordingFetch();
    let skewMs = 0;
    const gh = await GatehouseClient.login({ ...credentials, fetch: rec.fetch, now: () => Date.now() + skewMs });
    const first = gh.tokens;

    // The client's clock reaches the access token's expiry: the next calls must renew first.
    skewMs = first.expiresAt - Date.now();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? gh.GET('/api') : gh.GET('/api/f/{folderKey}/people', { params: { path: { folderKey: gh.instanceKey }, query: { pageSize: 1 } } }))));
    expect(answers).toHaveLength(12);
    expect(rec.grants).toEqual(['password', 'refresh_token']);
    expect(gh.renewals).toBe(1);
    expect(gh.tokens.refreshToken).not.toBe(first.refreshToken);
    expect(rec.sent.filter((s) => s.path !== '/token').every((s) => s.status === 200)).toBe(true);

    // Once more: a reused refresh token would have revoked the login, and this renewal would fail.
    skewMs = gh.tokens.expiresAt - Date.now() + 1000;
    await Promise.all([gh.GET('/api'), gh.GET('/api'), gh.GET('/api')]);
    expect(rec.grants).toEqual(['password', 'refresh_token', 'refresh_token']);
    expect(gh.renewals).toBe(2);
  });

  it('retries calls the server refused (401) once, after one renewal shared by all of them', async () => {
    const saved = (await GatehouseClient.login(credentials)).tokens;
    // A saved session whose access token the server refuses (as after a signing key rotation).
    const [h, p, s] = saved.accessToken.split('.') as [string, string, string];
    const refused = `${h}.${p}.${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`;
    const rec = recordingFetch();
    const gh = GatehouseClient.resume({ ...credentials, fetch: rec.fetch, tokens: { ...saved, accessToken: refused } });

    const answers = await Promise.all(Array.from({ length: 10 }, () => gh.GET('/api')));
    expect(answers.every((a) => a.Key === admin.instanceKey)).toBe(true);
    expect(rec.grants).toEqual(['refresh_token']);
    const calls = rec.sent.filter((x) => x.path === '/api');
    expect(calls.filter((x) => x.status === 401)).toHaveLength(10);
    expect(calls.filter((x) => x.status === 200)).toHaveLength(10);
    // The login is intact: the rotated refresh token renews again.
    await gh.refresh();
    expect(rec.grants).toEqual(['refresh_token', 'refresh_token']);

    // What the single renewal protects against: the saved (already used) refresh token coming
    // back is reuse, refused with a typed error, and it ends that login.
    const stale = GatehouseClient.resume({ ...credentials, tokens: saved });
    expect(await gatehouseError(() => stale.refresh())).toMatchObject({ status: 400, code: 'RefreshTokenTicketNotValid' });
    expect(await gatehouseError(() => gh.refresh())).toMatchObject({ status: 400, code: 'RefreshTokenTicketNotValid' });
  });
});
