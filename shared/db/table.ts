/**
 * The single table, declared once: the CDK stack and the local runtime's table creation both
 * read this definition, so the keys, indexes, TTL attribute and stream cannot drift apart.
 *
 * Items (all key strings are built in `keys.ts`):
 * - object:        PK `O#<key>`                 SK `A`
 *                  GSI1 `C#<folder>#<collection>` / `<key>`   (a collection page, creation order)
 *                  GSI2 `T#<instance>#<Type>` / `<key>`      (every object of a type in an instance)
 * - unique claim:  PK `U#<scope>#<kind>#<value>` SK `U`      (card numbers, names, monikers)
 * - others (tokens, connections, events, subscriptions) follow the same PK/SK/GSI shape and are
 *   documented where their key builders live.
 */

export interface IndexDef {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
}

export interface TableDef {
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly indexes: readonly IndexDef[];
  /** Epoch seconds; DynamoDB deletes the item some time after. Reads must also filter on it. */
  readonly ttlAttribute: string;
  readonly stream: 'NEW_AND_OLD_IMAGES';
}

export const TABLE: TableDef = Object.freeze({
  partitionKey: 'PK',
  sortKey: 'SK',
  indexes: Object.freeze([
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
    { name: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK' },
  ]),
  ttlAttribute: 'ttl',
  stream: 'NEW_AND_OLD_IMAGES',
});
