/**
 * Connection items: one per (source, relation, target), under the source's partition so listing
 * a source's connections is one Query, and indexed by target (GSI1 `RB#<to>`) so listing an
 * object's references is one Query too.
 *
 *   PK `O#<from>`  SK `R#<Relation>#<to>`  GSI1PK `RB#<to>`  GSI1SK `<Relation>#<from>`
 *
 * A scheduled access level's item also holds its window, `ActiveOn` and `ExpiresOn` (ISO UTC
 * strings, absent when open); the reference index projects every attribute, so both sides read it.
 */
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Db } from './client.ts';
import { objectPk, referencedByPk, referencedBySk, relationPrefix, relationSk } from './item-keys.ts';
import { queryAll } from './requests.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface Connection {
  readonly from: string;
  readonly relation: string;
  readonly to: string;
  /** The window of a scheduled connection (ISO UTC); null or absent is open. */
  readonly activeOn?: string | null;
  readonly expiresOn?: string | null;
}

export function putConnection(db: Db, c: Connection): TransactItem {
  return {
    Put: {
      TableName: db.tableName,
      Item: {
        PK: objectPk(c.from),
        SK: relationSk(c.relation, c.to),
        GSI1PK: referencedByPk(c.to),
        GSI1SK: referencedBySk(c.relation, c.from),
        From: c.from,
        To: c.to,
        Relation: c.relation,
        ...(c.activeOn ? { ActiveOn: c.activeOn } : {}),
        ...(c.expiresOn ? { ExpiresOn: c.expiresOn } : {}),
      },
    },
  };
}

export function deleteConnection(db: Db, c: Connection): TransactItem {
  return { Delete: { TableName: db.tableName, Key: { PK: objectPk(c.from), SK: relationSk(c.relation, c.to) } } };
}

function toConnection(i: Record<string, unknown>): Connection {
  return {
    from: i.From as string,
    relation: i.Relation as string,
    to: i.To as string,
    activeOn: typeof i.ActiveOn === 'string' ? i.ActiveOn : null,
    expiresOn: typeof i.ExpiresOn === 'string' ? i.ExpiresOn : null,
  };
}

/** The connections from an object (optionally of one relation), in one Query. */
export async function connectionsFrom(db: Db, from: string, relation?: string): Promise<Connection[]> {
  const items = await queryAll(db, {
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
    ExpressionAttributeValues: { ':pk': objectPk(from), ':sk': relationPrefix(relation) },
    ConsistentRead: true,
  });
  return items.map(toConnection);
}

/** The connections to an object, in one Query of the reference index. */
export async function connectionsTo(db: Db, to: string): Promise<Connection[]> {
  const items = await queryAll(db, {
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk',
    ExpressionAttributeValues: { ':pk': referencedByPk(to) },
  });
  return items.map(toConnection);
}
