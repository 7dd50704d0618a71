/**
 * The IoT Core custom authorizer (`mqttauth`) against DynamoDB Local: every kind of token, the
 * token's place (MQTT username, URL query), and the policy it answers (the token's instance and
 * the instances below it; never iot:Publish; never a sibling or a parent).
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler, tokenOf, type IotAuthorizerEvent } from '#functions/mqttauth/handler.ts';
import type { CoreDeps } from '#shared/core-deps.ts';
import { instanceTree } from '#shared/db/objects-repo.ts';
import { createTestDb, withTimeline, type TestDb } from '../support/db.ts';
import { invalidTokens, mintToken, seedInstance, seedTenant, seedUser, testDeps, uniqueName, type Tenant } from '../support/tokens.ts';

let t: TestDb;
let deps: CoreDeps;
let P: Tenant;
let A: Tenant;
let C: Tenant;
let S: Tenant;
const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:gatehouse-mqttauth';
const context = { invokedFunctionArn: ARN } as Context;

const mqttEvent = (username: string | undefined): IotAuthorizerEvent => ({
  signatureVerified: false,
  protocols: ['tls', 'http', 'mqtt'],
  protocolData: { tls: { serverName: 'example.iot.eu-west-1.amazonaws.com' }, mqtt: { ...(username !== undefined ? { username } : {}), clientId: 'field-client' } },
  connectionMetadata: { id: 'c1' },
});

beforeAll(async () => {
  t = await createTestDb();
  deps = testDeps(t);
  P = await seedTenant(t, deps);
  A = await seedTenant(t, deps, { parent: P.instance });
  C = await seedTenant(t, deps, { parent: A.instance });
  S = await seedTenant(t, deps, { parent: P.instance });
});

afterAll(() => t?.db.raw.destroy());

describe('mqttauth', () => {
  it('refuses every bad token with isAuthenticated false and no policy', async () => {
    const handler = createHandler(() => deps);
    const disabled = await seedUser(t, A.instance, 'Operator', uniqueName('off'), { doc: { IsDisabled: true } });
    const offInstance = await seedInstance(t, uniqueName('Off'), P.instance, { IsDisabled: true });
    const offAdmin = await seedUser(t, offInstance, 'Administrator');
    const bad = [
      { name: 'missing', token: undefined },
      { name: 'malformed', token: 'abc.def' },
      ...(await invalidTokens(deps.config, deps.keys, A.users.Administrator, A.instance, P.instance)),
      { name: 'disabled user', token: await mintToken(deps.config, deps.keys, disabled, A.instance) },
      { name: 'disabled instance', token: await mintToken(deps.config, deps.keys, offAdmin, offInstance) },
      { name: 'expires within 5 minutes', token: await mintToken(deps.config, deps.keys, A.users.ReadOnly, A.instance, { ttlSeconds: 120 }) },
      // A door controller's user reads its download and records decisions, never live events.
      { name: 'Controller role', token: await mintToken(deps.config, deps.keys, await seedUser(t, A.instance, 'Controller'), A.instance) },
    ];
    for (const b of bad) {
      const answer = await handler(mqttEvent(b.token), context);
      expect(answer, b.name).toMatchObject({ isAuthenticated: false, policyDocuments: [] });
    }
  });

  it("answers a valid token with a policy over the token's instance and those below it only", async () => {
    const handler = createHandler(() => deps);
    const answer = await handler(mqttEvent(A.tokens.ReadOnly), context);
    expect(answer.isAuthenticated).toBe(true);
    expect(answer.principalId).toBe(A.users.ReadOnly.key);
    expect(answer.principalId).toMatch(/^[A-Za-z0-9]{1,128}$/);
    expect(answer.disconnectAfterInSeconds).toBeGreaterThan(3500);
    expect(answer.disconnectAfterInSeconds).toBeLessThanOrEqual(3600);
    expect(answer.refreshAfterInSeconds).toBe(300);
    const docs = answer.policyDocuments.map((d) => JSON.parse(d) as { Statement: Array<{ Effect: string; Action: string; Resource: string | string[] }> });
    for (const d of answer.policyDocuments) expect(d.length).toBeLessThanOrEqual(2048);
    const statements = docs.flatMap((d) => d.Statement);
    expect(statements.every((s) => s.Effect === 'Allow')).toBe(true);
    const resources = (action: string) => statements.filter((s) => s.Action === action).flatMap((s) => [s.Resource].flat());
    const base = 'arn:aws:iot:eu-west-1:123456789012';
    expect(resources('iot:Connect')).toEqual([`${base}:client/*`]);
    expect(resources('iot:Subscribe').sort()).toEqual([A, C].map((x) => `${base}:topicfilter//${x.instance.key}/*`).sort());
    expect(resources('iot:Receive').sort()).toEqual([A, C].map((x) => `${base}:topic//${x.instance.key}/*`).sort());
    expect(statements.map((s) => s.Action).sort()).toEqual(['iot:Connect', 'iot:Receive', 'iot:Subscribe']);
    const all = answer.policyDocuments.join('\n');
    for (const other of [P, S]) expect(all).not.toContain(other.instance.key);
  });

  it('takes the token from the URL query when the username is empty, and ignores IoT parameters after the token', async () => {
    const handler = createHandler(() => deps);
    const fromQuery: IotAuthorizerEvent = {
      protocolData: { http: { headers: {}, queryString: `?x-amz-customauthorizer-name=gatehouse&access_token=${C.tokens.Administrator}` } },
    };
    expect(tokenOf(fromQuery)).toBe(C.tokens.Administrator);
    const answer = await handler(fromQuery, context);
    expect(answer).toMatchObject({ isAuthenticated: true, principalId: C.users.Administrator.key });
    expect(tokenOf(mqttEvent(`${P.tokens.Operator}?x-amz-customauthorizer-name=gatehouse`))).toBe(P.tokens.Operator);
    const parent = await handler(mqttEvent(`${P.tokens.Operator}?x-amz-customauthorizer-name=gatehouse`), context);
    expect(parent.isAuthenticated).toBe(true);
    // P sees itself and the three instances below it, and the disabled instance made above.
    for (const x of [P, A, C, S]) expect(parent.policyDocuments.join('')).toContain(`topic//${x.instance.key}/*`);
  });

  it("starts the scope's Query beside the token's status read, and drops it for a token that claims another instance", async () => {
    await withTimeline(t, async (timeline, idle) => {
      // A fresh environment: nothing of the caller's status is cached, so the verification reads it.
      const cold = testDeps(t);
      const answer = await createHandler(() => cold)(mqttEvent(A.tokens.Operator), context);
      expect(answer.isAuthenticated).toBe(true);
      expect(answer.policyDocuments.join('')).toContain(`topicfilter//${C.instance.key}/*`);
      const queryStarts = timeline.indexOf('start Query');
      const statusEnds = timeline.findIndex((e) => e.startsWith('end ') && e !== 'end Query');
      expect(queryStarts).toBeGreaterThanOrEqual(0);
      expect(statusEnds).toBeGreaterThan(queryStarts);

      // A payload rewritten to claim the parent instance (which has instances below it): on a new
      // environment its early read is one Query, dropped, and nothing is granted; once the keys
      // are known, it is refused before any read.
      const [tampered] = (await invalidTokens(cold.config, cold.keys, A.users.Administrator, A.instance, P.instance)).filter((b) => b.name === 'tampered payload');
      await idle();
      timeline.length = 0;
      expect(await createHandler(() => testDeps(t))(mqttEvent(tampered!.token), context)).toMatchObject({ isAuthenticated: false, policyDocuments: [] });
      await idle();
      expect(timeline.filter((e) => e === 'start Query')).toHaveLength(1);
      timeline.length = 0;
      expect(await createHandler(() => cold)(mqttEvent(tampered!.token), context)).toMatchObject({ isAuthenticated: false, policyDocuments: [] });
      expect(timeline).toEqual([]);
    });
  });

  it('splits a large scope over several policy documents, each under 2048 characters, and caps it', async () => {
    const root = await seedInstance(t, uniqueName('Big'));
    for (let i = 0; i < 24; i++) await seedInstance(t, uniqueName('Sub'), root);
    const admin = await seedUser(t, root, 'Administrator');
    const answer = await createHandler(() => deps)(mqttEvent(await mintToken(deps.config, deps.keys, admin, root)), context);
    expect(answer.policyDocuments).toHaveLength(3);
    for (const d of answer.policyDocuments) expect(d.length).toBeLessThanOrEqual(2048);
    expect((answer.policyDocuments.join('').match(/topicfilter\/\//g) ?? []).length).toBe(25);
    const capped = await instanceTree(t.db, root.key, 10);
    expect(capped).toEqual({ keys: expect.any(Array), truncated: true });
    expect(capped.keys).toHaveLength(10);
    expect(capped.keys[0]).toBe(root.key);
  });
});
