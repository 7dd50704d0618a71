/**
 * The reads and the one write of an access decision (shared/access/facts.ts loads the facts with
 * them). Every read is by key or of one index partition, so a decision never reads O(people):
 *
 * | read                              | request                                                          |
 * | --------------------------------- | ---------------------------------------------------------------- |
 * | the card's holders, per instance  | Query GSI3 `CN#<instance>#<number>` (keys only: `cardHolders`)   |
 * | a person (its cards, its levels in its ObjectLinks) | GetItem `O#<person>` (consistent: objects-repo `getObject`) |
 * | the holidays (access levels) of an instance | Query GSI2 `T#<instance>#holidays` (`accesslevels`)    |
 * | the people holding a level, a page | Query GSI1 `RB#<level>` beginning `<relation>#`, `Limit` = page |
 *
 * The write: a card's use counted in the person item, conditional on the person's version.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionFailed } from '../errors.ts';
import { stringifyJson } from '../json.ts';
import type { StoredObject } from '../model/stored-object.ts';
import type { Db } from './client.ts';
import { OBJECT_SK, objectPk, partitionPk, referencedByPk, referencedBySk, relationSk } from './item-keys.ts';
import { fromItem, send } from './objects-repo.ts';
import { queryAll, queryPage } from './requests.ts';

export { cardHolders,  } from './search-repo.ts';

/** Every object of a collection in an instance, whatever its folder (holidays, access levels): one Query of its partition. */
export async function objectsOfInstance(db: Db, instanceKey: string, collection: 'holidays' | 'accesslevels'): Promise<StoredObject[]> {
  const items = await queryAll(
    db,
    { IndexName: 'GSI2', KeyConditionExpression: 'GSI2PK = :pk', ExpressionAttributeValues: { ':pk': partitionPk(instanceKey, collection) } },
    { max: 10_000 },
  );
  return items.map(fromItem);
}

/** One page of the objects connected to `to` by `relation` (the reverse side of the connections). */
export interface HolderPage {
  /** The connections' sources, in key order, with the window of a scheduled connection. */
  readonly holders: readonly { readonly from: string; readonly activeOn: string | null; readonly expiresOn: string | null }[];
  /** Where the next page starts (the last source read), or undefined at the end. */
  readonly next: string | undefined;
}

/**
 * At most `limit` sources connected to `to` by `relation`, after the source `after`: one Query of
 * the reference index (GSI1 `RB#<to>`, sort key `<relation>#<from>`), reading `limit` items.
 */
export async function connectedToPage(db: Db, to: string, relation: string, limit: number, after?: string): Promise<HolderPage> {
  const pk = referencedByPk(to);
  const out = await queryPage(
    db,
    {
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :rel)',
      ExpressionAttributeValues: { ':pk': pk, ':rel': referencedBySk(relation, '') },
      Limit: limit,
    },
    after ? { GSI1PK: pk, GSI1SK: referencedBySk(relation, after), PK: objectPk(after), SK: relationSk(relation, to) } : undefined,
  );
  const holders = out.items.map((i) => ({
    from: i.From as string,
    activeOn: typeof i.ActiveOn === 'string' ? i.ActiveOn : null,
    expiresOn: typeof i.ExpiresOn === 'string' ? i.ExpiresOn : null,
  }));
  return { holders, next: out.next ? holders[holders.length - 1]?.from : undefined };
}

/**
 * Writes a person's document with a card's use counted, if the person is still at `version`
 * (one UpdateItem; the version goes up as for any change of the person). A writer in between
 * makes it throw {@link ConditionFailed}: the caller reads the person again and decides again,
 * so parallel reads of a card with n uses left count exactly n.
 */
export async function writeCountedUse(db: Db, person: StoredObject, doc: Record<string, unknown>): Promise<void> {
  try {
    await send(
      db,
      new UpdateCommand({
        TableName: db.tableName,
        Key: { PK: objectPk(person.key), SK: OBJECT_SK },
        UpdateExpression: 'SET #doc = :doc, #v = :next',
        ConditionExpression: 'attribute_exists(PK) AND #v = :v',
        ExpressionAttributeNames: { '#doc': 'Doc', '#v': 'Version' },
        ExpressionAttributeValues: { ':doc': stringifyJson(doc), ':v': person.version, ':next': person.version + 1 },
      }),
    );
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'ConditionalCheckFailedException' || name === 'TransactionConflictException') throw new ConditionFailed('The person changed.');
    throw err;
  }
}
