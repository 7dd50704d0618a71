/**
 * The stream consumer that versions credential downloads (issue 37): every record of an item a
 * controller's download depends on becomes one entry of its instance's change log
 * (shared/db/credential-log.ts). Fed by the fan-out with each batch, after the write it follows
 * (locally at once; in AWS within the stream's delay), at the cost of one counter update and one
 * small item per change; no write path of the objects had to learn about downloads.
 *
 * | the record's item                                      | kind     |
 * | ------------------------------------------------------ | -------- |
 * | a person (its cards; a connection to a level writes the person too) | `person` (with the identities of its cards before and after) |
 * | an access level, a reader, a controller, a door        | `grants` |
 * | a schedule, a holiday, an instance, a lockdown, a reader's set mode | `config` |
 */
import type { DynamoDBBatchResponse, DynamoDBRecord } from 'aws-lambda';
import type { Db } from '../db/client.ts';
import { recordChanges, recordImages, type Change, type ChangeKind } from '../db/credential-log.ts';
import { LOCKDOWN_SK, MODE_SK } from '../db/door-state.ts';
import { parseJson } from '../json.ts';
import { cardIdentity } from '../model/card-assignments.ts';

const KIND_OF_COLLECTION: Readonly<Record<string, ChangeKind>> = {
  people: 'person',
  accesslevels: 'grants',
  readers: 'grants',
  controllers: 'grants',
  doors: 'grants',
  schedules: 'config',
  holidays: 'config',
  instances: 'config',
};

type Image = Record<string, unknown>;

function cardsOf(image: Image | undefined): string[] {
  if (!image || typeof image.Doc !== 'string') return [];
  try {
    const doc = parseJson(image.Doc) as { CardAssignments?: unknown };
    return (Array.isArray(doc.CardAssignments) ? doc.CardAssignments : []).map(cardIdentity).filter((c): c is string => c !== undefined);
  } catch {
    return [];
  }
}

/** The change one stream record makes, with the instance it is recorded under; undefined for the others. */
export function changeOfRecord(record: DynamoDBRecord): { instance: string; change: Change } | undefined {
  const { oldImage, newImage } = recordImages(record);
  const image = newImage ?? oldImage;
  if (!image || typeof image.PK !== 'string') return undefined;
  const instances = Array.isArray(image.Instances) ? image.Instances : [];
  const instance = instances[instances.length - 1];
  if (typeof instance !== 'string') return undefined;
  if (image.SK === LOCKDOWN_SK && image.PK.startsWith('LD#')) return { instance, change: { kind: 'config', key: String(image.Folder), cards: [] } };
  if (image.SK === MODE_SK && image.PK.startsWith('O#')) return { instance, change: { kind: 'config', key: image.PK.slice(2), cards: [] } };
  if (image.SK !== 'A' || !image.PK.startsWith('O#') || typeof image.Coll !== 'string') return undefined;
  const kind = KIND_OF_COLLECTION[image.Coll];
  if (!kind) return undefined;
  const key = image.PK.slice(2);
  const cards = kind === 'person' ? [...new Set([...cardsOf(oldImage), ...cardsOf(newImage)])] : [];
  return { instance, change: { kind, key, cards } };
}

/**
 * Records the changes of a batch (per instance, in stream order). A failure reports the batch from
 * its first record (the mapping delivers it again; a change recorded twice is sent twice, which a
 * controller applies as once).
 */
export async function recordCredentialChanges(db: Db, records: readonly DynamoDBRecord[], now = new Date()): Promise<DynamoDBBatchResponse> {
  const byInstance = new Map<string, Change[]>();
  for (const r of records) {
    const c = changeOfRecord(r);
    if (!c) continue;
    const list = byInstance.get(c.instance) ?? [];
    list.push(c.change);
    byInstance.set(c.instance, list);
  }
  try {
    await Promise.all([...byInstance].map(([instance, changes]) => recordChanges(db, instance, changes, now)));
    return { batchItemFailures: [] };
  } catch {
    const first = records[0]?.dynamodb?.SequenceNumber;
    return { batchItemFailures: first ? [{ itemIdentifier: first }] : [] };
  }
}
