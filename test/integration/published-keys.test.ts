/**
 * The public JWKS in the table, as deployed in AWS, on DynamoDB Local. The key manager
 * (functions/keygen, its real handler) publishes the JWKS in the table's `KEYS`/`JWKS` item. The
 * token family signs with the ring (from its secret in AWS; a map here). Every other family
 * verifies against the item, read with the DynamoDB client it already has. Covered here:
 * - a verifier refuses to guess while nothing is published;
 * - a new environment's first read-only request, whose claims go ahead of the key read, is
 *   answered only when the token verifies: a forged token learns nothing;
 * - a rollover reaches a verifier that had cached the old keys.
 */
import { decodeProtectedHeader } from 'jose';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createKeygen, type KeygenDeps, type KeygenProperties } from '../../functions/keygen/handler.ts';
import { createInstance } from '#shared/auth/provisioning.ts';
import { parseRing } from '#shared/auth/key-ring.ts';
import { keyStoreFor, tableKeyStore, type KeyStore, type RingSource } from '#shared/auth/keys.ts';
import { fileKeyStore, generateSigningJwk } from '#shared/auth/key-files.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { hashPassword } from '#shared/auth/passwords.ts';
import { clearResolveCaches } from '#shared/events/resolve.ts';
import { readPublishedJwks, writePublishedJwks } from '#shared/db/published-keys.ts';
import type { Config } from '#shared/config.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createCoreDeps } from '#shared/core-deps.ts';
import { newKey } from '#shared/model/placement.ts';
import { createApi } from '../support/api.ts';
import { commandsOf, createTestDb, type TestDb } from '../support/db.ts';
import { mintToken, seedUser, uniqueName } from '../support/tokens.ts';

const PASSWORD = 'Publ1shed-Keys!';
const policy = { keyCacheSeconds: 300, accessTokenTtl: 3600, rotationDays: 30 };

let t: TestDb;
let config: Config;
let acme: StoredObject;
let user: StoredObject;
let stores: KeygenProperties;
/** The signing ring's secret (Secrets Manager in AWS). */
const secrets = new Map<string, string>();
const ring: RingSource = async () => parseRing(secrets.get(stores.SigningKeySecretId))!;

function keygen(now: () => Date = () => new Date()) {
  const deps: KeygenDeps = {
    generate: generateSigningJwk,
    getSecret: async (id) => secrets.get(id),
    putSecret: async (id, value) => {
      secrets.set(id, value);
    },
    getJwks: (table) => readPublishedJwks(t.db.raw, table, { consistent: true }),
    putJwks: (table, value) => writePublishedJwks(t.db.raw, table, value),
    respond: async () => {},
    log: () => {},
    now,
    policy,
    stores,
  };
  return createKeygen(() => deps);
}

const createEvent = () => ({
  RequestType: 'Create' as const,
  ServiceToken: 'keygen',
  ResponseURL: 'https://cloudformation.example/response',
  StackId: 'stack',
  RequestId: 'request',
  LogicalResourceId: 'SigningKeysGenerate',
  ResourceType: 'Custom::GatehouseSigningKey',
  ResourceProperties: { ServiceToken: 'keygen', ...stores },
});
const context = { logStreamName: 'log-stream' };

/** A new execution environment of a verifying family: nothing read yet, no ring. */
const verifierApi = () => createApi(createCoreDeps({ config, db: t.db }));
/** The token family's environment: it signs with the ring. */
const tokenApi = () => createApi(createCoreDeps({ config, db: t.db, signingRing: ring }));

async function login(): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'password', username: `${acme.doc.CommonName}\\${user.doc.CommonName}`, password: PASSWORD });
  const res = await tokenApi().post('/token', { body: body.toString(), contentType: 'application/x-www-form-urlencoded' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token as string;
}

beforeAll(async () => {
  t = await createTestDb();
  config = { ...t.config, publicKeys: 'table' };
  stores = { SigningKeySecretId: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:SigningKey', PublicKeysTable: t.config.tableName };
  const key = newKey();
  acme = await createInstance(t.db, { key, name: uniqueName('Acme'), license: await localLicenseAuthority(t.config.dataDir).issue({ instanceKey: key }) });
  user = await seedUser(t, acme, 'Operator', uniqueName('kim'), { passwordHash: await hashPassword(PASSWORD) });
});

describe('the public keys in the table', () => {
  it('are not guessed before the key manager publishes them: a 500, not a verdict on the token', async () => {
    expect(await readPublishedJwks(t.db.raw, t.config.tableName)).toBeUndefined();
    const token = await mintToken(config, fileKeyStore(t.config.dataDir), user, acme);
    for (const res of [await verifierApi().get('/api', { token }), await verifierApi().get(`/api/f/${acme.key}/users`, { token })]) {
      expect(res.status).toBe(500);
      expect(res.text).not.toMatch(/published|table/);
    }
  });

  it('are published by the key manager, served by the token family and verify its tokens in a new environment', async () => {
    await keygen()(createEvent(), context);
    const published = JSON.parse((await readPublishedJwks(t.db.raw, t.config.tableName, { consistent: true }))!) as { keys: Array<{ kid: string; d?: string }> };
    const signing = (await ring()).keys[0]!.jwk;
    expect(published.keys.map((k) => k.kid)).toEqual([signing.kid]);
    expect(published.keys[0]!.d).toBeUndefined();

    const jwks = await verifierApi().get('/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.body).toEqual(published);

    const token = await login();
    expect(decodeProtectedHeader(token).kid).toBe(signing.kid);
    const fresh = verifierApi();
    const { result: first, commands } = await commandsOf(t, () => fresh.get(`/api/f/${acme.key}/users/${user.key}`, { token }));
    expect(first.status, first.text).toBe(200);
    expect(first.body.CommonName).toBe(user.doc.CommonName);
    // The keys and the caller's user and instance in one BatchGetItem; the user asked for beside it.
    expect(commands.sort()).toEqual(['BatchGetItem', 'GetItem']);
    expect((await fresh.get('/api', { token })).status).toBe(200);
    // A write on a new environment waits for the verdict, but still reads the keys and the status together.
    const { result: write, commands: writeReads } = await commandsOf(t, () =>
      verifierApi().post(`/api/f/${acme.key}/people`, { token, body: { $type: 'PersonInfo', GivenName: 'Grace', Surname: 'Keys' } }),
    );
    expect(write.status, write.text).toBe(201);
    // The keys and the status first (one request), then the operation: its folder, its write.
    expect(writeReads).toEqual(['BatchGetItem', 'GetItem', 'TransactWriteItems']);
  });

  it('are read with the status and the object in one request on a Lambda environment\'s first GET', async () => {
    const token = await login();
    // As in AWS: one invocation at a time (AWS_LAMBDA_FUNCTION_NAME set, no maximum concurrency).
    const lambda = () => createApi(createCoreDeps({ config: { ...config, invocationsOneAtATime: true }, db: t.db }));
    const first = lambda();
    const { result: got, commands } = await commandsOf(t, () => first.get(`/api/f/${acme.key}/users/${user.key}`, { token }));
    expect(got.status, got.text).toBe(200);
    expect(got.body.CommonName).toBe(user.doc.CommonName);
    expect(commands).toEqual(['BatchGetItem']);
    // Warm: the keys and the status are known, and the object's read is a GetItem as before.
    expect((await commandsOf(t, () => first.get(`/api/f/${acme.key}/users/${user.key}`, { token }))).commands).toEqual(['GetItem']);
    // A list cannot join (a Query): its keys and status still go out as one request beside it.
    const { result: list, commands: listReads } = await commandsOf(t, () => lambda().get(`/api/f/${acme.key}/users`, { token }));
    expect(list.status, list.text).toBe(200);
    expect(listReads.sort()).toEqual(['BatchGetItem', 'Query']);
    // A forged token learns nothing from the shared request.
    const forged = await mintToken(config, fileKeyStore(`${t.config.dataDir}-elsewhere`), user, acme, { role: 'Administrator' });
    const refused = await lambda().get(`/api/f/${acme.key}/users/${user.key}`, { token: forged });
    expect(refused.status).toBe(401);
    expect(refused.text).not.toContain(String(user.doc.CommonName));
  });

  it('answer a forged token on a new environment\'s first request with 401 and nothing the operation read', async () => {
    const forged = await mintToken(config, fileKeyStore(`${t.config.dataDir}-elsewhere`), user, acme, { role: 'Administrator' });
    for (const path of [`/api/f/${acme.key}/users/${user.key}`, `/api/f/${acme.key}/users`]) {
      const res = await verifierApi().get(path, { token: forged });
      expect(res.status).toBe(401);
      expect(res.body.error_description).toMatch(/not valid/);
      expect(res.text).not.toContain(String(user.doc.CommonName));
    }
    // A write never goes ahead of the verdict, first request or not.
    const write = await verifierApi().post(`/api/f/${acme.key}/people`, { token: forged, body: { $type: 'PersonInfo', GivenName: 'Mallory', Surname: 'X' } });
    expect(write.status).toBe(401);
  });

  it("let a forged token on a new environment's first call take no read beyond the call's first", async () => {
    // More users than a page of one, so that page 2 skips keys first (a cursor is not cached).
    for (let i = 0; i < 3; i++) await seedUser(t, acme, 'ReadOnly');
    const forged = await mintToken(config, fileKeyStore(`${t.config.dataDir}-elsewhere`), user, acme, { role: 'Administrator' });
    const lambda = () => createApi(createCoreDeps({ config: { ...config, invocationsOneAtATime: true }, db: t.db }));
    const calls: Array<{ what: string; call: (api: ReturnType<typeof lambda>) => ReturnType<ReturnType<typeof lambda>['get']>; reads: string[] }> = [
      // The keys to skip, then the page: the page waits for the verdict.
      { what: 'a later page', call: (api) => api.get(`/api/f/${acme.key}/users`, { token: forged, query: { page: 2, pageSize: 1 } }), reads: ['BatchGetItem', 'Query'] },
      // The instances below, then the index: the index waits.
      {
        what: 'a search of the instances below',
        call: (api) => api.post(`/api/f/${acme.key}/search`, { token: forged, query: { includeChildInstances: true }, body: { CommonName: 'Nobody' } }),
        reads: ['BatchGetItem', 'Query'],
      },
      // The sub-folders, then the timelines: the timelines wait.
      { what: 'events with sub-folders', call: (api) => api.get(`/api/f/${acme.key}/events`, { token: forged, query: { includeSubFolders: true } }), reads: ['BatchGetItem', 'Query'] },
      // The instance, read with the token's checks in one BatchGetItem, then the walk below it: the walk waits.
      { what: 'the usage report', call: (api) => api.get(`/api/f/${acme.key}/usage`, { token: forged }), reads: ['BatchGetItem'] },
    ];
    for (const c of calls) {
      const { result, commands } = await commandsOf(t, () => c.call(lambda()));
      expect(result.status, `${c.what}: ${result.text}`).toBe(401);
      expect(result.body.error_description, c.what).toMatch(/not valid/);
      // Beside the call's first reads, the verdict's own: the keys again, as the forged token
      // names a kid that is not published.
      expect(commands.sort(), c.what).toEqual(['BatchGetItem', ...c.reads].sort());
    }
    // A valid token's calls are answered whole on a new environment.
    const token = await login();
    const page = await lambda().get(`/api/f/${acme.key}/users`, { token, query: { page: 2, pageSize: 1 } });
    expect(page.status, page.text).toBe(200);
    expect(page.body).toHaveLength(1);
    const found = await lambda().post(`/api/f/${acme.key}/search`, { token, query: { includeChildInstances: true }, body: { CommonName: user.doc.CommonName } });
    expect(found.status, found.text).toBe(200);
    expect(found.body.map((o: { Key: string }) => o.Key)).toEqual([user.key]);
  });

  it("let a publish on a new environment read what it names beside the token's checks, and write only for an accepted caller", async () => {
    const lambda = () => createApi(createCoreDeps({ config: { ...config, invocationsOneAtATime: true }, db: t.db }));
    // An administrator's token: a token claiming more than its user's stored role is refused.
    const admin = await mintToken(config, tableKeyStore(t.db, { ring }), await seedUser(t, acme, 'Administrator'), acme, { role: 'Administrator' });
    const app = await verifierApi().post(`/api/f/${acme.key}/apps`, { token: admin, body: { $type: 'AppInfo', CommonName: uniqueName('app'), Monikers: [{ Namespace: 'V', Nickname: uniqueName('App') }] } });
    expect(app.status, app.text).toBe(201);
    const type = await verifierApi().put(`${app.body.Href}/eventtypes`, { token: admin, body: { $type: 'EventTypeInfo', CommonName: uniqueName('type'), Monikers: [{ Namespace: 'V', Nickname: 'Swipe' }] } });
    expect(type.status, type.text).toBe(201);
    const posting = {
      $type: 'EventMessagePosting',
      OccurredOn: new Date().toISOString(),
      AppKey: app.body.Key,
      EventTypeMoniker: { Namespace: 'V', Nickname: 'Swipe' },
      RelatedObjects: [{ Relation: 'User', LinkedObjectKey: user.key, CommonName: user.doc.CommonName }],
      EventDataBsonBase64: '',
    };
    const sink = `/api/f/${acme.key}/eventmessagesink`;
    const events = async () => (await verifierApi().get(`/api/f/${acme.key}/events`, { token: admin })).body as unknown[];

    // A forged token: its first reads join the checks' request, and it writes nothing.
    const forged = await mintToken(config, fileKeyStore(`${t.config.dataDir}-elsewhere`), user, acme, { role: 'Administrator' });
    clearResolveCaches();
    const refused = await commandsOf(t, () => lambda().post(sink, { token: forged, body: posting }));
    expect(refused.result.status, refused.result.text).toBe(401);
    expect(refused.result.body.error_description).toMatch(/not valid/);
    // The shared request, and the verdict's own: the keys again (the forged kid is not published).
    expect(refused.commands).toEqual(['BatchGetItem', 'BatchGetItem']);
    expect(await events()).toEqual([]);
    // Where requests run side by side (the local runtime), the first reads go out on their own.
    clearResolveCaches();
    const local = await commandsOf(t, () => verifierApi().post(sink, { token: forged, body: posting }));
    expect(local.result.status, local.result.text).toBe(401);
    expect(local.commands).toEqual(['BatchGetItem', 'BatchGetItem', 'BatchGetItem']);
    expect(await events()).toEqual([]);

    // A valid token: the keys, the status and everything the posting names by key in one request,
    // then the event type's Query, then the write.
    clearResolveCaches();
    const token = await login();
    const published = await commandsOf(t, () => lambda().post(sink, { token, body: posting }));
    expect(published.result.status, published.result.text).toBe(201);
    expect(published.commands).toEqual(['BatchGetItem', 'Query', 'BatchWriteItem']);
    expect((await events()).map((e) => (e as { Key: string }).Key)).toEqual([published.result.body.Key]);
  });

  it("count a forged token's call under no tenant, though a new environment ran it on the token's claims", async () => {
    let clock = Date.now();
    const lines: Array<Record<string, unknown>> = [];
    const logged = { ...config, logLevel: 'INFO' as const, usageFlushSeconds: 60 };
    const fresh = createApi(createCoreDeps({ config: logged, db: t.db, now: () => new Date(clock) }));
    const forged = await mintToken(config, fileKeyStore(`${t.config.dataDir}-elsewhere`), user, acme, { role: 'Administrator' });
    vi.spyOn(process.stdout, 'write').mockImplementation(((c: unknown) => {
      for (const l of String(c).split('\n')) if (l.startsWith('{')) lines.push(JSON.parse(l) as Record<string, unknown>);
      return true;
    }) as typeof process.stdout.write);
    try {
      expect((await fresh.get(`/api/f/${acme.key}/users`, { token: forged })).status).toBe(401);
      // The family's counts are written with its first request after the interval (here one
      // without a token, which counts for no one): there are none to write.
      clock += 61_000;
      const flushed = await commandsOf(t, () => fresh.get(`/api/f/${acme.key}/users`));
      expect(flushed.result.status).toBe(401);
      expect(flushed.commands).toEqual([]);
    } finally {
      vi.restoreAllMocks();
    }
    const refused = lines.find((l) => l.message === 'request' && l.status === 401);
    expect(refused).toMatchObject({ operation: 'list', status: 401 });
    expect(refused!.instanceKey).toBeUndefined();
  });

  it('reach a verifier that cached them before a rollover: a token of the new key makes it read them again', async () => {
    const longCache = tableKeyStore(t.db, { cacheMs: 3_600_000 });
    const verifier = createApi(createCoreDeps({ config, db: t.db, keys: longCache }));
    expect((await verifier.get('/api', { token: await login() })).status).toBe(200);

    const outcome = (await keygen()({ action: 'rotate' }, context)) as { key: string; scheduled: string };
    expect(outcome.key).toBe('rotated');
    const kids = (JSON.parse((await readPublishedJwks(t.db.raw, t.config.tableName))!) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
    expect(kids).toEqual([(await ring()).keys[0]!.jwk.kid, outcome.scheduled]);

    // The new key signs once its lead has passed (shared/auth/key-ring.ts); sign as the token family will then.
    const signer = tableKeyStore(t.db, { ring });
    const later: KeyStore = { signingKey: () => signer.signingKey(new Date(Date.now() + 2 * policy.keyCacheSeconds * 1000 + 1000)), publicKeys: signer.publicKeys };
    const token = await mintToken(config, later, user, acme);
    expect(decodeProtectedHeader(token).kid).toBe(outcome.scheduled);
    expect((await verifier.get('/api', { token })).status).toBe(200);
  });

  it('are all a verifying family holds: it cannot sign, and a ring needs the table to publish to', async () => {
    await expect(tableKeyStore(t.db).signingKey()).rejects.toThrow(/does not sign/);
    expect(() => keyStoreFor(t.config, t.db, ring)).toThrow(/GATEHOUSE_PUBLIC_KEYS=table/);
  });
});
