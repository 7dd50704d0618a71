/**
 * Secrets at rest on the local runtime (issue #34, finding 8), on a runtime spawned with its own
 * DynamoDB Local and data directory, as `npm start` runs:
 * - the data directory (one an earlier version left readable, too) and every directory in it are
 *   0700, every file 0600: the database file DynamoDB Local makes, the endpoint file, the keys;
 * - a webhook's stored secret (read from the table through the runtime's DynamoDB endpoint) is not
 *   the secret the API returned, while deliveries still verify with that one, after a rotation
 *   too; a secret stored in clear by an earlier version still signs, and is sealed by the next
 *   write of its subscription.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, newDataDir, newRuntimeAdmin, spawnRuntime, type RuntimeAdmin, type SpawnedRuntime } from '../support/runtime.ts';
import { documentedFetch } from '../support/documented-fetch.ts';
import { WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';

let runtime: SpawnedRuntime;
let admin: RuntimeAdmin;
let tableName: string;
let token: string;
let doc: DynamoDBDocumentClient;
const rx = new WebhookReceiver();

beforeAll(async () => {
  await rx.start();
  admin = newRuntimeAdmin('AtRest');
  tableName = `atrest-${randomBytes(4).toString('hex')}`;
  // A data directory an earlier version left readable to everyone, with a readable file in it.
  const dataDir = await newDataDir();
  await chmod(dataDir, 0o755);
  await writeFile(join(dataDir, 'left-over.txt'), 'from an earlier version\n', { mode: 0o644 });
  await chmod(join(dataDir, 'left-over.txt'), 0o644);
  runtime = await spawnRuntime({
    dataDir,
    env: {
      GATEHOUSE_TABLE_NAME: tableName,
      GATEHOUSE_INSTANCE: admin.instanceName,
      GATEHOUSE_ADMIN_USER: admin.userName,
      GATEHOUSE_ADMIN_PASSWORD: admin.password,
      GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
    },
  });
  token = await adminToken(runtime.url, admin);
  doc = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: runtime.dynamodbEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );
}, 180_000);

afterAll(async () => {
  doc?.destroy();
  await runtime?.stop();
  await rx.stop();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await documentedFetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Every path under `dir` with its permission bits (`dir` itself first). */
async function modes(dir: string): Promise<Array<{ path: string; dir: boolean; mode: number }>> {
  const out = [{ path: dir, dir: true, mode: (await stat(dir)).mode & 0o777 }];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    out.push({ path, dir: entry.isDirectory(), mode: (await stat(path)).mode & 0o777 });
  }
  return out;
}

/** The subscription's item as stored in the runtime's table. */
async function storedItem(instanceKey: string, key: string): Promise<Record<string, unknown>> {
  const out = await doc.send(new GetCommand({ TableName: tableName, Key: { PK: `WH#${instanceKey}`, SK: key }, ConsistentRead: true }));
  return out.Item!;
}

/** Sends the subscription's test delivery; true when the receiver verified it with its registered secrets. */
async function verifiedTestDelivery(hook: { Href: string }, path: string): Promise<boolean> {
  const before = rx.received(path).length;
  const sent = await call('POST', `${hook.Href}/test`);
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  return waitFor(() => rx.received(path).length > before, 10_000);
}

describe('the local data directory', () => {
  it('is its user\'s only: the directories 0700 and every file 0600, the database and the endpoint file included', async () => {
    // A table write has made DynamoDB Local's database file by now (the seeding wrote the admin).
    const entries = await modes(runtime.dataDir);
    const files = entries.filter((e) => !e.dir).map((e) => e.path.slice(runtime.dataDir.length + 1));
    expect(files).toEqual(expect.arrayContaining(['dynamodb-endpoint', 'left-over.txt', join('keys', 'signing-key.json')]));
    expect(files.some((f) => f.startsWith(`dynamodb${'/'}`) && f.endsWith('.db'))).toBe(true);
    expect(entries.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600)).map((e) => `${e.path} ${e.mode.toString(8)}`)).toEqual([]);
  });
});

describe('webhook secrets at rest', () => {
  it('stores a secret that is not the one the API returned, and deliveries verify with the returned one, after a rotation too', async () => {
    const path = `/at-rest-${randomBytes(3).toString('hex')}`;
    const created = await call('POST', `/api/f/${runtime.instanceKey}/webhooks`, { CommonName: 'at rest', Url: rx.endpoint(path) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const hook = created.body;
    expect(hook.Secret).toMatch(/^whsec_/);

    const item = await storedItem(runtime.instanceKey, hook.Key);
    expect(typeof item.Secret).toBe('string');
    expect(item.Secret).not.toBe(hook.Secret);
    expect(JSON.stringify(item)).not.toContain(hook.Secret.slice('whsec_'.length));

    rx.secrets(path, hook.Secret);
    expect(await verifiedTestDelivery(hook, path)).toBe(true);
    expect(rx.invalid(path)).toEqual([]);

    const rotated = await call('POST', `${hook.Href}/rotatesecret`);
    expect(rotated.status).toBe(200);
    const after = await storedItem(runtime.instanceKey, hook.Key);
    for (const secret of [hook.Secret, rotated.body.Secret]) expect(JSON.stringify(after)).not.toContain(secret.slice('whsec_'.length));
    // Signed with both while the previous secret lasts: the receiver checks with the new one only.
    rx.secrets(path, rotated.body.Secret);
    expect(await verifiedTestDelivery(hook, path)).toBe(true);
    expect(rx.invalid(path)).toEqual([]);
  });

  it('still signs with a secret an earlier version stored in clear, and seals it with the subscription\'s next write', async () => {
    const path = `/legacy-${randomBytes(3).toString('hex')}`;
    const url = rx.endpoint(path);
    const created = await call('POST', `/api/f/${runtime.instanceKey}/webhooks`, { CommonName: 'legacy', Url: url });
    expect(created.status).toBe(201);
    const hook = created.body;
    const clear = `whsec_${randomBytes(32).toString('base64')}`;
    await doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { PK: `WH#${runtime.instanceKey}`, SK: hook.Key },
        UpdateExpression: 'SET Secret = :clear',
        ExpressionAttributeValues: { ':clear': clear },
      }),
    );
    rx.secrets(path, clear);
    expect(await verifiedTestDelivery(hook, path)).toBe(true);

    const replaced = await call('PUT', hook.Href, { CommonName: 'legacy, renamed', Url: url });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect((await storedItem(runtime.instanceKey, hook.Key)).Secret).not.toBe(clear);
    expect(await verifiedTestDelivery(hook, path)).toBe(true);
    expect(rx.invalid(path)).toEqual([]);
  });
});
