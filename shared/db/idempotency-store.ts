/**
 * Where `Idempotency-Key` records live: Powertools' DynamoDB persistence layer on the single table.
 * The protocol (the conditional put of an in-progress record, the stored answer, the payload
 * check, in-progress and 24-hour expiry) is the library's; this only places its records.
 *
 * Each record is one item, `IK#<hash>` / `IK` (item-keys.ts), whose `ttl` is the table's TTL
 * attribute, so DynamoDB deletes it after its 24 hours. The library's composite-key mode would put
 * every record under one partition key (`staticPkValue`), one hot partition for every tenant:
 * its own partition per record instead, as every other item kind of the table has.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { Db } from './client.ts';
import { IDEMPOTENCY_SK } from './item-keys.ts';
import { TABLE } from './table.ts';

class SingleTablePersistenceLayer extends DynamoDBPersistenceLayer {
  /** PK the record's own key (prefix and hash, from the library), SK fixed. */
  protected override getKey(idempotencyKey: string): Record<string, AttributeValue> {
    return { [TABLE.partitionKey]: { S: idempotencyKey }, [TABLE.sortKey]: { S: IDEMPOTENCY_SK } };
  }
}

const stores = new WeakMap<Db, BasePersistenceLayer>();

/**
 * The persistence layer of `db`'s table, one per client: it sends through `db`'s own DynamoDB
 * client (DynamoDB Local locally, and its calls are counted in the request's consumed capacity).
 */
export function idempotencyStore(db: Db): BasePersistenceLayer {
  let store = stores.get(db);
  if (!store) {
    store = new SingleTablePersistenceLayer({
      tableName: db.tableName,
      keyAttr: TABLE.partitionKey,
      expiryAttr: TABLE.ttlAttribute,
      awsSdkV3Client: db.raw,
    });
    stores.set(db, store);
  }
  return store;
}
