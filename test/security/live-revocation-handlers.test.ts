/**
 * Issue #34, finding 3, at the handlers on DynamoDB Local (the code AWS runs): the `fanout`
 * family closes a revoked user's WebSocket connections through the Management API when the
 * user's record comes down the table's stream, and disconnects the user's MQTT clients that the
 * IoT authorizer (`mqttauth`) recorded (IoT's DeleteConnection, by client id); the `websocket`
 * family refuses a subscription
 * (and closes the connection) of a user revoked a moment ago, past the status cache that the same
 * environment filled when the connection opened.
 */
import { randomBytes } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue, DynamoDBRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createFanoutHandler } from '#functions/fanout/handler.ts';
import { createHandler as createMqttAuthHandler } from '#functions/mqttauth/handler.ts';
import { createHandler as createWebSocketHandler } from '#functions/websocket/handler.ts';
import { issueAccessToken } from '#shared/auth/access-tokens.ts';
import { createInstance, createUser } from '#shared/auth/provisioning.ts';
import { getConnection } from '#shared/db/live-repo.ts';
import { getItem } from '#shared/db/objects-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import type { Role } from '#shared/auth/principal.ts';
import { mqttClientsOfUser } from '#shared/db/mqtt-clients.ts';
import { createLiveDeps, type LiveDeps } from '#shared/live/live-deps.ts';
import type { MqttPublisher } from '#shared/live/mqtt/mqtt-channel.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { RecordingConnections, connectEvent, messageEvent, newConnectionId } from '../support/live-handlers.ts';

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

let t: TestDb;
let connections: RecordingConnections;
let deps: LiveDeps;
let websocket: ReturnType<typeof createWebSocketHandler>;
let fanout: ReturnType<typeof createFanoutHandler>;
let instance: StoredObject;
/** Stands in for the IoT data plane: the client ids the fan-out disconnected. */
const disconnected: string[] = [];
const iot: MqttPublisher = {
  publish: async () => {},
  disconnect: async (clientId) => {
    disconnected.push(clientId);
  },
};

async function newUser(role: Role = 'Operator'): Promise<{ user: StoredObject; token: string }> {
  const name = `u${randomBytes(4).toString('hex')}`;
  const user = await createUser(t.db, { instance, name, password: 'Passw0rd!long', role });
  const { token } = await issueAccessToken(
    deps.keys,
    deps.config,
    { userKey: user.key, userName: name, instanceKey: instance.key, instanceName: String(instance.doc.CommonName), role },
    new Date(),
  );
  return { user, token };
}

async function open(token: string): Promise<string> {
  const id = newConnectionId();
  expect(await websocket(connectEvent(id, { token }))).toEqual({ statusCode: 200 });
  return id;
}

/** The stored user item, and the same item with `change` applied, as a MODIFY stream record. */
async function modified(user: StoredObject, change: (item: Record<string, unknown>) => Record<string, unknown>): Promise<DynamoDBRecord> {
  const old = await getItem(t.db, `O#${user.key}`, 'A');
  expect(old).toBeDefined();
  const image = (i: Record<string, unknown>) => marshall(i, { removeUndefinedValues: true }) as Record<string, AttributeValue>;
  return {
    eventID: randomBytes(4).toString('hex'),
    eventName: 'MODIFY',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      Keys: { PK: { S: `O#${user.key}` }, SK: { S: 'A' } },
      OldImage: image(old!),
      NewImage: image(change(old!)),
      SequenceNumber: String(Date.now()),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
}

const withDoc = (item: Record<string, unknown>, fields: Record<string, unknown>) => ({ ...item, Doc: JSON.stringify({ ...JSON.parse(item.Doc as string), ...fields }) });

beforeAll(async () => {
  t = await createTestDb();
  connections = new RecordingConnections();
  deps = createLiveDeps({ config: t.config, db: t.db, connections, mqtt: iot });
  websocket = createWebSocketHandler(() => deps);
  fanout = createFanoutHandler(() => deps);
  instance = await createInstance(t.db, { name: `Revoke ${randomBytes(4).toString('hex')}` });
});

describe('the fan-out closes a revoked user\'s WebSocket connections', () => {
  const cases: ReadonlyArray<{ name: string; change: (item: Record<string, unknown>) => Record<string, unknown> }> = [
    { name: 'a higher session generation (new password, sign out everywhere)', change: (i) => ({ ...i, SessionGeneration: Number(i.SessionGeneration ?? 0) + 1 }) },
    { name: 'disabled', change: (i) => withDoc(i, { IsDisabled: true }) },
    { name: 'another role', change: (i) => withDoc(i, { Role: 'ReadOnly' }) },
  ];

  it.each(cases)('$name: every connection of the user is closed and forgotten, no other', async ({ change }) => {
    const victim = await newUser();
    const bystander = await newUser();
    const [a, b, other] = [await open(victim.token), await open(victim.token), await open(bystander.token)];

    const res = await fanout({ Records: [await modified(victim.user, change)] });

    expect(res.batchItemFailures).toEqual([]);
    expect([...connections.closed]).toEqual(expect.arrayContaining([a, b]));
    expect(connections.closed.has(other)).toBe(false);
    expect(await getConnection(t.db, a, nowSeconds())).toBeUndefined();
    expect(await getConnection(t.db, b, nowSeconds())).toBeUndefined();
    expect(await getConnection(t.db, other, nowSeconds())).toBeDefined();
  });

  it('closes the connections of a deleted user', async () => {
    const victim = await newUser();
    const id = await open(victim.token);
    const record = await modified(victim.user, (i) => i);
    const removed: DynamoDBRecord = { ...record, eventName: 'REMOVE', dynamodb: { ...record.dynamodb!, NewImage: undefined } };

    expect((await fanout({ Records: [removed] })).batchItemFailures).toEqual([]);

    expect(connections.closed.has(id)).toBe(true);
    expect(await getConnection(t.db, id, nowSeconds())).toBeUndefined();
  });

  it('leaves the connections alone when the user changed in another way', async () => {
    const user = await newUser();
    const id = await open(user.token);

    await fanout({ Records: [await modified(user.user, (i) => withDoc(i, { Email: 'someone@example.com' }))] });

    expect(connections.closed.has(id)).toBe(false);
    expect(await getConnection(t.db, id, nowSeconds())).toBeDefined();
  });
});

describe('a subscription re-reads the caller\'s status', () => {
  it('refuses a user signed out a moment ago and closes its connection', async () => {
    const { user, token } = await newUser();
    const id = await open(token);
    const topic = `/${instance.key}/$`;
    await websocket(messageEvent(id, { action: 'subscribe', topic }));
    expect(connections.last(id)).toEqual({ type: 'subscribed', topic });

    // What "sign out everywhere" writes; the environment's status cache still says "ok".
    await t.db.doc.send(
      new UpdateCommand({ TableName: t.db.tableName, Key: { PK: `O#${user.key}`, SK: 'A' }, UpdateExpression: 'SET SessionGeneration = :g', ExpressionAttributeValues: { ':g': 1 } }),
    );
    await websocket(messageEvent(id, { action: 'subscribe', topic }));

    expect(connections.last(id)).toMatchObject({ type: 'error', error: 'Forbidden', topic });
    expect(connections.closed.has(id)).toBe(true);
    expect(await getConnection(t.db, id, nowSeconds())).toBeUndefined();
  });
});

describe('in AWS, the fan-out disconnects the MQTT clients the authorizer let in for a revoked user', () => {
  const authorize = (token: string, clientId: string) =>
    createMqttAuthHandler(() => deps)({ protocols: ['mqtt'], protocolData: { mqtt: { username: token, clientId } } });

  it('records each client the authorizer lets in, and disconnects the revoked user\'s clients only', async () => {
    const victim = await newUser();
    const bystander = await newUser();
    const ids = { phone: `phone-${randomBytes(4).toString('hex')}`, panel: `panel-${randomBytes(4).toString('hex')}`, other: `other-${randomBytes(4).toString('hex')}` };
    for (const [token, clientId] of [
      [victim.token, ids.phone],
      [victim.token, ids.panel],
      [bystander.token, ids.other],
    ] as const) {
      expect((await authorize(token, clientId)).isAuthenticated).toBe(true);
    }
    expect((await mqttClientsOfUser(t.db, victim.user.key, nowSeconds())).sort()).toEqual([ids.phone, ids.panel].sort());

    // "Sign out everywhere" as written, and its stream record.
    const record = await modified(victim.user, (i) => ({ ...i, SessionGeneration: 1 }));
    await t.db.doc.send(
      new UpdateCommand({ TableName: t.db.tableName, Key: { PK: `O#${victim.user.key}`, SK: 'A' }, UpdateExpression: 'SET SessionGeneration = :g', ExpressionAttributeValues: { ':g': 1 } }),
    );
    const res = await fanout({ Records: [record] });

    expect(res.batchItemFailures).toEqual([]);
    expect(disconnected).toEqual(expect.arrayContaining([ids.phone, ids.panel]));
    expect(disconnected).not.toContain(ids.other);
    // The client reconnecting with the same token is refused, though this environment's status
    // cache still holds the verdict of its first connection.
    expect((await authorize(victim.token, ids.phone)).isAuthenticated).toBe(false);
  });
});
