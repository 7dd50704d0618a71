/**
 * The protected floor: the smallest function that does what every protected HTTP family must do
 * on its first request (the spec's bearer tokens, our standards' Powertools logging and tenant
 * scope), and nothing else. Bundled with the same options as the families and run by the same
 * driver, in the same environment, with the same first request and access token as `people`
 * (GET person); it is never deployed. The figure a family is compared with when the question is
 * "what does our pipeline cost beyond what any protected function must pay", beside the bare
 * client's baseline (bench/cold-start-baseline.ts), which the issue's goal is stated against.
 *
 * On its first request it:
 * - takes an API Gateway HTTP API (v2) event and reads `Authorization: Bearer <token>`;
 * - verifies the ES256 access token with jose (`jwtVerify` against a local JWKS: algorithm,
 *   signature, `exp`, issuer, audience and the registered claims the families require), reading
 *   the keys again once when the token names a `kid` it does not know (a rollover);
 * - reads the object the path names (document client, created at module load) and answers 404
 *   unless it lies in the token's instance (the tenant scope every protected path checks, from
 *   the item's own `Instances`);
 * - logs the request once through Powertools Logger (our logger: the same secret redaction);
 * - answers JSON.
 * It has no router, no body validation, no metrics, no usage metering and no status check of the
 * caller: those are ours to make cheap, not the floor. bench/cold-start-floor-status.ts is the same
 * function with the smallest status check beside it (the `statusFloor`).
 *
 * How it obtains the deployment's public keys: as a deployed family does. In AWS the key manager
 * (functions/keygen) publishes the public JWKS in one item of the table (PK `KEYS`, SK `JWKS`,
 * shared/db/published-keys.ts), and keygen rotates the keys while the stack runs (a new key
 * every 30 days, at whatever hour the schedule fires), so no value fixed at deploy time can stay
 * the whole key set. With `GATEHOUSE_PUBLIC_KEYS=table` (the stack's setting, and the bench's) it
 * reads that item in the same BatchGetItem as the object (and, in the status floor, the caller's
 * user and instance), as a family's first GET in Lambda does (shared/db/item-reads.ts): one
 * request. Without it (the local runtime) it reads the public half of the key ring in
 * `GATEHOUSE_DATA_DIR`.
 *
 * It reads process.env directly, as the baseline does: it stands for the smallest possible
 * function, not for ours.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { JSONWebKeySet } from 'jose';
import { createLocalJWKSet } from 'jose/jwks/local';
import { jwtVerify } from 'jose/jwt/verify';
import { parseRing, publicJwksOf } from '#shared/auth/key-ring.ts';
import { OBJECT_SK, PUBLIC_KEYS_PK, PUBLIC_KEYS_SK, collectionPk, objectPk } from '#shared/db/item-keys.ts';
import { ApiError, notFound, unauthorized } from '#shared/errors.ts';
import { createLogger } from '#shared/logger.ts';

const env = process.env;
const region = env.GATEHOUSE_REGION ?? 'us-east-1';
const endpoint = env.GATEHOUSE_DYNAMODB_ENDPOINT;
export const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region, ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}) }),
);
export const tableName = env.GATEHOUSE_TABLE_NAME ?? 'gatehouse';
const issuer = env.GATEHOUSE_ISSUER ?? 'gatehouse';
const audience = env.GATEHOUSE_AUDIENCE ?? 'gatehouse-api';
const keyCacheMs = Number(env.GATEHOUSE_KEY_CACHE_SECONDS ?? 300) * 1000;
const logger = createLogger({ logLevel: (env.GATEHOUSE_LOG_LEVEL as 'INFO' | undefined) ?? 'INFO' });

/** The deployment's public keys: the table item keygen writes (AWS), else the local ring's public half. */
async function readPublicKeys(): Promise<JSONWebKeySet> {
  if (env.GATEHOUSE_PUBLIC_KEYS === 'table') {
    const out = await client.send(new GetCommand({ TableName: tableName, Key: { PK: PUBLIC_KEYS_PK, SK: PUBLIC_KEYS_SK } }));
    if (typeof out.Item?.Jwks !== 'string') throw new Error('no public keys are published in the table');
    return JSON.parse(out.Item.Jwks) as JSONWebKeySet;
  }
  const ring = parseRing(await readFile(join(env.GATEHOUSE_DATA_DIR ?? '.data', 'keys', 'signing-key.json'), 'utf8'));
  if (!ring) throw new Error('no signing key ring in the data directory');
  return publicJwksOf(ring);
}

let keys: { set: ReturnType<typeof createLocalJWKSet>; at: number } | undefined;
async function keySet(fresh: boolean, read: () => Promise<JSONWebKeySet>): Promise<ReturnType<typeof createLocalJWKSet>> {
  if (!keys || fresh || Date.now() - keys.at >= keyCacheMs) keys = { set: createLocalJWKSet(await (fresh ? readPublicKeys() : read())), at: Date.now() };
  return keys.set;
}

const verify = async (token: string, fresh: boolean, read: () => Promise<JSONWebKeySet>) =>
  jwtVerify(token, await keySet(fresh, read), { algorithms: ['ES256'], issuer, audience, requiredClaims: ['exp', 'iat', 'sub', 'jti'] });

/** What a verified access token says of its caller. */
export interface Caller {
  readonly instance: string;
  readonly user: string;
  /** The session generation the token was issued in (absent: 0). */
  readonly generation: number;
}

/** The caller a token's claims name; undefined without the instance and user claims. */
function callerIn(p: Record<string, unknown>): Caller | undefined {
  if (typeof p.ins !== 'string' || typeof p.sub !== 'string') return undefined;
  return { instance: p.ins, user: p.sub, generation: typeof p.gen === 'number' ? p.gen : 0 };
}

/** The token's caller, or an ApiError to answer. */
async function callerOf(token: string | undefined, read: () => Promise<JSONWebKeySet>): Promise<Caller | ApiError> {
  if (!token) return unauthorized('Authorization: Bearer <token> is required.');
  try {
    let payload;
    try {
      ({ payload } = await verify(token, false, read));
    } catch (err) {
      if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err;
      ({ payload } = await verify(token, true, read));
    }
    return callerIn(payload) ?? unauthorized('The access token is missing required claims.');
  } catch {
    return unauthorized('The access token is not valid.');
  }
}

/** The bearer token of an Authorization header. */
const bearer = (authorization: string | undefined): string | undefined => /^Bearer\s+([A-Za-z0-9_\-.]+)\s*$/i.exec(authorization ?? '')?.[1];

/**
 * The check that the caller the token claims may still call (user and instance enabled, sessions
 * not revoked): the items it needs are read with the object and the keys, so it is given the
 * claims before they are verified; its answer counts only once they are.
 */
export interface StatusCheck {
  readonly keys: (claimed: Caller) => ReadonlyArray<{ readonly PK: string; readonly SK: string }>;
  readonly allowed: (claimed: Caller, items: ReadonlyArray<Record<string, unknown>>) => boolean;
}

/** The claims of a token, decoded without verifying them (undefined when they do not decode). */
function claimedCaller(token: string): Caller | undefined {
  try {
    return callerIn(JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>);
  } catch {
    return undefined;
  }
}

/** The published keys among the items read, or a read of them apart (the local ring, or none published). */
function keysIn(items: ReadonlyArray<Record<string, unknown>>): () => Promise<JSONWebKeySet> {
  const published = items.find((i) => i.PK === PUBLIC_KEYS_PK);
  return typeof published?.Jwks === 'string' ? async () => JSON.parse(published.Jwks as string) as JSONWebKeySet : readPublicKeys;
}

/** The floor's handler; with `status`, the caller's status is read with the object and checked. */
export function floorHandler(status?: StatusCheck): (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2> {
  return async (event) => {
    const started = performance.now();
    const answer = (statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 => {
      logger.info('request', { family: 'floor', status: statusCode, ms: Math.round(performance.now() - started) });
      return { statusCode, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
    };
    // The object, the keys (while none are cached) and the status items in one request, before
    // the token is verified (a read only: nothing is answered before the verdict), as a family's
    // first GET does in Lambda.
    const key = event.rawPath.slice(event.rawPath.lastIndexOf('/') + 1);
    const token = bearer(event.headers?.authorization);
    const claimed = status && token ? claimedCaller(token) : undefined;
    const objectKey = { PK: objectPk(key), SK: OBJECT_SK };
    const wanted = [objectKey, ...(!keys && env.GATEHOUSE_PUBLIC_KEYS === 'table' ? [{ PK: PUBLIC_KEYS_PK, SK: PUBLIC_KEYS_SK }] : []), ...(claimed ? status!.keys(claimed) : [])];
    const items =
      wanted.length === 1
        ? [(await client.send(new GetCommand({ TableName: tableName, Key: objectKey }))).Item].filter((i) => i !== undefined)
        : ((await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: wanted } } }))).Responses?.[tableName] ?? []);
    const caller = await callerOf(token, keysIn(items));
    if (caller instanceof ApiError) return answer(caller.status, caller.toBody());
    // The status answers for the claims it was given: the verified ones.
    if (status && (!claimed || claimed.user !== caller.user || claimed.instance !== caller.instance || claimed.generation !== caller.generation || !status.allowed(claimed, items))) {
      const refused = unauthorized('The user or instance of this token is disabled, or its sessions were revoked.');
      return answer(refused.status, refused.toBody());
    }
    const item = items.find((i) => i.PK === objectKey.PK && i.SK === OBJECT_SK);
    const instances = item?.Instances as readonly string[] | undefined;
    if (!item || !instances?.includes(caller.instance)) return answer(404, notFound().toBody());
    return answer(200, item);
  };
}

/**
 * The list floor's handler (bench/cold-start-floor-list.ts): the first page of a collection of the
 * token's instance (`/api/f/<instance>/<collection>`), one Query of the collection's index beside
 * the keys and status BatchGetItem (a Query cannot join a BatchGetItem: two requests at once, as a
 * family's first list sends), answered once the token is verified, the status allows it and the
 * path's instance is the token's.
 */
export function listFloorHandler(status: StatusCheck): (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2> {
  return async (event) => {
    const started = performance.now();
    const answer = (statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 => {
      logger.info('request', { family: 'listFloor', status: statusCode, ms: Math.round(performance.now() - started) });
      return { statusCode, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
    };
    const [, , , instance = '', collection = ''] = event.rawPath.split('/');
    const pageSize = Math.min(1000, Math.max(1, Number(event.queryStringParameters?.pageSize ?? 20) || 20));
    const token = bearer(event.headers?.authorization);
    const claimed = token ? claimedCaller(token) : undefined;
    const wanted = [...(!keys && env.GATEHOUSE_PUBLIC_KEYS === 'table' ? [{ PK: PUBLIC_KEYS_PK, SK: PUBLIC_KEYS_SK }] : []), ...(claimed ? status.keys(claimed) : [])];
    const [items, page] = await Promise.all([
      wanted.length > 0
        ? client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: wanted } } })).then((out) => out.Responses?.[tableName] ?? [])
        : Promise.resolve([]),
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :pk',
          ExpressionAttributeValues: { ':pk': collectionPk(instance, collection) },
          Limit: pageSize,
        }),
      ),
    ]);
    const caller = await callerOf(token, keysIn(items));
    if (caller instanceof ApiError) return answer(caller.status, caller.toBody());
    if (!claimed || claimed.user !== caller.user || claimed.instance !== caller.instance || claimed.generation !== caller.generation || !status.allowed(claimed, items)) {
      const refused = unauthorized('The user or instance of this token is disabled, or its sessions were revoked.');
      return answer(refused.status, refused.toBody());
    }
    if (instance !== caller.instance) return answer(403, { Error: 'Forbidden' });
    return answer(200, { Results: page.Items ?? [] });
  };
}

export const handler = floorHandler();
