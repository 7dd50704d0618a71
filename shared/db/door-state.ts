/**
 * The state the doors issue keeps beside the objects: lockdowns, readers' temporary modes and
 * doors' momentary unlocks. Each is one small item, so a lockdown of a folder holding 1,000
 * readers is one write, and a decision reads them by key in the wave it already makes.
 *
 * | item                      | PK                 | SK        | attributes                                           |
 * | ------------------------- | ------------------ | --------- | ---------------------------------------------------- |
 * | lockdown of a folder      | `LD#<folderKey>`   | `LD`      | Folder, FolderName, Path, Instances, StartedOn, StartedBy, Reason |
 * | a reader's set mode       | `O#<readerKey>`    | `MODE`    | AccessMethod, Until (ISO or absent), SetOn, SetBy, Instances (the reader's), ttl (after Until) |
 * | a door's momentary unlock | `O#<doorKey>`      | `UNLOCK`  | Until, Seconds, By, ttl                              |
 *
 * A mode item with `Until` stays readable after it (DynamoDB's TTL removes it some time later):
 * readers of it compare `Until` with the decision's instant, so no job has to end a mode.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Db } from './client.ts';
import { getItem, getItems, type ItemKey } from './item-reads.ts';
import { DOOR_UNLOCK_SK, LOCKDOWN_SK, READER_MODE_SK, lockdownPk, objectPk } from './item-keys.ts';
import { send } from './objects-repo.ts';

export { LOCKDOWN_SK };
export const MODE_SK = READER_MODE_SK;
const UNLOCK_SK = DOOR_UNLOCK_SK;

const lockdownKey = (folderKey: string): ItemKey => ({ PK: lockdownPk(folderKey), SK: LOCKDOWN_SK });
const modeKey = (readerKey: string): ItemKey => ({ PK: objectPk(readerKey), SK: MODE_SK });

/** A lockdown as stored: the folder (or instance) that started it, when, by whom, why. */
export interface LockdownRecord {
  readonly folder: string;
  readonly folderName: string | null;
  /** The folders above the locked one (its `path`) and its instances, for the scope of a read. */
  readonly path: readonly string[];
  readonly instances: readonly string[];
  readonly startedOn: string;
  readonly startedBy: string;
  readonly reason: string;
}

/** A reader's set mode: `AccessMethod` until `until` (null: until it is reset). */
export interface ModeRecord {
  readonly accessMethod: number;
  readonly until: string | null;
  readonly setOn: string;
  readonly setBy: string;
}

/** A door's last momentary unlock. */
export interface UnlockRecord {
  readonly until: string;
  readonly seconds: number;
  readonly by: string;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function lockdownOf(item: Record<string, unknown>): LockdownRecord {
  return {
    folder: String(item.Folder),
    folderName: str(item.FolderName),
    path: Array.isArray(item.Path) ? item.Path.map(String) : [],
    instances: Array.isArray(item.Instances) ? item.Instances.map(String) : [],
    startedOn: String(item.StartedOn),
    startedBy: String(item.StartedBy),
    reason: String(item.Reason ?? ''),
  };
}

function modeOf(item: Record<string, unknown>): ModeRecord {
  return { accessMethod: Number(item.AccessMethod), until: str(item.Until), setOn: String(item.SetOn), setBy: String(item.SetBy) };
}

/**
 * The lockdowns of `folders` and the set modes of `readers`, in one strongly consistent
 * BatchGetItem (inside a gathering, with the reads started beside it): a lockdown or a mode
 * applies to the very next decision.
 */
export async function readDoorState(
  db: Db,
  folders: readonly string[],
  readers: readonly string[],
): Promise<{ lockdowns: Map<string, LockdownRecord>; modes: Map<string, ModeRecord> }> {
  const keys = [...new Set(folders)].map(lockdownKey).concat([...new Set(readers)].map(modeKey));
  const items = keys.length > 0 ? await getItems(db, keys, true) : [];
  const lockdowns = new Map<string, LockdownRecord>();
  const modes = new Map<string, ModeRecord>();
  for (const item of items) {
    if (item.SK === LOCKDOWN_SK) lockdowns.set(String(item.Folder), lockdownOf(item));
    else if (item.SK === MODE_SK) modes.set(String(item.PK).slice(2), modeOf(item));
  }
  return { lockdowns, modes };
}

/** Starts a lockdown of a folder: one PutItem, refused (false) when that folder is locked down already. */
export async function putLockdown(db: Db, r: LockdownRecord): Promise<boolean> {
  try {
    await send(
      db,
      new PutCommand({
        TableName: db.tableName,
        Item: {
          ...lockdownKey(r.folder),
          Folder: r.folder,
          FolderName: r.folderName,
          Path: [...r.path],
          Instances: [...r.instances],
          StartedOn: r.startedOn,
          StartedBy: r.startedBy,
          Reason: r.reason,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    return true;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

/** Ends the lockdown of a folder: the record it removed, or undefined when there was none. */
export async function deleteLockdown(db: Db, folder: string): Promise<LockdownRecord | undefined> {
  const out = await send<{ Attributes?: Record<string, unknown> }>(db, new DeleteCommand({ TableName: db.tableName, Key: lockdownKey(folder), ReturnValues: 'ALL_OLD' }));
  return out.Attributes ? lockdownOf(out.Attributes) : undefined;
}

/** Days a mode item is kept after its `Until` before DynamoDB's TTL may remove it. */
const MODE_KEEP_SECONDS = 86_400;

/** Sets a reader's mode (one PutItem), or resets it (`mode` null: one DeleteItem). */
export async function writeMode(db: Db, reader: string, instances: readonly string[], mode: ModeRecord | null): Promise<void> {
  if (!mode) {
    await send(db, new DeleteCommand({ TableName: db.tableName, Key: modeKey(reader) }));
    return;
  }
  const ttl = mode.until ? { ttl: Math.floor(Date.parse(mode.until) / 1000) + MODE_KEEP_SECONDS } : {};
  await send(
    db,
    new PutCommand({
      TableName: db.tableName,
      Item: { ...modeKey(reader), Instances: [...instances], AccessMethod: mode.accessMethod, ...(mode.until ? { Until: mode.until } : {}), SetOn: mode.setOn, SetBy: mode.setBy, ...ttl },
    }),
  );
}

/** Records a door's momentary unlock (one PutItem, kept a day after it ends). */
export async function writeUnlock(db: Db, door: string, u: UnlockRecord): Promise<void> {
  await send(
    db,
    new PutCommand({
      TableName: db.tableName,
      Item: { PK: objectPk(door), SK: UNLOCK_SK, Until: u.until, Seconds: u.seconds, By: u.by, ttl: Math.floor(Date.parse(u.until) / 1000) + MODE_KEEP_SECONDS },
    }),
  );
}

/** A door's last momentary unlock, if any (one strongly consistent GetItem). */
export async function readUnlock(db: Db, door: string): Promise<UnlockRecord | undefined> {
  const item = await getItem(db, objectPk(door), UNLOCK_SK, true);
  return item ? { until: String(item.Until), seconds: Number(item.Seconds), by: String(item.By) } : undefined;
}
