/**
 * Creates the tables on DynamoDB Local (the local runtime, the tests and the benchmark; in AWS the
 * CDK stack creates the table: infra/gatehouse-table.ts), both from the declaration
 * shared/db/table.ts holds: the main table with its indexes, TTL attribute and stream, and the
 * webhook queue table beside it (same keys, no index, no stream).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type CreateTableCommandInput,
  type GlobalSecondaryIndex,
} from '@aws-sdk/client-dynamodb';
import type { Db } from '#shared/db/client.ts';
import { TABLE } from '#shared/db/table.ts';

/** The key schema every table of ours has (`PK`, `SK`). */
const KEY_SCHEMA = [
  { AttributeName: TABLE.partitionKey, KeyType: 'HASH' as const },
  { AttributeName: TABLE.sortKey, KeyType: 'RANGE' as const },
];

/**
 * Creates `db`'s table with `spec` if it does not exist, then turns TTL on (on {@link TABLE}'s
 * attribute). Idempotent, and safe when two processes race to create it.
 */
async function ensureTableWith(
  db: Db,
  spec: Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'GlobalSecondaryIndexes' | 'StreamSpecification'>,
): Promise<void> {
  try {
    await db.raw.send(new DescribeTableCommand({ TableName: db.tableName }));
    return;
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  try {
    await db.raw.send(new CreateTableCommand({ TableName: db.tableName, BillingMode: 'PAY_PER_REQUEST', KeySchema: KEY_SCHEMA, ...spec }));
  } catch (err) {
    // Two processes may race to create it; the loser sees ResourceInUse.
    if ((err as { name?: string }).name !== 'ResourceInUseException') throw err;
  }
  try {
    await db.raw.send(
      new UpdateTimeToLiveCommand({
        TableName: db.tableName,
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      }),
    );
  } catch {
    // TTL is already on, or not supported by this endpoint: reads filter on it anyway.
  }
}

/**
 * Creates the table from {@link TABLE} if it does not exist (local runtime and tests only; in AWS
 * the CDK stack creates it). Idempotent.
 */
export async function ensureTable(db: Db): Promise<void> {
  const attrs = new Set<string>([TABLE.partitionKey, TABLE.sortKey]);
  for (const ix of TABLE.indexes) {
    attrs.add(ix.partitionKey);
    attrs.add(ix.sortKey);
  }
  const AttributeDefinitions: AttributeDefinition[] = [...attrs].map((name) => ({
    AttributeName: name,
    AttributeType: 'S',
  }));
  const GlobalSecondaryIndexes: GlobalSecondaryIndex[] = TABLE.indexes.map((ix) => ({
    IndexName: ix.name,
    KeySchema: [
      { AttributeName: ix.partitionKey, KeyType: 'HASH' },
      { AttributeName: ix.sortKey, KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'ALL' },
  }));
  await ensureTableWith(db, { AttributeDefinitions, GlobalSecondaryIndexes, StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE.stream } });
}

/** Creates the queue table of `queueDb` if it does not exist (idempotent; TTL on). */
export async function ensureQueueTable(queueDb: Db): Promise<void> {
  await ensureTableWith(queueDb, {
    AttributeDefinitions: [
      { AttributeName: TABLE.partitionKey, AttributeType: 'S' },
      { AttributeName: TABLE.sortKey, AttributeType: 'S' },
    ],
  });
}
