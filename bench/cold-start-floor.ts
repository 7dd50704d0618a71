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
 * - reads the object the path names with one GetItem (document client, created at module load),
 *   beside the verification, and answers 404 unless it lies in the token's instance (the tenant scope every protected path
 *   checks, from the item's own `Instances`);
 * - logs the request once through Powertools Logger (our logger: the same secret redaction);
 * - answers JSON.
 * It has no router, no body validation, no metrics, no usage metering and no status check of the
 * caller (a family may run that beside its own read): those are ours to make cheap, not the floor.
 *
 * How it obtains the deployment's public keys: as a deployed family does. In AWS the key manager
 * (functions/keygen) publishes the public JWKS in one item of the table (PK `KEYS`, SK `JWKS`,
 * shared/db/published-keys.ts), and keygen rotates the keys while the stack runs (a new key
 * every 30 days, at whatever hour the schedule fires), so no value fixed at deploy time can stay
 * the whole key set. With `GATEHOUSE_PUBLIC_KEYS=table` (the stack's setting, and the bench's) it
 * reads that item with one GetItem through the same document client, beside the object's GetItem,
 * as a family's first GET does. Without it (the local runtime) it reads
 * the public half of the key ring in `GATEHOUSE_DATA_DIR`.
 *
 * It reads process.env directly, as the baseline does: it stands for the smallest possible
 * function, not for ours.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { parseRing, publicJwksOf } from '#shared/auth/key-ring.ts';
import { OBJECT_SK, PUBLIC_KEYS_PK, PUBLIC_KEYS_SK, objectPk } from '#shared/db/keys.ts';
import { notFound, unauthorized, type ApiError } from '#shared/errors.ts';
import { createLogger } from '#shared/logger.ts';

const env = process.env;
const region = env.GATEHOUSE_REGION ?? 'us-east-1';
const endpoint = env.GATEHOUSE_DYNAMODB_ENDPOINT;
const client = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region, ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}) }),
);
const tableName = env.GATEHOUSE_TABLE_NAME ?? 'gatehouse';
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
async function keySet(fresh: boolean): Promise<ReturnType<typeof createLocalJWKSet>> {
  if (!keys || fresh || Date.now() - keys.at >= keyCacheMs) keys = { set: createLocalJWKSet(await readPublicKeys()), at: Date.now() };
  return keys.set;
}

const verify = async (token: string, fresh: boolean) =>
  jwtVerify(token, await keySet(fresh), { algorithms: ['ES256'], issuer, audience, requiredClaims: ['exp', 'iat', 'sub', 'jti'] });

/** The token's instance, or an ApiError to answer. */
async function instanceOf(authorization: string | undefined): Promise<string | ApiError> {
  const m = /^Bearer\s+([A-Za-z0-9_\-.]+)\s*$/i.exec(authorization ?? '');
  if (!m) return unauthorized('Authorization: Bearer <token> is required.');
  try {
    let payload;
    try {
      ({ payload } = await verify(m[1]!, false));
    } catch (err) {
      if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err;
      ({ payload } = await verify(m[1]!, true));
    }
    return typeof payload.ins === 'string' ? payload.ins : unauthorized('The access token is missing required claims.');
  } catch {
    return unauthorized('The access token is not valid.');
  }
}

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
  const started = performance.now();
  const answer = (statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 => {
    logger.info('request', { family: 'floor', status: statusCode, ms: Math.round(performance.now() - started) });
    return { statusCode, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
  };
  // The token's verdict and the object's read run side by side (a read only: nothing is answered
  // before the verdict), as a family's first GET does while it reads the keys.
  const key = event.rawPath.slice(event.rawPath.lastIndexOf('/') + 1);
  const [instance, out] = await Promise.all([
    instanceOf(event.headers?.authorization),
    client.send(new GetCommand({ TableName: tableName, Key: { PK: objectPk(key), SK: OBJECT_SK } })),
  ]);
  if (typeof instance !== 'string') return answer(instance.status, instance.toBody());
  const instances = out.Item?.Instances as readonly string[] | undefined;
  if (!out.Item || !instances?.includes(instance)) return answer(404, notFound().toBody());
  return answer(200, out.Item);
};
