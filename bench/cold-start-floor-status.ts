/**
 * The protected floor with the caller's status check (the `statusFloor`): bench/cold-start-floor.ts
 * plus the smallest check that refuses a token whose user or instance was disabled, or whose user's
 * sessions were revoked, after it was issued, which every protected family makes (the families'
 * check: shared/auth/status-check.ts). One BatchGetItem of the user and the instance, beside the
 * token's verification and the object's read; the answer waits for all three. It reads no instance
 * above the caller's (a tenant's own instance here has none) and caches nothing (a cold start has
 * nothing cached). Bundled and run as the floor is; never deployed.
 *
 * The figure that says what any protected function that refuses disabled callers costs at its cold
 * start, before routing, validation, metrics or any family's code.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { OBJECT_SK, objectPk } from '#shared/db/keys.ts';
import { client, floorHandler, tableName, type Caller } from './cold-start-floor.ts';

const disabled = (item: Record<string, unknown> | undefined): boolean => {
  if (!item || typeof item.Doc !== 'string') return true;
  return (JSON.parse(item.Doc) as { IsDisabled?: unknown }).IsDisabled === true;
};

async function allowed(caller: Caller): Promise<boolean> {
  const keys = [caller.user, caller.instance].map((k) => ({ PK: objectPk(k), SK: OBJECT_SK }));
  const out = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys } } }));
  const items = out.Responses?.[tableName] ?? [];
  const user = items.find((i) => i.PK === objectPk(caller.user));
  const instance = items.find((i) => i.PK === objectPk(caller.instance));
  if (disabled(user) || disabled(instance)) return false;
  return caller.generation >= Number(user?.SessionGeneration ?? 0);
}

export const handler = floorHandler(allowed);
