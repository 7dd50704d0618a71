/**
 * The protected floor with the caller's status check (the `statusFloor`): bench/cold-start-floor.ts
 * plus the smallest check that refuses a token whose user or instance was disabled, or whose user's
 * sessions were revoked, after it was issued, which every protected family makes (the families'
 * check: shared/auth/status-check.ts). One BatchGetItem of the user, the instance and the
 * published public keys (the families read the keys with the status on a cold start:
 * shared/db/item-reads.ts), beside the object's read; the token is verified once the keys are in,
 * and the answer waits for all of it. It reads no instance
 * above the caller's (a tenant's own instance here has none) and caches nothing (a cold start has
 * nothing cached). Bundled and run as the floor is; never deployed.
 *
 * The figure that says what any protected function that refuses disabled callers costs at its cold
 * start, before routing, validation, metrics or any family's code.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { JSONWebKeySet } from 'jose';
import { OBJECT_SK, PUBLIC_KEYS_PK, PUBLIC_KEYS_SK, objectPk } from '#shared/db/keys.ts';
import { client, floorHandler, tableName, type Caller, type StatusRead } from './cold-start-floor.ts';

const disabled = (item: Record<string, unknown> | undefined): boolean => {
  if (!item || typeof item.Doc !== 'string') return true;
  return (JSON.parse(item.Doc) as { IsDisabled?: unknown }).IsDisabled === true;
};

async function allowed(caller: Caller, items: Promise<Array<Record<string, unknown>>>): Promise<boolean> {
  const read = await items;
  const user = read.find((i) => i.PK === objectPk(caller.user));
  const instance = read.find((i) => i.PK === objectPk(caller.instance));
  if (disabled(user) || disabled(instance)) return false;
  return caller.generation >= Number(user?.SessionGeneration ?? 0);
}

async function publicKeys(items: Promise<Array<Record<string, unknown>>>): Promise<JSONWebKeySet> {
  const published = (await items).find((i) => i.PK === PUBLIC_KEYS_PK);
  if (typeof published?.Jwks !== 'string') throw new Error('no public keys are published in the table');
  return JSON.parse(published.Jwks) as JSONWebKeySet;
}

/** The user, the instance and (where they are published in the table) the keys, in one BatchGetItem. */
const status: StatusRead = (caller) => {
  const withKeys = process.env.GATEHOUSE_PUBLIC_KEYS === 'table';
  const keys = [caller.user, caller.instance].map((k) => ({ PK: objectPk(k), SK: OBJECT_SK }));
  const items = client
    .send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: withKeys ? [...keys, { PK: PUBLIC_KEYS_PK, SK: PUBLIC_KEYS_SK }] : keys } } }))
    .then((out) => out.Responses?.[tableName] ?? []);
  return { allowed: allowed(caller, items), ...(withKeys ? { keys: publicKeys(items) } : {}) };
};

export const handler = floorHandler(status);
