/**
 * The protected floor with the caller's status check (the `statusFloor`): bench/cold-start-floor.ts
 * plus the smallest check that refuses a token whose user or instance was disabled, or whose user's
 * sessions were revoked, after it was issued, which every protected family makes (the families'
 * check: shared/auth/status-check.ts). The user and the instance are read in the floor's one
 * BatchGetItem, with the object and the published public keys (as a family's first GET in Lambda
 * reads them: shared/db/item-reads.ts); the token is verified once the keys are in. It reads no
 * instance above the caller's (a tenant's own instance here has none) and caches nothing (a cold
 * start has nothing cached). Bundled and run as the floor is; never deployed.
 *
 * The figure that says what any protected function that refuses disabled callers costs at its cold
 * start, before routing, validation, metrics or any family's code.
 */
import { OBJECT_SK, objectPk } from '#shared/db/item-keys.ts';
import { floorHandler, type StatusCheck } from './cold-start-floor.ts';

export type { StatusCheck };

const disabled = (item: Record<string, unknown> | undefined): boolean => {
  if (!item || typeof item.Doc !== 'string') return true;
  return (JSON.parse(item.Doc) as { IsDisabled?: unknown }).IsDisabled === true;
};

/** The user and the instance, read with the object and the keys. */
export const status: StatusCheck = {
  keys: (caller) => [caller.user, caller.instance].map((k) => ({ PK: objectPk(k), SK: OBJECT_SK })),
  allowed: (caller, items) => {
    const user = items.find((i) => i.PK === objectPk(caller.user));
    const instance = items.find((i) => i.PK === objectPk(caller.instance));
    if (disabled(user) || disabled(instance)) return false;
    return caller.generation >= Number(user?.SessionGeneration ?? 0);
  },
};

export const handler = floorHandler(status);
