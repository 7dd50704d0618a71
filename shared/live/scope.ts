/**
 * The live feeds' scope rule, asked by every live channel (the JSON WebSocket in connections.ts,
 * MQTT in mqtt-auth.ts) and by webhook subscriptions: its own module, so that none of them
 * imports another channel for it.
 */
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../db/client.ts';
import { instanceLineage } from '../db/live-repo.ts';

/**
 * The caller may watch its own instance and the instances below it. An instance that does not
 * exist is out of scope too, so a topic cannot probe which keys exist. Every live channel (the
 * JSON WebSocket here, MQTT in `mqtt-auth.ts`) asks this one check.
 */
export async function inScope(deps: { readonly db: Db }, principal: Pick<Principal, 'instanceKey'>, instanceKey: string): Promise<boolean> {
  if (instanceKey === principal.instanceKey) return true;
  const lineage = await instanceLineage(deps.db, instanceKey);
  return lineage?.includes(principal.instanceKey) ?? false;
}
