/**
 * The object repository's writes (see `objects-repo.ts` for the item layout): an object with its
 * claims in one transaction, version-checked replaces and deletes, notes, status and tombstone
 * items. Apart from the reads so that a function serving reads does not load them at its cold
 * start; a function that writes loads them with its first write.
 */
import { PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { ConditionFailed, StoreUnavailable } from '../errors.ts';
import { stringifyJson } from '../json.ts';
import type { Db } from './client.ts';
import { OBJECT_SK, STATUS_SK, TOMBSTONE_SK, cardNumberPk, collectionPk, namePk, nameSk, objectPk, partitionPk } from './item-keys.ts';
import { claimItemKey, ownInstance, send, type ExtraWrite } from './objects-repo.ts';
import { updateVersioned, versionCondition } from './requests.ts';
import type { Claim, StoredObject } from '../model/stored-object.ts';

type TransactItem = ExtraWrite;

export function toItem(o: StoredObject): Record<string, unknown> {
  const name = typeof o.doc.CommonName === 'string' && o.doc.CommonName !== '' ? o.doc.CommonName : undefined;
  return {
    PK: objectPk(o.key),
    SK: OBJECT_SK,
    GSI1PK: collectionPk(o.folder, o.collection),
    GSI1SK: o.key,
    GSI2PK: partitionPk(ownInstance(o), o.collection),
    GSI2SK: o.key,
    ...(name !== undefined ? { GSI3PK: namePk(ownInstance(o)), GSI3SK: nameSk(name, o.key) } : {}),
    Key: o.key,
    Coll: o.collection,
    Type: o.type,
    Folder: o.folder,
    Path: [...o.path],
    Instances: [...o.instances],
    Version: o.version,
    Name: name,
    Doc: stringifyJson(o.doc),
    ...(o.sessionGeneration ? { SessionGeneration: o.sessionGeneration } : {}),
  };
}

/** Card claims are also indexed by number alone, so a search by card number finds every facility. */
function claimIndex(c: Claim, owner: string): Record<string, string> {
  if (c.kind !== 'card') return {};
  return { GSI3PK: cardNumberPk(c.scope, c.value.slice(c.value.indexOf(':') + 1)), GSI3SK: owner };
}

function putClaim(db: Db, c: Claim, owner: string): TransactItem {
  return {
    Put: {
      TableName: db.tableName,
      Item: { ...claimItemKey(c), Owner: owner, Kind: c.kind, ...claimIndex(c, owner) },
      // Re-claiming a value this object already owns is allowed (idempotent update).
      ConditionExpression: 'attribute_not_exists(PK) OR #owner = :owner',
      ExpressionAttributeNames: { '#owner': 'Owner' },
      ExpressionAttributeValues: { ':owner': owner },
    },
  };
}

function deleteClaim(db: Db, c: Claim, owner: string): TransactItem {
  return {
    Delete: {
      TableName: db.tableName,
      Key: claimItemKey(c),
      ConditionExpression: 'attribute_not_exists(PK) OR #owner = :owner',
      ExpressionAttributeNames: { '#owner': 'Owner' },
      ExpressionAttributeValues: { ':owner': owner },
    },
  };
}

/**
 * Runs a transaction. A cancelled transaction becomes {@link ConditionFailed} whose `reasons`
 * give the index (in `items` order) and code of each failed condition.
 */
export async function transact(db: Db, items: TransactItem[]): Promise<void> {
  try {
    await send(db, new TransactWriteCommand({ TransactItems: items }));
  } catch (err) {
    if (err instanceof TransactionCanceledException || (err as { name?: string }).name === 'TransactionCanceledException') {
      const reasons = ((err as TransactionCanceledException).CancellationReasons ?? [])
        .map((r, index) => ({ index, code: r.Code ?? 'None' }))
        .filter((r) => r.code !== 'None');
      if (reasons.some((r) => r.code === 'ConditionalCheckFailed')) {
        throw new ConditionFailed('A condition of the transaction failed.', reasons);
      }
      if (reasons.some((r) => r.code === 'TransactionConflict' || r.code === 'ThrottlingError')) {
        throw new StoreUnavailable(err);
      }
    }
    throw err;
  }
}

/** The failed claim of a cancelled create/replace, if a claim (not the object) failed. */
export function failedClaim(err: unknown, claims: readonly Claim[], offset: number): Claim | undefined {
  if (!(err instanceof ConditionFailed)) return undefined;
  for (const r of err.reasons) {
    if (r.code === 'ConditionalCheckFailed' && r.index >= offset && r.index < offset + claims.length) {
      return claims[r.index - offset];
    }
  }
  return undefined;
}

/**
 * Creates an object and its claims in one transaction. Throws {@link ConditionFailed} when the
 * key exists (reason index 0) or a claim is owned by another object (index 1 + claim index).
 */
export async function createObject(db: Db, o: StoredObject, claims: readonly Claim[] = [], extra: TransactItem[] = []): Promise<void> {
  await transact(db, [
    { Put: { TableName: db.tableName, Item: toItem(o), ConditionExpression: 'attribute_not_exists(PK)' } },
    ...claims.map((c) => putClaim(db, c, o.key)),
    ...extra,
  ]);
}

/**
 * Replaces an object whose stored version is `previousVersion` (optimistic concurrency: another
 * writer in between makes reason index 0 fail), adding and releasing claims in the same
 * transaction.
 */
export async function replaceObject(
  db: Db,
  next: StoredObject,
  previousVersion: number,
  addClaims: readonly Claim[] = [],
  removeClaims: readonly Claim[] = [],
): Promise<void> {
  await transact(db, [
    {
      Put: {
        TableName: db.tableName,
        Item: toItem(next),
        ...versionCondition(previousVersion),
      },
    },
    ...addClaims.map((c) => putClaim(db, c, next.key)),
    ...removeClaims.map((c) => deleteClaim(db, c, next.key)),
  ]);
}

/** Deletes an object (if still at `version`) and releases its claims, in one transaction. */
export async function deleteObject(db: Db, o: StoredObject, claims: readonly Claim[] = [], extra: TransactItem[] = []): Promise<void> {
  await transact(db, [
    {
      Delete: {
        TableName: db.tableName,
        Key: { PK: objectPk(o.key), SK: OBJECT_SK },
        ...versionCondition(o.version),
      },
    },
    ...claims.map((c) => deleteClaim(db, c, o.key)),
    ...extra,
  ]);
}

/** Writes a document change that is not a client edit (notes): no version bump, version-checked. */
export async function updateDoc(db: Db, o: StoredObject, doc: Record<string, unknown>): Promise<void> {
  let updated: Record<string, unknown> | undefined;
  try {
    updated = await updateVersioned(db, { PK: objectPk(o.key), SK: OBJECT_SK }, o.version, {
      set: { Doc: stringifyJson(doc) },
      unchanged: { Doc: stringifyJson(o.doc) },
    });
  } catch (err) {
    // A transaction was working on the item at that moment: nothing was written, and the caller
    // reads again and retries, as for a change.
    if ((err as { name?: string }).name === 'TransactionConflictException') throw new ConditionFailed('The object was busy.');
    throw err;
  }
  if (!updated) throw new ConditionFailed('The object changed.');
}

/** Writes any item unconditionally (status items). */
async function putItem(db: Db, item: Record<string, unknown>): Promise<void> {
  await send(db, new PutCommand({ TableName: db.tableName, Item: item }));
}

/**
 * Like {@link replaceObject}, with extra transaction items (a user's AUTH item) after the claims,
 * and conditional on the whole stored document as read as well as on its version: document
 * changes that do not bump the version (notes, see {@link updateDoc}) are never overwritten.
 */
export async function replaceObjectWith(
  db: Db,
  next: StoredObject,
  previous: Pick<StoredObject, 'version' | 'doc'>,
  addClaims: readonly Claim[] = [],
  removeClaims: readonly Claim[] = [],
  extra: ExtraWrite[] = [],
): Promise<void> {
  await transact(db, [
    {
      Put: {
        TableName: db.tableName,
        Item: toItem(next),
        ...versionCondition(previous.version, { Doc: stringifyJson(previous.doc) }),
      },
    },
    ...addClaims.map((c) => putClaim(db, c, next.key)),
    ...removeClaims.map((c) => deleteClaim(db, c, next.key)),
    ...extra,
  ]);
}

/** True when a write failed because the condition of transaction item `index` failed. */
export function conditionFailedAt(err: unknown, index: number): boolean {
  return err instanceof ConditionFailed && err.reasons.some((r) => r.index === index && r.code === 'ConditionalCheckFailed');
}

/**
 * True when a transaction was cancelled only because another transaction was working on one of
 * its items at the same moment (DynamoDB answers TransactionConflict; the repository raises
 * {@link StoreUnavailable}). Such a write may simply be tried again.
 */
export function isTransactionConflict(err: unknown): boolean {
  if (!(err instanceof StoreUnavailable)) return false;
  const cause = err.cause as { name?: string; CancellationReasons?: Array<{ Code?: string }> } | undefined;
  return (
    cause?.name === 'TransactionCanceledException' && (cause.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict')
  );
}

/** Stores the latest status document of an object (one PutItem, last writer wins). */
export async function putObjectStatus(db: Db, key: string, doc: Record<string, unknown>, updatedOn: string): Promise<void> {
  await putItem(db, { PK: objectPk(key), SK: STATUS_SK, Key: key, Doc: stringifyJson(doc), UpdatedOn: updatedOn });
}

/** A transaction item deleting an object's status item (with the object). */
export function deleteObjectStatusItem(db: Db, key: string): ExtraWrite {
  return { Delete: { TableName: db.tableName, Key: { PK: objectPk(key), SK: STATUS_SK } } };
}

/**
 * A transaction item leaving a tombstone for a deleted folder or instance, so the paths it
 * served keep answering 404 (not 403) to callers whose scope held it. Expires after `ttlDays`.
 */
export function putTombstoneItem(db: Db, o: StoredObject, nowMs: number, ttlDays = 90): ExtraWrite {
  return {
    Put: {
      TableName: db.tableName,
      Item: {
        PK: objectPk(o.key),
        SK: TOMBSTONE_SK,
        Key: o.key,
        Coll: o.collection,
        Path: [...o.path],
        ttl: Math.floor(nowMs / 1000) + ttlDays * 86400,
      },
    },
  };
}
