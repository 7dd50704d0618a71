/**
 * The bundles that deploy are the ones tested: the CDK app synthesized with real bundling (local
 * esbuild, offline, into a temporary cloud assembly), each Lambda function of the template loaded
 * from its asset directory the way the Lambda Node.js runtime loads it (handler string and
 * environment from the template, in a fresh `node` process per function), and a whole flow driven
 * through those packages with API Gateway events against DynamoDB Local: the key generator fills
 * the signing-key secret and publishes the JWKS in the table, a token by password grant, a person with a card, a search, a WebSocket
 * connect and subscribe, an event published, the table's stream records handed to the fan-out,
 * which posts the event to the subscribed connection and publishes it over MQTT.
 *
 * Local overrides are endpoints and credentials only: DynamoDB Local, and stand-ins speaking the
 * wire protocols of Secrets Manager, the WebSocket Management API, the IoT data plane, SQS and
 * CloudFormation's response URL (test/support/aws-stand-ins.ts). Values the template builds at
 * deploy time (`Ref`, `Fn::Join`) become local stand-ins; the test lists which.
 */
import { randomBytes } from 'node:crypto';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { deserialize, serialize } from 'bson';
import { decodeProtectedHeader } from 'jose';
import type { APIGatewayProxyResultV2, DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDeployment } from '#shared/auth/bootstrap.ts';
import { readPublishedJwks } from '#shared/db/published-keys.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { createStreamReader } from '#local/storage/stream-reader.ts';
import { createCoreDeps } from '#shared/core-deps.ts';
import { isTextContentType } from '#local/http-event.ts';
import { httpEvent, type CallOptions, type CallResult } from '../support/api.ts';
import { AwsStandIns, STAGE_PATH } from '../support/aws-stand-ins.ts';
import {
  LambdaProcess,
  functionEnvironment,
  nodeModulesAbove,
  referencesOf,
  resolveValue,
  routeFunctions,
  synthesizeDeployable,
  type Deployable,
  type StoodIn,
  type SynthesizedStack,
} from '../support/bundles.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { dynamoEndpoint } from '../support/dynamo-endpoint.ts';

const INSTANCE = `Bundles-${randomBytes(3).toString('hex')}`;
const ADMIN = 'admin';
const PASSWORD = 'Bundl3s-Deploy!';
const NS = 'Gatehouse.Model';
const tag = (name: string) => `${NS}.${name}, ${NS}`;
/** How many function processes start at once (two shared cores here). */
const START_CONCURRENCY = 4;

let deployable: Deployable;
let stack: SynthesizedStack;
let t: TestDb;
let aws: AwsStandIns;
let dataDir: string;
let instanceKey: string;
const lambdas = new Map<string, LambdaProcess>();
const stoodIn = new Map<string, StoodIn>();
let httpRoutes: Map<string, string>;
let wsRoutes: Map<string, string>;
const timings: Record<string, number> = {};

/** What the template's deploy-time values become here. */
const standInValues = () => ({ region: stack.region, tableName: t.config.tableName, awsUrl: aws.url, stagePath: STAGE_PATH, dynamoEndpoint: dynamoEndpoint() });

/** The process running the function whose code asset is `Functions/<family>/...`. */
function family(name: string): LambdaProcess {
  const found = [...lambdas.values()].find((l) => l.fn.assetName.startsWith(`Functions/${name}/`));
  if (!found) throw new Error(`no function of family ${name} in ${stack.stackName}`);
  return found;
}

/** Calls the HTTP API as API Gateway would: the template's route picks the function. */
async function call(method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
  const event = httpEvent(method, path, opts);
  // Payload 2.0 passes only text content types as text; everything else arrives base64.
  if (event.body !== undefined && !isTextContentType(event.headers['content-type'])) {
    event.body = Buffer.from(event.body, 'utf8').toString('base64');
    event.isBase64Encoded = true;
  }
  const fnId = httpRoutes.get(event.routeKey);
  if (!fnId) throw new Error(`the template has no route ${event.routeKey}`);
  const res = (await lambdas.get(fnId)!.invoke(event)) as Exclude<APIGatewayProxyResultV2, string>;
  const text = res.body ? Buffer.from(res.body, res.isBase64Encoded ? 'base64' : 'utf8').toString('utf8') : '';
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers ?? {})) headers[k.toLowerCase()] = String(v);
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.statusCode ?? 200, headers, body, text };
}

/** A WebSocket API route event, as API Gateway sends it to the websocket function. */
function wsEvent(routeKey: string, connectionId: string, extra: Record<string, unknown> = {}) {
  const now = Date.now();
  return {
    requestContext: {
      routeKey,
      eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE',
      messageId: randomBytes(6).toString('base64'),
      extendedRequestId: randomBytes(6).toString('hex'),
      requestTime: new Date(now).toUTCString(),
      messageDirection: 'IN',
      stage: STAGE_PATH.slice(1),
      connectedAt: now,
      requestTimeEpoch: now,
      requestId: randomBytes(6).toString('hex'),
      domainName: 'localhost',
      connectionId,
      apiId: 'local',
    },
    isBase64Encoded: false,
    ...extra,
  };
}

/** Invokes a WebSocket route through the function the template wires to it. */
function wsInvoke(event: ReturnType<typeof wsEvent>): Promise<{ statusCode: number }> {
  const fnId = wsRoutes.get(event.requestContext.routeKey) ?? wsRoutes.get('$default');
  if (!fnId) throw new Error(`the template has no WebSocket route ${event.requestContext.routeKey}`);
  return lambdas.get(fnId)!.invoke(event);
}

/** Every record of the table's stream so far (every shard, from its start). */
async function streamRecords(): Promise<DynamoDBRecord[]> {
  const reader = createStreamReader(t.config);
  try {
    const arn = await reader.latestStreamArn();
    if (!arn) throw new Error('the table has no stream');
    const records: DynamoDBRecord[] = [];
    for (const shard of await reader.shards(arn)) {
      let iterator = await reader.iterator(arn, shard.shardId, { type: 'TRIM_HORIZON' });
      // An open shard always has a next iterator: read until a few pages in a row come back empty.
      for (let empty = 0; iterator && empty < 3; ) {
        const page = await reader.records(iterator, 100);
        records.push(...page.records);
        empty = page.records.length === 0 ? empty + 1 : 0;
        iterator = page.next;
      }
    }
    return records;
  } finally {
    reader.destroy();
  }
}

/** Runs `fn` over `items`, at most `limit` at once. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
  }));
}

beforeAll(async () => {
  const started = performance.now();
  dataDir = join(tmpdir(), `gatehouse-bundles-${randomBytes(4).toString('hex')}`);
  // The licence authority: its public key goes into the template (gatehouse:licenseAuthorityKey),
  // as an operator configures a deployment; its private key licenses the bootstrapped instance.
  const authorityKey = JSON.stringify(await localLicenseAuthority(dataDir).publicJwk());
  deployable = await synthesizeDeployable({ 'gatehouse:licenseAuthorityKey': authorityKey });
  timings.synthMs = deployable.synthMs;
  stack = deployable.stacks.find((s) => s.stackName === 'Gatehouse-US') ?? deployable.stacks[0]!;

  // The table: created in DynamoDB Local by the repository's own helper (the same definition the
  // stack's table comes from; the first test compares them), with the first instance and its
  // administrator as the local runtime bootstraps them.
  let step = performance.now();
  t = await createTestDb({ GATEHOUSE_DATA_DIR: dataDir });
  timings.tableMs = performance.now() - step;
  step = performance.now();
  const seeded = await seedDeployment(createCoreDeps({ config: t.config, db: t.db }), {
    instanceName: INSTANCE,
    adminUser: ADMIN,
    adminPassword: PASSWORD,
    clientSecret: t.config.clientSecret,
    dataDir,
  });
  instanceKey = seeded.instanceKey;
  timings.seedMs = performance.now() - step;

  aws = await new AwsStandIns().start();
  const values = standInValues();
  for (const [id, r] of Object.entries(stack.template.Resources)) {
    if (r.Type === 'AWS::SecretsManager::Secret') aws.createSecret(resolveValue(stack.template, id, { Ref: id }, values).value);
  }
  httpRoutes = routeFunctions(stack.template, 'HTTP');
  wsRoutes = routeFunctions(stack.template, 'WEBSOCKET');
  // One warm execution environment per function, started a few at a time; a failed load is
  // kept in `ready` for the test that checks every load.
  const loadStarted = performance.now();
  await eachLimited([...stack.functions.values()], START_CONCURRENCY, async (fn) => {
    const { env, stoodIn: list } = functionEnvironment(stack.template, fn, values);
    for (const s of list) stoodIn.set(`${s.name} → ${s.refersTo.join(', ')}`, s);
    const l = new LambdaProcess(fn, env);
    lambdas.set(fn.logicalId, l);
    await l.ready.catch(() => undefined);
  });
  timings.loadMs = performance.now() - loadStarted;
  timings.setupMs = performance.now() - started;
}, 600_000);

afterAll(async () => {
  await Promise.all([...lambdas.values()].map((l) => l.stop()));
  await aws?.stop();
  if (deployable) await rm(deployable.outdir, { recursive: true, force: true });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  // One line for the README's figure: how long the synth with bundling and the loads took here.
  process.stdout.write(`deployable bundles: ${JSON.stringify(Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v)])))}\n`);
});

describe('the synthesized packages', () => {
  it('are byte-identical in every region: one asset per function, the same handler and settings', () => {
    expect(deployable.stacks.map((s) => s.stackName).sort()).toEqual(['Gatehouse-CA', 'Gatehouse-EU', 'Gatehouse-US']);
    const shape = (s: SynthesizedStack) =>
      Object.fromEntries([...s.functions.values()].map((f) => [f.assetName, { hash: f.assetHash, handler: f.handler, runtime: f.runtime, settings: Object.keys(f.environment).sort() }]));
    for (const other of deployable.stacks) expect(shape(other)).toEqual(shape(stack));
    // The assembly lies outside the repository: a package cannot borrow the repository's node_modules.
    for (const fn of stack.functions.values()) expect(nodeModulesAbove(fn.assetDir)).toBeUndefined();
  });

  it('gives each function a package of its own: index.mjs, the chunks it loads, and a map beside each', () => {
    const ours = [...stack.functions.values()].filter((f) => f.assetName.startsWith('Functions/') || f.assetName.startsWith('SigningKeys/'));
    expect(new Set(ours.map((f) => f.assetHash)).size).toBe(ours.length);
    for (const f of ours) {
      const files = readdirSync(f.assetDir);
      const code = files.filter((n) => n.endsWith('.mjs'));
      expect(code, f.assetName).toContain('index.mjs');
      for (const n of code) expect(files, `${f.assetName}: ${n}`).toContain(`${n}.map`);
    }
    // Code splitting: the events package keeps its query engine in chunks loaded on first use.
    expect(readdirSync(family('events').fn.assetDir).filter((n) => /^chunk-\w+\.mjs$/.test(n)).length).toBeGreaterThan(1);
    // The aggregation worker, a file of its own beside the events family's code (and only there).
    expect(readdirSync(family('events').fn.assetDir)).toContain('aggregate-worker.mjs');
    expect(readdirSync(family('people').fn.assetDir)).not.toContain('aggregate-worker.mjs');
  });

  it('every function of the template loads as the Lambda runtime loads it and exports its handler', async () => {
    const failures: string[] = [];
    for (const l of lambdas.values()) {
      try {
        const { exports } = await l.ready;
        const exportName = l.fn.handler.split('.').at(-1)!;
        if (!exports.includes(exportName)) failures.push(`${l.fn.assetName}: no export ${exportName} (exports ${exports.join(', ')})`);
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
    expect(failures).toEqual([]);
    // Every family's package, the key generator's and CDK's own provider (the IoT endpoint lookup).
    expect(lambdas.size).toBe(stack.functions.size);
    expect([...lambdas.values()].map((l) => l.fn.assetName)).toEqual(
      expect.arrayContaining(['Functions/token/Function/Code', 'Functions/fanout/Function/Code', 'SigningKeys/Generator/Function/Code']),
    );
  });

  it('the local table has the key schema, indexes and stream of the template\'s table', async () => {
    const tables = Object.values(stack.template.Resources).filter((r) => r.Type === 'AWS::DynamoDB::Table' || r.Type === 'AWS::DynamoDB::GlobalTable');
    expect(tables).toHaveLength(1);
    const p = tables[0]!.Properties!;
    const local = (await t.db.raw.send(new DescribeTableCommand({ TableName: t.config.tableName }))).Table!;
    const byName = (a: { AttributeName?: string }, b: { AttributeName?: string }) => String(a.AttributeName).localeCompare(String(b.AttributeName));
    expect([...local.AttributeDefinitions!].sort(byName)).toEqual([...p.AttributeDefinitions].sort(byName));
    expect(local.KeySchema).toEqual(p.KeySchema);
    const indexes = (list: Array<{ IndexName?: string; KeySchema?: unknown; Projection?: unknown }>) =>
      list.map((i) => ({ IndexName: i.IndexName, KeySchema: i.KeySchema, Projection: i.Projection })).sort((a, b) => String(a.IndexName).localeCompare(String(b.IndexName)));
    expect(indexes(local.GlobalSecondaryIndexes ?? [])).toEqual(indexes(p.GlobalSecondaryIndexes ?? []));
    expect(local.StreamSpecification?.StreamViewType).toBe(p.StreamSpecification?.StreamViewType);
  });

  it('stands in only for the values the template resolves at deploy time', () => {
    // Every non-literal setting of every function, and what it became here.
    const names = [...new Set([...stoodIn.values()].map((s) => s.name))].sort();
    expect(names).toEqual([
      'GATEHOUSE_EVENT_PUBLISHER_URL',
      'GATEHOUSE_MQTT_PUBLISHER_URL',
      'GATEHOUSE_MQTT_PUBLISH_URL',
      'GATEHOUSE_NOTIFY_TOPIC_ARN',
      'GATEHOUSE_SIGNING_KEY_SECRET',
      'GATEHOUSE_TABLE_NAME',
      'GATEHOUSE_WEBHOOK_QUEUE_URL',
      'GATEHOUSE_WEBHOOK_SECRET_KEY_SECRET',
      'GATEHOUSE_WEBSOCKET_MANAGEMENT_URL',
    ]);
    for (const s of stoodIn.values()) expect(s.refersTo.length, s.name).toBeGreaterThan(0);
  });
});

describe('a whole flow through the deployed packages', () => {
  const state: { token?: string; kid?: string; person?: any; eventKey?: string; connectionId?: string } = {};

  it('the key generator answers CloudFormation\'s Create, fills the signing-key secret and publishes the JWKS in the table', async () => {
    const [id, resource] = Object.entries(stack.template.Resources).find(([, r]) => r.Type === 'Custom::GatehouseSigningKey')!;
    // CloudFormation invokes the function the resource's ServiceToken names, with its properties resolved.
    const { ServiceToken, ...properties } = resource.Properties!;
    const generatorId = referencesOf(ServiceToken)[0]!;
    const generator = lambdas.get(generatorId)!;
    const values = standInValues();
    const props: Record<string, string> = { ServiceToken: `arn:aws:lambda:${stack.region}:000000000000:function:${generatorId}` };
    for (const [k, v] of Object.entries(properties)) props[k] = resolveValue(stack.template, k, v, values).value;
    const result = await generator.invoke({
      RequestType: 'Create',
      ServiceToken: props.ServiceToken,
      ResponseURL: `${aws.url}/cfn-response`,
      StackId: `arn:aws:cloudformation:${stack.region}:000000000000:stack/${stack.stackName}/local`,
      RequestId: randomBytes(8).toString('hex'),
      LogicalResourceId: id,
      ResourceType: resource.Type,
      ResourceProperties: props,
    });
    expect(result).toBeNull();
    expect(aws.cfnResponses).toHaveLength(1);
    expect(aws.cfnResponses[0]).toMatchObject({ Status: 'SUCCESS', LogicalResourceId: id, PhysicalResourceId: props.SigningKeySecretId });
    // The private secret holds the signing ring (shared/auth/key-ring.ts): a first deployment has one key, signing now.
    const ring = JSON.parse(aws.secrets.get(props.SigningKeySecretId!)!);
    expect(ring.keys).toHaveLength(1);
    const [{ jwk, signsFrom }] = ring.keys;
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', d: expect.any(String) });
    expect(signsFrom * 1000).toBeLessThanOrEqual(Date.now());
    expect(props.PublicKeysTable).toBe(t.config.tableName);
    const jwks = JSON.parse((await readPublishedJwks(t.db.raw, props.PublicKeysTable!, { consistent: true }))!);
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).toEqual([jwk.kid]);
    expect(jwks.keys[0].d).toBeUndefined();
    state.kid = jwk.kid;
  });

  it('POST /token (password grant) through the token package signs with the generated key', async () => {
    const readsBefore = aws.secretReads.length;
    const form = new URLSearchParams({ grant_type: 'password', username: `${INSTANCE}\\${ADMIN}`, password: PASSWORD }).toString();
    const res = await call('POST', '/token', { body: form, contentType: 'application/x-www-form-urlencoded' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'bearer', refresh_token: expect.any(String) });
    state.token = res.body.access_token;
    expect(decodeProtectedHeader(state.token!)).toMatchObject({ alg: 'ES256', kid: state.kid });
    const jwks = await call('GET', '/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual([state.kid]);
    // Only the private ring comes from Secrets Manager, through the bundled client; the JWKS it answers is the table's.
    const secretOf = (name: string) => resolveValue(stack.template, name, family('token').fn.environment[name], standInValues()).value;
    expect(aws.secretReads.slice(readsBefore)).toEqual([secretOf('GATEHOUSE_SIGNING_KEY_SECRET')]);
  });

  it('the service package answers sysinfo and serves the document shipped beside its code', async () => {
    const info = await call('GET', '/api/sysinfo');
    expect(info.status, info.text).toBe(200);
    const doc = await call('GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
  });

  it('the service package serves the operator console built beside its code: the page at every console URL, its hashed files for good', async () => {
    const home = await call('GET', '/');
    expect(home.status).toBe(302);
    expect(home.headers.location).toBe('/console/');
    const page = await call('GET', '/console/people/some-key');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const files = [...page.text.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(files.map((f) => f.slice(f.lastIndexOf('.')))).toEqual(['.css', '.js']);
    for (const file of files) {
      const asset = await call('GET', file, { headers: { 'accept-encoding': 'gzip' } });
      expect(asset.status, file).toBe(200);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(asset.headers['content-encoding']).toBe('gzip');
    }
    expect((await call('GET', '/console/assets/console-NOPE.js')).status).toBe(404);
  });

  it('creates a person with a card (its retry replayed), reads its cards and finds it by search', async () => {
    const cardNumber = 400_000 + Math.floor(Math.random() * 100_000);
    const create = () =>
      call('POST', `/api/f/${instanceKey}/people`, {
        token: state.token,
        headers: { 'Idempotency-Key': `bundles-${cardNumber}` },
        body: {
          $type: 'Original.Model.PersonInfo, Original.Model',
          GivenName: 'Dana',
          Surname: 'Deploy',
          CardAssignments: [{ EncodedCardNumber: cardNumber, DisplayCardNumber: String(cardNumber), ActiveOn: '2024-01-01T00:00:00Z', ExpiresOn: '2099-01-01T00:00:00Z' }],
        },
      });
    const created = await create();
    expect(created.status, created.text).toBe(201);
    // Its retry with the same Idempotency-Key is the same answer (the package's idempotency chunk
    // loads and keeps its record in the table); the search below finds one person.
    const retried = await create();
    expect([retried.status, retried.text]).toEqual([201, created.text]);
    expect(created.body).toMatchObject({ GivenName: 'Dana', Surname: 'Deploy', Href: expect.stringContaining(created.body.Key) });
    state.person = created.body;
    const cards = await call('GET', `${created.body.Href}/cards`, { token: state.token });
    expect(cards.status, cards.text).toBe(200);
    expect(cards.body.map((c: { EncodedCardNumber: unknown; Key: string }) => [c.EncodedCardNumber, c.Key])).toEqual([[cardNumber, created.body.CardAssignments[0].Key]]);
    const found = await call('POST', `/api/f/${instanceKey}/search`, { token: state.token, body: { 'CardAssignments.EncodedCardNumber': cardNumber } });
    expect(found.status, found.text).toBe(200);
    expect(found.body.map((p: { Key: string }) => p.Key)).toEqual([created.body.Key]);
  });

  it('provisions a person over SCIM through the folders package (its SCIM chunk, an application/scim+json body)', async () => {
    const made = await call('POST', `/api/f/${instanceKey}/scimtokens`, { token: state.token, body: { CommonName: 'Bundles' } });
    expect(made.status, made.text).toBe(201);
    const scim = made.body.Token as string;
    // application/scim+json is no text type for API Gateway: the body arrives base64.
    const user = await call('POST', `/scim/v2/${instanceKey}/Users`, {
      token: scim,
      contentType: 'application/scim+json',
      body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `bundles-${randomBytes(4).toString('hex')}@example.com` },
    });
    expect(user.status, user.text).toBe(201);
    expect(user.headers['content-type']).toMatch(/^application\/scim\+json/);
    const off = await call('PATCH', `/scim/v2/${instanceKey}/Users/${user.body.id}`, {
      token: scim,
      contentType: 'application/scim+json',
      body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] },
    });
    expect([off.status, off.body?.active], off.text).toEqual([200, false]);
    const bad = await call('GET', `/scim/v2/${instanceKey}/Users?filter=${encodeURIComponent('userName co "x"')}`, { token: scim });
    expect([bad.status, bad.body?.scimType]).toEqual([400, 'invalidFilter']);
  });

  it('connects and subscribes through the websocket package; the answer goes out through the Management API', async () => {
    state.connectionId = `${randomBytes(9).toString('base64url')}=`;
    const refused = await wsInvoke(wsEvent('$connect', `${state.connectionId}x`, { headers: { Host: 'localhost' } }));
    expect(refused.statusCode).toBe(401);
    const connected = await wsInvoke(wsEvent('$connect', state.connectionId, { headers: { Host: 'localhost' }, queryStringParameters: { access_token: state.token } }));
    expect(connected.statusCode).toBe(200);
    const topic = `/${instanceKey}/$`;
    const subscribed = await wsInvoke(wsEvent('$default', state.connectionId, { body: JSON.stringify({ action: 'subscribe', topic }) }));
    expect(subscribed.statusCode).toBe(200);
    expect(aws.posts).toEqual([{ connectionId: state.connectionId, message: { type: 'subscribed', topic } }]);
  });

  it('publishes an event through the apps and events packages', async () => {
    const app = await call('POST', `/api/f/${instanceKey}/apps`, {
      token: state.token,
      body: { $type: 'AppInfo', CommonName: 'Deploy check', Monikers: [{ Namespace: 'Vendor', Nickname: 'DeployCheck' }] },
    });
    expect(app.status, app.text).toBe(201);
    const type = await call('PUT', `${app.body.Href}/eventtypes`, {
      token: state.token,
      body: { $type: tag('EventTypeInfo'), CommonName: 'Door opened', Monikers: [{ Namespace: 'Vendor', Nickname: 'DoorOpened' }], Priority: 5 },
    });
    expect(type.status, type.text).toBe(201);
    const published = await call('POST', `/api/f/${instanceKey}/eventmessagesink`, {
      token: state.token,
      body: {
        $type: tag('EventMessagePosting'),
        OccurredOn: new Date().toISOString(),
        AppKey: app.body.Key,
        EventTypeMoniker: { Namespace: 'Vendor', Nickname: 'DoorOpened' },
        RelatedObjects: [{ Relation: 'Person', LinkedObjectKey: state.person.Key }],
        EventDataBsonBase64: Buffer.from(serialize({ Door: 'Front' })).toString('base64'),
      },
    });
    expect(published.status, published.text).toBe(201);
    state.eventKey = published.body.Key;

    // A filtered list loads the query engine on demand: an import() inside the package's one file.
    const keysOf = (r: CallResult) => (r.body as Array<{ Key: string }>).map((e) => e.Key);
    const matching = await call('GET', `/api/f/${instanceKey}/events`, { token: state.token, query: { query: `{Priority: {$gte: 5}, 'ObjectLinks.LinkedObjectKey': {$regex: "^${state.person.Key.slice(0, 8)}"}}` } });
    expect(matching.status, matching.text).toBe(200);
    expect(keysOf(matching)).toContain(state.eventKey);
    const other = await call('GET', `/api/f/${instanceKey}/events`, { token: state.token, query: { query: '{Priority: {$gt: 5}}' } });
    expect(other.status, other.text).toBe(200);
    expect(keysOf(other)).not.toContain(state.eventKey);

    // An aggregation runs its pipeline in the worker thread built beside the package's code; one
    // that crosses a cap answers 400 and the package answers the next one.
    const grouped = await call('POST', `/api/f/${instanceKey}/aggregate/Events`, {
      token: state.token,
      body: [{ $match: { Key: state.eventKey } }, { $group: { _id: '$EventData.Door', n: { $sum: 1 } } }],
    });
    expect(grouped.status, grouped.text).toBe(200);
    expect(grouped.body).toEqual([{ _id: 'Front', n: 1 }]);
    const tooBig = await call('POST', `/api/f/${instanceKey}/aggregate/Events`, { token: state.token, body: [{ $project: { x: { $range: [0, 1e9] } } }] });
    expect(tooBig.status, tooBig.text).toBe(400);
    expect(tooBig.body.Error).toBe('QueryTooExpensive');
  });

  it('hands the table\'s stream records to the fan-out package, which posts the event to the subscriber and publishes it over MQTT', async () => {
    const records = await streamRecords();
    expect(records.length).toBeGreaterThan(0);
    const fanout = family('fanout');
    for (let i = 0; i < records.length; i += 100) {
      const res = await fanout.invoke<DynamoDBBatchResponse>({ Records: records.slice(i, i + 100) });
      expect(res.batchItemFailures).toEqual([]);
    }
    const topic = `/${instanceKey}/$`;
    const delivered = aws.posts.filter((p) => p.connectionId === state.connectionId && p.message.type === 'event' && p.message.event.Key === state.eventKey);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.message).toMatchObject({ topic, event: { Key: state.eventKey, $type: expect.stringContaining('EventMessageData') } });
    const mqtt = aws.publishes.filter((p) => p.topic === topic && deserialize(p.payload).Key === state.eventKey);
    expect(mqtt).toHaveLength(1);
    // No webhook subscriptions: nothing queued; and no call reached a service nobody stood in for.
    expect(aws.sqs).toEqual([]);
    expect(aws.unexpected).toEqual([]);
  });

  it('the MQTT authorizer package accepts the access token and refuses a forged one', async () => {
    const mqttauth = family('mqttauth');
    const event = (username: string) => ({ signatureVerified: false, protocols: ['mqtt'], protocolData: { mqtt: { username, clientId: 'bundles' } }, connectionMetadata: { id: 'c1' } });
    const ok = await mqttauth.invoke(event(state.token!));
    expect(ok).toMatchObject({ isAuthenticated: true });
    const forged = await mqttauth.invoke(event(`${state.token!.slice(0, -4)}AAAA`));
    expect(forged).toMatchObject({ isAuthenticated: false });
  });

  it('disconnects through the websocket package', async () => {
    const res = await wsInvoke(wsEvent('$disconnect', state.connectionId!));
    expect(res.statusCode).toBe(200);
  });
});
