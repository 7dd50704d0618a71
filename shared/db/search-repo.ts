/**
 * The reads a search plan makes: each one is a Query of one index key (or a BatchGet of keys),
 * so a search reads the partitions its plan names and never the whole table.
 */
import type { Db } from './client.ts';
import { cardNumberPk, claimPk, namePk, partitionPk } from './item-keys.ts';
import { fromItem, type ReadStep } from './objects-repo.ts';
import { queryAll } from './requests.ts';
import type { StoredObject } from '../model/stored-object.ts';

/** At most this many items are read for one search; past it the search answers 400 (narrow it). */
const MAX_SEARCH_READ = 20_000;

export class SearchTooBroad extends Error {
  constructor() {
    super('The search reads too many objects.');
    this.name = 'SearchTooBroad';
  }
}


export interface SearchBudget {
  left: number;
  /** Awaited before each request (a call's read steps: shared/objects/domain-context.ts `readSteps`). */
  readonly step?: ReadStep;
}

/** Charges each page read to the search's budget; past it the search stops. */
const spend = (budget: SearchBudget) => ({
  ...(budget.step ? { step: budget.step } : {}),
  onPage: (items: readonly Record<string, unknown>[]) => {
    budget.left -= items.length;
    if (budget.left < 0) throw new SearchTooBroad();
  },
});

export const newBudget = (step?: ReadStep): SearchBudget => ({ left: MAX_SEARCH_READ, ...(step ? { step } : {}) });

/** Every object of a collection in an instance (any folder). */
export async function readPartition(db: Db, instanceKey: string, collection: string, budget: SearchBudget): Promise<StoredObject[]> {
  const items = await queryAll(
    db,
    { IndexName: 'GSI2', KeyConditionExpression: 'GSI2PK = :pk', ExpressionAttributeValues: { ':pk': partitionPk(instanceKey, collection) } },
    spend(budget),
  );
  return items.map(fromItem);
}

/** Objects of an instance whose CommonName equals `equals` or starts with `prefix`. */
export async function readByName(
  db: Db,
  instanceKey: string,
  name: { readonly equals?: string; readonly prefix?: string },
  budget: SearchBudget,
): Promise<StoredObject[]> {
  const begins = name.equals !== undefined ? `${name.equals}#` : (name.prefix ?? '');
  const items = await queryAll(
    db,
    {
      IndexName: 'GSI3',
      KeyConditionExpression: 'GSI3PK = :pk AND begins_with(GSI3SK, :sk)',
      ExpressionAttributeValues: { ':pk': namePk(instanceKey), ':sk': begins },
    },
    spend(budget),
  );
  return items.map(fromItem);
}

/** Keys of the objects holding a card number in an instance (any facility code). */
export async function ownersOfCardNumber(db: Db, instanceKey: string, number: string, budget: SearchBudget): Promise<string[]> {
  const items = await queryAll(
    db,
    {
      IndexName: 'GSI3',
      KeyConditionExpression: 'GSI3PK = :pk',
      ExpressionAttributeValues: { ':pk': cardNumberPk(instanceKey, number) },
      ProjectionExpression: 'GSI3SK',
    },
    spend(budget),
  );
  return items.map((i) => i.GSI3SK as string);
}

/** A card claim found by its number: the person holding it and the claimed `<facility code>:<number>`. */
export interface CardHolder {
  readonly owner: string;
  readonly card: string;
}

/**
 * The holders of a card number in an instance, whatever the facility code: one Query of the card
 * index (GSI3 `CN#<instance>#<number>`, one item per facility code the number is claimed with),
 * in owner key order. The index is eventually consistent: the caller checks the holder's document.
 */
export async function cardHolders(db: Db, instanceKey: string, number: string): Promise<CardHolder[]> {
  const prefix = claimPk(instanceKey, 'card', '');
  const items = await queryAll(
    db,
    {
      IndexName: 'GSI3',
      KeyConditionExpression: 'GSI3PK = :pk',
      ExpressionAttributeValues: { ':pk': cardNumberPk(instanceKey, number) },
      ProjectionExpression: 'PK, GSI3SK',
    },
    { max: 1000 },
  );
  return items
    .filter((i) => typeof i.PK === 'string' && i.PK.startsWith(prefix))
    .map((i) => ({ owner: i.GSI3SK as string, card: (i.PK as string).slice(prefix.length) }));
}
