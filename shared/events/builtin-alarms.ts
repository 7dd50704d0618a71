/**
 * Alarm definitions on the built-in event types (builtin-apps.ts). A built-in type has a fixed
 * key shared by every installation's root instance, so the links of its partition
 * (`O#<typeKey>` / `ALARM#<alarmKey>`, eventtypes-repo.ts) belong to alarm definitions of any
 * instance and any tenant: an event of the type requires acknowledgement only when one of those
 * alarm definitions lies in the event's own instance chain (its instance or one above it), never
 * for a sibling's or another tenant's.
 *
 * Every card read asks: the linked alarms (one Query of the type's partition, then one
 * BatchGetItem of the alarm definitions, which a deleted one leaves out until the stream removes
 * its links) are kept {@link RESOLVE_TTL_MS}, as a stored type's alarm membership is (resolve.ts);
 * a link added or removed in this execution environment is seen at once.
 */
import type { Db } from '../db/client.ts';
import { alarmLinksOf } from '../db/eventtypes-repo.ts';
import { getObjects, ownInstance } from '../db/objects-repo.ts';
import { TtlCache } from '../ttl-cache.ts';
import { RESOLVE_TTL_MS } from './app-cache.ts';

/** The instances of the alarm definitions linked to a built-in type, by table and type key. */
const alarmInstances = new TtlCache<ReadonlySet<string>>(1_000, RESOLVE_TTL_MS);

const id = (db: Db, typeKey: string): string => `${db.tableName}\u0000${typeKey}`;

/** Forgets the cached alarm links of a built-in type (a link was added or removed here). */
export function forgetBuiltinAlarms(db: Db, typeKey: string): void {
  alarmInstances.delete(id(db, typeKey));
}

/** Forgets every cached link (tests: resolve.ts clearResolveCaches). */
export function clearBuiltinAlarms(): void {
  alarmInstances.clear();
}

/**
 * Whether an event of the built-in type `typeKey` placed in the instance chain `instances` (root
 * first, as a placement holds it) is in an alarm definition of one of those instances.
 */
export async function builtinTypeInAlarm(db: Db, typeKey: string, instances: readonly string[]): Promise<boolean> {
  let owners = alarmInstances.get(id(db, typeKey));
  if (!owners) {
    const keys = await alarmLinksOf(db, typeKey);
    const alarms = keys.length > 0 ? await getObjects(db, keys) : [];
    owners = new Set(alarms.filter((a) => a.collection === 'alarmdefinitions').map(ownInstance));
    alarmInstances.set(id(db, typeKey), owners);
  }
  const found = owners;
  return instances.some((i) => found.has(i));
}
