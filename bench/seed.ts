/**
 * Fast seeding of many people and events: the exact items `createObject` (`toItem`) and a publish
 * without related objects (`eventItem`) write, sent 25 at a time with BatchWriteItem, several
 * batches in flight. People seeded this way carry no cards, so they have no claim items, and
 * nothing else would be in createObject's transaction.
 *
 * The table's stream is switched off while they are written and on again after: DynamoDB Local
 * keeps the stream records of all its tables in one store whose cost grows with its size, and
 * 10 000 seeding records made every later write of the local runtime's own table (another table)
 * about 3.5 times slower (fan-out p50 754 ms instead of 192 ms, measured). In AWS each table's
 * stream is its own, and nothing listens to the benchmark's table anyway.
 */
import { UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { serialize } from 'bson';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from '#shared/db/client.ts';
import { eventItem } from '#shared/db/events-repo.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { toItem } from '#shared/db/object-writes.ts';
import { eventWrite } from '#shared/events/publish.ts';
import { TABLE } from '#shared/db/table.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';

export interface SeedPeopleOptions {
  readonly folder: StoredObject;
  readonly total: number;
  /** How many of them are named `matchName` (the rest `Person <n>`). */
  readonly matches: number;
  readonly matchName: string;
  /** Batches in flight. @default 6 */
  readonly concurrency?: number;
}

/** A person document as the API stores one (render adds Href and Links on the way out). */
export function personDoc(n: number, name: string): Record<string, unknown> {
  return {
    $type: 'PersonInfo',
    CommonName: name,
    GivenName: name.split(' ')[0],
    Surname: `Surname${String(n).padStart(5, '0')}`,
    Addresses: [{ $type: 'EmailAddressInfo', MailTo: `person${n}@example.com`, Type: 'Work' }],
    CardAssignments: [],
    Monikers: [],
    Metadata: [],
    Tags: [],
    Notes: null,
    IsDisabled: false,
  };
}

/** Which of `total` people get the matching name: spread evenly through the creation order. */
export function matchPositions(total: number, matches: number): Set<number> {
  const out = new Set<number>();
  if (matches <= 0) return out;
  const step = total / matches;
  for (let i = 0; i < matches; i++) out.add(Math.min(total - 1, Math.floor(i * step + step / 2)));
  return out;
}

/** Writes the people; returns their keys in creation order. */
export async function seedPeople(db: Db, opts: SeedPeopleOptions): Promise<string[]> {
  const place = placeIn(opts.folder);
  const matchAt = matchPositions(opts.total, opts.matches);
  const items: Record<string, unknown>[] = [];
  const keys: string[] = [];
  for (let n = 0; n < opts.total; n++) {
    const key = newKey();
    keys.push(key);
    const name = matchAt.has(n) ? opts.matchName : `Person ${String(n).padStart(5, '0')}`;
    const o: StoredObject = { key, collection: 'people', type: 'PersonInfo', ...place, version: 1, doc: personDoc(n, name) };
    items.push(toItem(o));
  }
  await writeItems(db, items, opts.concurrency);
  return keys;
}

export interface SeedEventsOptions {
  readonly folder: StoredObject;
  /** Events spread evenly over [from, to). */
  readonly from: Date;
  readonly to: Date;
  readonly total: number;
  /** Reader names, taken in turn (`EventData.Reader.CommonName`). */
  readonly readers: readonly string[];
}

/**
 * Writes events exactly as a publish without related objects does (`eventWrite`, one item each,
 * no pointers), of one app and event type, whose BSON data names a reader.
 */
export async function seedEvents(db: Db, opts: SeedEventsOptions): Promise<void> {
  const placement = placeIn(opts.folder);
  const [appKey, eventTypeKey] = [newKey(), newKey()];
  const span = opts.to.getTime() - opts.from.getTime();
  const items: Record<string, unknown>[] = [];
  for (let n = 0; n < opts.total; n++) {
    const at = new Date(opts.from.getTime() + Math.floor((n * span) / opts.total));
    const reader = opts.readers[n % opts.readers.length]!;
    const data = Buffer.from(serialize({ Reader: { CommonName: reader }, Card: n })).toString('base64');
    const w = eventWrite({
      key: newKey(),
      placement,
      appKey,
      eventTypeKey,
      eventTypeMoniker: { Namespace: 'Bench', Nickname: 'Swipe' },
      occurredOn: at,
      publishedOn: at,
      priority: 3,
      requiresAcknowledgement: false,
      messageLong: null,
      messageShort: `Swipe at ${reader}`,
      objectLinks: [],
      eventDataBsonBase64: data,
      retentionDays: 365,
    });
    items.push(eventItem(w));
  }
  await writeItems(db, items);
}

/**
 * Writes items 25 at a time with BatchWriteItem, `concurrency` batches in flight, the table's
 * stream off meanwhile (see the module's comment).
 */
export async function writeItems(db: Db, items: readonly Record<string, unknown>[], concurrency = 6): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) batches.push(items.slice(i, i + 25));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      let pending = batches[next++]!.map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 10) throw new Error('seeding: DynamoDB Local kept items unprocessed');
        if (attempt > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** Math.min(attempt, 6)));
        const out = await db.doc.send(new BatchWriteCommand({ RequestItems: { [db.tableName]: pending } }));
        pending = (out.UnprocessedItems?.[db.tableName] ?? []) as typeof pending;
      }
    }
  };
  await setStream(db, false);
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await setStream(db, true);
  }
}

async function setStream(db: Db, enabled: boolean): Promise<void> {
  await db.raw.send(
    new UpdateTableCommand({
      TableName: db.tableName,
      StreamSpecification: enabled ? { StreamEnabled: true, StreamViewType: TABLE.stream } : { StreamEnabled: false },
    }),
  );
}
