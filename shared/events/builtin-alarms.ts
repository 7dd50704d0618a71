/**
 * Alarm definitions on the built-in event types (builtin-apps.ts). A built-in type has a fixed
 * key shared by every installation's root instance, so the links of its partition
 * (`O#<typeKey>` / `ALARM#<alarmKey>`, eventtypes-repo.ts) belong to alarm definitions of any
 * instance and any tenant: an event of the type requires acknowledgement only when an alarm
 * definition of the event's own instance chain (its instance or one above it) holds it, never a
 * sibling's or another tenant's.
 *
 * So the question is asked per instance of the chain, of that instance's own alarm definitions
 * (eventtypes-repo.ts `instanceHasAlarmOn`): the reads grow with the chain's alarm definitions,
 * never with other tenants'. Each answer is kept {@link RESOLVE_TTL_MS}, as a stored type's alarm
 * membership is (resolve.ts); a link added or removed in this execution environment is seen at once.
 */
import type { Db } from '../db/client.ts';
import { instanceHasAlarmOn } from '../db/eventtypes-repo.ts';
import { TtlCache } from '../ttl-cache.ts';
import { RESOLVE_TTL_MS } from './app-cache.ts';

/** Whether an instance's alarm definitions hold a built-in type, by table, type and instance. */
const inAlarm = new TtlCache<boolean>(10_000, RESOLVE_TTL_MS);

const id = (db: Db, typeKey: string, instanceKey: string): string => `${db.tableName}\u0000${typeKey}\u0000${instanceKey}`;

/** Forgets the cached answers: a link of a built-in type was added or removed here (and tests, through resolve.ts clearResolveCaches). */
export function forgetBuiltinAlarms(): void {
  inAlarm.clear();
}

/**
 * Whether an event of the built-in type `typeKey` placed in the instance chain `instances` (root
 * first, as a placement holds it) is in an alarm definition of one of those instances: the
 * instances are asked together, each answer kept.
 */
export async function builtinTypeInAlarm(db: Db, typeKey: string, instances: readonly string[]): Promise<boolean> {
  const answers = await Promise.all(
    instances.map(async (instance) => {
      const key = id(db, typeKey, instance);
      const known = inAlarm.get(key);
      if (known !== undefined) return known;
      const found = await instanceHasAlarmOn(db, instance, typeKey);
      inAlarm.set(key, found);
      return found;
    }),
  );
  return answers.includes(true);
}
