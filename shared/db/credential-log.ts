/**
 * The change log credential downloads are versioned by (issue 37). The fan-out, which sees every
 * record of the table's stream, records each change that a controller's download may depend on
 * (shared/access/credential-changes.ts) under the instance that owns the changed item:
 *
 * | item                          | PK                    | SK                       | attributes                                  |
 * | ----------------------------- | --------------------- | ------------------------ | ------------------------------------------- |
 * | an instance's change counter  | `AV#<instanceKey>`    | `AV`                     | Counter (number of changes ever recorded), ChangedOn (epoch ms) |
 * | one change                    | `AC#<instanceKey>`    | `<seq, 12 digits>`       | Kind, Key, Cards (card identities), ttl     |
 *
 * A download's version is the counters of its readers' instance chain, so `If-None-Match` is one
 * BatchGetItem of a few counter items, and `?since=` reads the changes after each counter: one
 * Query per instance whose counter moved, reading O(changes). Changes are kept
 * {@link CHANGE_LOG_DAYS} days (TTL); a version whose next change is gone is answered 410.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { Db } from './client.ts';
import { getItems } from './item-reads.ts';
import { CREDENTIAL_COUNTER_SK, credentialChangePk, credentialCounterPk } from './item-keys.ts';
import { send } from './objects-repo.ts';
import { queryAll } from './requests.ts';

/** Days a change stays in the log (after that, a download from before it is answered in full). */
const CHANGE_LOG_DAYS = 7;

const COUNTER_SK = CREDENTIAL_COUNTER_SK;
const counterPk = credentialCounterPk;
export const changePk = credentialChangePk;
const seqSk = (n: number): string => String(n).padStart(12, '0');

/**
 * What a change means for a download: `person` (its cards and levels: the entries of its cards),
 * `grants` (a level, a reader, a controller or a door: which cards pass where; answered in full),
 * `config` (schedules, holidays, instances, lockdowns, reader modes: the small lists every answer
 * carries whole).
 */
export type ChangeKind = 'person' | 'grants' | 'config';

export interface Change {
  readonly kind: ChangeKind;
  readonly key: string;
  /** For a person: the identities (`<facility>:<number>`) of the cards it held before and after. */
  readonly cards: readonly string[];
}

export interface LoggedChange extends Change {
  readonly seq: number;
}

/**
 * Records the changes of one instance: one UpdateItem `ADD` of its counter (the changes get the
 * numbers up to the new value), then the entries (BatchWriteItem, 25 a request).
 */
export async function recordChanges(db: Db, instance: string, changes: readonly Change[], now: Date): Promise<void> {
  if (changes.length === 0) return;
  const out = await send<{ Attributes?: { Counter?: number } }>(
    db,
    new UpdateCommand({
      TableName: db.tableName,
      Key: { PK: counterPk(instance), SK: COUNTER_SK },
      UpdateExpression: 'ADD #c :n SET #at = :at',
      ExpressionAttributeNames: { '#c': 'Counter', '#at': 'ChangedOn' },
      ExpressionAttributeValues: { ':n': changes.length, ':at': now.getTime() },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const last = Number(out.Attributes?.Counter ?? changes.length);
  const ttl = Math.floor(now.getTime() / 1000) + CHANGE_LOG_DAYS * 86_400;
  const items = changes.map((c, i) => ({ PK: changePk(instance), SK: seqSk(last - changes.length + 1 + i), Kind: c.kind, Key: c.key, Cards: [...c.cards], ttl }));
  for (let i = 0; i < items.length; i += 25) {
    let requests: unknown[] = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 8) throw new Error('change log entries left unprocessed');
      if (attempt > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
      const res = await send<{ UnprocessedItems?: Record<string, unknown[]> }>(db, new BatchWriteCommand({ RequestItems: { [db.tableName]: requests as never } }));
      requests = res.UnprocessedItems?.[db.tableName] ?? [];
    }
  }
}

/** An instance's counter and when it last moved (epoch ms; 0 when it never did). */
export interface Counter {
  readonly counter: number;
  readonly changedOn: number;
}

/** The counters of some instances (0 for one that never changed): one strongly consistent BatchGetItem. */
export async function readCounters(db: Db, instances: readonly string[]): Promise<Map<string, Counter>> {
  const items = await getItems(
    db,
    instances.map((i) => ({ PK: counterPk(i), SK: COUNTER_SK })),
    true,
  );
  const out = new Map<string, Counter>(instances.map((i) => [i, { counter: 0, changedOn: 0 }]));
  for (const it of items) out.set(String(it.PK).slice(3), { counter: Number(it.Counter ?? 0), changedOn: Number(it.ChangedOn ?? 0) });
  return out;
}

/**
 * The changes of an instance after `after`, up to `upTo`, at most `limit` (one Query per
 * 1 MB; read units O(changes)). Their `seq` tells a caller whether the first is `after + 1`.
 */
export async function changesAfter(db: Db, instance: string, after: number, upTo: number, limit: number): Promise<LoggedChange[]> {
  const items = await queryAll(
    db,
    {
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': changePk(instance), ':from': seqSk(after + 1), ':to': seqSk(upTo) },
      ConsistentRead: true,
    },
    { limit },
  );
  return items.map((i) => ({ seq: Number(i.SK), kind: i.Kind as ChangeKind, key: String(i.Key), cards: Array.isArray(i.Cards) ? i.Cards.map(String) : [] }));
}

/** The item images of a stream record (the old one absent for an insert, the new one for a removal). */
export function recordImages(record: DynamoDBRecord): { readonly oldImage?: Record<string, unknown>; readonly newImage?: Record<string, unknown> } {
  const of = (v: unknown) => (v ? unmarshall(v as Record<string, AttributeValue>) : undefined);
  const oldImage = of(record.dynamodb?.OldImage);
  const newImage = of(record.dynamodb?.NewImage);
  return { ...(oldImage ? { oldImage } : {}), ...(newImage ? { newImage } : {}) };
}
