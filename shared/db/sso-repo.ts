/**
 * The single sign-on repository: an identity provider's sealed client secret, the logins waiting
 * for the provider's answer, and the one-time codes handed to clients.
 *
 * | item                  | PK                          | SK          | holds |
 * | --------------------- | --------------------------- | ----------- | ----- |
 * | provider's secret     | `O#<providerKey>`           | `IDPSECRET` | Sealed (the ClientSecret, sealed by the caller) |
 * | pending login         | `SSO#<sha256 of our state>` | `P`         | the authorize request and our nonce and PKCE verifier; ExpiresAt, ttl |
 * | authorization code    | `SSO#<sha256 of the code>`  | `C`         | UserKey, InstanceKey, ClientId, RedirectUri, CodeChallenge; ExpiresAt, ttl |
 *
 * A pending login and a code are each taken by one conditional DeleteItem returning what it
 * deleted: used once, whatever the number of parallel callbacks or redemptions. Items are keyed by
 * a hash of the random value, so the table never holds a code that could be redeemed. DynamoDB's
 * TTL deletion is lazy: the expiry is checked on every take.
 */
import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from './client.ts';
import { IDP_SECRET_SK, SSO_CODE_SK, SSO_PENDING_SK, objectPk, ssoCodePk, ssoPendingPk } from './item-keys.ts';
import { send, type ExtraWrite } from './objects-repo.ts';

export { IDP_SECRET_SK };

/** Items are keyed by a hash of the random value they are taken with. */
const hashOf = (value: string): string => createHash('sha256').update(value, 'utf8').digest('base64url');
const KINDS = { [SSO_PENDING_SK]: ssoPendingPk, [SSO_CODE_SK]: ssoCodePk } as const;
type SsoSk = typeof SSO_PENDING_SK | typeof SSO_CODE_SK;
const ssoPk = (sk: SsoSk, value: string): string => KINDS[sk](hashOf(value));

/** A transaction item that stores a provider's sealed client secret (with the provider object). */
export function providerSecretPut(db: Db, providerKey: string, sealed: string): ExtraWrite {
  return { Put: { TableName: db.tableName, Item: { PK: objectPk(providerKey), SK: IDP_SECRET_SK, Sealed: sealed } } };
}

/** A transaction item that deletes a provider's secret (with the provider object). */
export function providerSecretDelete(db: Db, providerKey: string): ExtraWrite {
  return { Delete: { TableName: db.tableName, Key: { PK: objectPk(providerKey), SK: IDP_SECRET_SK } } };
}

/** A provider's sealed client secret, or undefined when it has none. */
export async function getProviderSecret(db: Db, providerKey: string): Promise<string | undefined> {
  const out = await send<{ Item?: Record<string, unknown> }>(
    db,
    new GetCommand({ TableName: db.tableName, Key: { PK: objectPk(providerKey), SK: IDP_SECRET_SK }, ConsistentRead: true }),
  );
  return typeof out.Item?.Sealed === 'string' ? out.Item.Sealed : undefined;
}

const isConditionFailure = (err: unknown): boolean => (err as { name?: string } | null)?.name === 'ConditionalCheckFailedException';

/** Stores an item under the hash of `secret` until `expiresAt` (ms). */
async function putOnce(db: Db, secret: string, sk: SsoSk, data: Record<string, unknown>, expiresAt: number): Promise<void> {
  await send(
    db,
    new PutCommand({
      TableName: db.tableName,
      Item: { PK: ssoPk(sk, secret), SK: sk, Data: data, ExpiresAt: expiresAt, ttl: Math.ceil(expiresAt / 1000) + 60 },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
}

/** Deletes the item under the hash of `secret` and returns its data: for one caller only, and only before it expires. */
async function takeOnce(db: Db, secret: string, sk: SsoSk, nowMs: number): Promise<Record<string, unknown> | undefined> {
  try {
    const out = await send<{ Attributes?: Record<string, unknown> }>(
      db,
      new DeleteCommand({
        TableName: db.tableName,
        Key: { PK: ssoPk(sk, secret), SK: sk },
        ConditionExpression: 'attribute_exists(PK)',
        ReturnValues: 'ALL_OLD',
      }),
    );
    const item = out.Attributes;
    if (!item || typeof item.ExpiresAt !== 'number' || item.ExpiresAt <= nowMs) return undefined;
    return item.Data as Record<string, unknown>;
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/** Stores a login waiting for the provider's answer, keyed by our `state`. */
export const putPendingLogin = (db: Db, state: string, data: Record<string, unknown>, expiresAt: number): Promise<void> =>
  putOnce(db, state, SSO_PENDING_SK, data, expiresAt);

/** Takes the pending login of our `state` (once); undefined when unknown, taken or expired. */
export const takePendingLogin = (db: Db, state: string, nowMs: number): Promise<Record<string, unknown> | undefined> =>
  takeOnce(db, state, SSO_PENDING_SK, nowMs);

/** Stores a one-time authorization code's grant. */
export const putAuthorizationCode = (db: Db, code: string, data: Record<string, unknown>, expiresAt: number): Promise<void> =>
  putOnce(db, code, SSO_CODE_SK, data, expiresAt);

/** Redeems a code (once); undefined when unknown, used or expired. */
export const takeAuthorizationCode = (db: Db, code: string, nowMs: number): Promise<Record<string, unknown> | undefined> =>
  takeOnce(db, code, SSO_CODE_SK, nowMs);
