/**
 * SCIM items: the tokens of an instance, and the pages of an instance's people or access levels
 * that a SCIM listing reads.
 *
 * | item       | PK                      | SK           | attributes                                        |
 * | ---------- | ----------------------- | ------------ | ------------------------------------------------- |
 * | SCIM token | `SCIMT#<instanceKey>`   | `<tokenKey>` | Key, CommonName, Hash (sha256 of the token), CreatedOn, CreatedBy |
 *
 * Access patterns: a SCIM call reads its token by key beside its instance (one BatchGetItem);
 * the tokens of an instance are one Query of their partition (at most {@link MAX_SCIM_TOKENS});
 * revoking is one DeleteItem. A listing page is one keys-only Query on GSI2 (`T#<instance>#<collection>`)
 * to skip to its start (1 000 keys a request) and one Query of the page.
 */
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionFailed } from '../errors.ts';
import type { StoredObject } from '../model/stored-object.ts';
import type { Db } from './client.ts';
import { OBJECT_SK, SCIM_TOKEN_PREFIX, objectPk, partitionPk, scimTokenPk } from './item-keys.ts';
import type { ItemKey } from './item-reads.ts';
import { queryAll } from './requests.ts';
import { fromItem, send } from './objects-repo.ts';

/** Tokens an instance may hold at once: a listing is one small Query, and a leaked-token hunt stays short. */
export const MAX_SCIM_TOKENS = 25;

export interface StoredScimToken {
  readonly key: string;
  readonly instanceKey: string;
  readonly commonName: string;
  /** sha256 (hex) of the token: the token itself is never stored. */
  readonly hash: string;
  readonly createdOn: string;
  readonly createdBy: string;
}

export const scimTokenItemKey = (instanceKey: string, tokenKey: string): ItemKey => ({ PK: scimTokenPk(instanceKey), SK: tokenKey });

/** A token item as read (by key, or from its instance's partition); undefined for any other item. */
export function scimTokenOf(item: Record<string, unknown> | undefined): StoredScimToken | undefined {
  if (!item || typeof item.PK !== 'string' || !item.PK.startsWith(SCIM_TOKEN_PREFIX) || typeof item.Hash !== 'string') return undefined;
  return {
    key: item.SK as string,
    instanceKey: item.PK.slice(SCIM_TOKEN_PREFIX.length),
    commonName: typeof item.CommonName === 'string' ? item.CommonName : '',
    hash: item.Hash,
    createdOn: typeof item.CreatedOn === 'string' ? item.CreatedOn : '',
    createdBy: typeof item.CreatedBy === 'string' ? item.CreatedBy : '',
  };
}

/** Stores a new token (its key is new: a collision throws ConditionFailed). */
export async function putScimToken(db: Db, t: StoredScimToken): Promise<void> {
  try {
    await send(
      db,
      new PutCommand({
        TableName: db.tableName,
        Item: { ...scimTokenItemKey(t.instanceKey, t.key), Key: t.key, CommonName: t.commonName, Hash: t.hash, CreatedOn: t.createdOn, CreatedBy: t.createdBy },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') throw new ConditionFailed('SCIM token key taken');
    throw err;
  }
}

/** The tokens of an instance, oldest first (keys are time-ordered): one Query. */
export async function scimTokensOf(db: Db, instanceKey: string): Promise<StoredScimToken[]> {
  const out = await send<{ Items?: Record<string, unknown>[] }>(
    db,
    new QueryCommand({
      TableName: db.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': scimTokenPk(instanceKey) },
      ConsistentRead: true,
      Limit: MAX_SCIM_TOKENS + 1,
    }),
  );
  return (out.Items ?? []).map(scimTokenOf).filter((t): t is StoredScimToken => t !== undefined);
}

/** Revokes a token; false when the instance has no token of that key. */
export async function deleteScimToken(db: Db, instanceKey: string, tokenKey: string): Promise<boolean> {
  try {
    await send(
      db,
      new DeleteCommand({ TableName: db.tableName, Key: scimTokenItemKey(instanceKey, tokenKey), ConditionExpression: 'attribute_exists(PK)' }),
    );
    return true;
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

/**
 * One page of the objects of a collection in an instance, any folder of it (GSI2, creation order):
 * `skip` keys read keys-only to find where the page starts, then a Query of
 * at most `limit` items. `more` tells whether an object follows the page (one item more is read).
 */
export async function instancePage(
  db: Db,
  instanceKey: string,
  collection: string,
  skip: number,
  limit: number,
): Promise<{ items: StoredObject[]; more: boolean }> {
  const pk = partitionPk(instanceKey, collection);
  const query = { IndexName: 'GSI2', KeyConditionExpression: 'GSI2PK = :pk', ExpressionAttributeValues: { ':pk': pk } };
  let start: Record<string, unknown> | undefined;
  if (skip > 0) {
    const skipped = await queryAll(db, { ...query, ProjectionExpression: 'GSI2SK' }, { limit: skip });
    if (skipped.length < skip) return { items: [], more: false };
    const last = skipped[skipped.length - 1]!.GSI2SK as string;
    start = { GSI2PK: pk, GSI2SK: last, PK: objectPk(last), SK: OBJECT_SK };
  }
  // One item more than the page: whether an object follows it.
  const items = (await queryAll(db, query, { limit: limit + 1, ...(start ? { start } : {}) })).map(fromItem);
  const more = items.length > limit;
  if (more) items.length = limit;
  return { items, more };
}
