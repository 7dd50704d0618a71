/**
 * Signing-key manager: the Lambda behind each stack's `Custom::GatehouseSigningKey` resource and
 * its hourly schedule (see infra/signing-keys.ts and shared/auth/key-ring.ts).
 *
 * Where the keys live: the private ring in a Secrets Manager secret (the token function reads it),
 * the public JWKS in one item of the stack's table (every verifying function reads it with the
 * DynamoDB client it already has: shared/db/published-keys.ts).
 *
 * - CloudFormation Create and Update: make sure the secret holds a key ring and the table its JWKS. A
 *   ring whose keys the JWKS all lists is kept (a redeploy, a retried invocation or a rollback
 *   never invalidates issued tokens; a single private JWK from before rotation is a ring of one);
 *   a JWKS missing one of the ring's keys is completed; otherwise a new ring of one key is
 *   written (public first: a key is published before anything is signed with it).
 * - CloudFormation Delete: keep the values; the secret and the table themselves belong to the stack.
 * - `{"action":"maintain"}` (the hourly schedule): one maintenance step of the ring: drop the
 *   keys whose tokens have all expired, and schedule the next key when the signing one is
 *   `GATEHOUSE_SIGNING_KEY_ROTATION_DAYS` old. `{"action":"rotate"}` (an operator's
 *   `aws lambda invoke`): schedule the next key now. Writes go JWKS first, ring, then the JWKS
 *   without dropped keys, then both are read back and the JWKS completed should another run
 *   have written in between (no reserved concurrency: a new account's quota cannot spare it).
 *
 * A CloudFormation result goes to the pre-signed response URL, failures included (an unanswered
 * request would hold the deployment for an hour). Key material is never logged nor returned.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { CloudFormationCustomResourceEvent, CloudFormationCustomResourceResponse, Context } from 'aws-lambda';
import type { JSONWebKeySet, JWK } from 'jose';
import { loadConfig } from '#shared/config.ts';
import { kidsOf, maintainRing, newRing, parseRing, publicJwk, rolloverWrites, serializeRing, type RotationPolicy } from '#shared/auth/key-ring.ts';
import type { KeyRing } from '#shared/auth/key-store.ts';
import { rotationPolicyOf } from '#shared/auth/keys.ts';
import { generateSigningJwk } from '#shared/auth/key-files.ts';
import { readPublishedJwks, writePublishedJwks } from '#shared/db/published-keys.ts';
import { createDb } from '#shared/db/client.ts';
import { createLogger } from '#shared/logger.ts';
import { mappingErrorStacks } from '#shared/error-stacks.ts';

export interface KeygenProperties {
  readonly SigningKeySecretId: string;
  /** The table whose `KEYS`/`JWKS` item holds the public JWKS. */
  readonly PublicKeysTable: string;
}

export interface KeygenDeps {
  /** Makes a new private JWK with `kid`, `alg` and `use`. */
  readonly generate: () => Promise<JWK>;
  /** The current value of a secret (a new secret holds a random placeholder). */
  readonly getSecret: (secretId: string) => Promise<string | undefined>;
  /** Stores a new current value of a secret. */
  readonly putSecret: (secretId: string, value: string) => Promise<void>;
  /** The JWKS published in a table (undefined before the first write); read consistently. */
  readonly getJwks: (tableName: string) => Promise<string | undefined>;
  /** Publishes a JWKS in a table. */
  readonly putJwks: (tableName: string, value: string) => Promise<void>;
  /** Uploads the response document to CloudFormation's pre-signed URL. */
  readonly respond: (url: string, body: string) => Promise<void>;
  /** Writes one structured log line (never key material). */
  readonly log: (level: 'info' | 'error', entry: Record<string, unknown>) => void;
  /** The clock (default: the system's). */
  readonly now?: () => Date;
  /** Key cache, token lifetime and rotation interval (default: from the environment). */
  readonly policy?: RotationPolicy;
  /** Where a scheduled run maintains the keys (default: `GATEHOUSE_SIGNING_KEY_SECRET` and `GATEHOUSE_TABLE_NAME`). */
  readonly stores?: KeygenProperties;
}

type CfnEvent = CloudFormationCustomResourceEvent<KeygenProperties>;

/** What the schedule (or an operator) sends. */
export interface MaintenanceEvent {
  readonly action: 'maintain' | 'rotate';
}

function storesOf(props: Partial<KeygenProperties> | undefined): KeygenProperties {
  const signing = props?.SigningKeySecretId;
  const table = props?.PublicKeysTable;
  if (typeof signing !== 'string' || !signing || typeof table !== 'string' || !table) {
    throw new Error('SigningKeySecretId and PublicKeysTable are required');
  }
  return { SigningKeySecretId: signing, PublicKeysTable: table };
}

/** The kids a stored JWKS lists (none when it is not a JWKS: a new secret's placeholder). */
function publishedKids(text: string | undefined): string[] {
  if (!text) return [];
  try {
    const jwks = JSON.parse(text) as JSONWebKeySet;
    return Array.isArray(jwks.keys) ? kidsOf(jwks) : [];
  } catch {
    return [];
  }
}

type KeyOutcome = 'kept' | 'generated' | 'repaired' | 'maintained' | 'rotated';

interface RingOutcome {
  readonly key: KeyOutcome;
  readonly scheduled?: string;
  readonly dropped?: readonly string[];
  readonly rotationPending?: boolean;
}

/** Reads the ring and the JWKS, applies `step` to the ring, and writes what changed in rollover order. */
async function updateRing(
  ids: KeygenProperties,
  deps: KeygenDeps,
  step: (ring: KeyRing | undefined, nowS: number) => Promise<{ ring: KeyRing } & Omit<RingOutcome, 'key'>>,
): Promise<Omit<RingOutcome, 'key'> & { changed: boolean; fresh: boolean }> {
  const [signing, published] = await Promise.all([deps.getSecret(ids.SigningKeySecretId), deps.getJwks(ids.PublicKeysTable)]);
  const before = parseRing(signing);
  const nowS = Math.floor((deps.now?.() ?? new Date()).getTime() / 1000);
  const { ring, ...rest } = await step(before, nowS);
  const writes = rolloverWrites(before, ring, publishedKids(published));
  for (const w of writes) {
    if (w.target === 'jwks') await deps.putJwks(ids.PublicKeysTable, JSON.stringify(w.value));
    else await deps.putSecret(ids.SigningKeySecretId, serializeRing(w.value));
  }
  if (writes.length > 0) await completeJwks(ids, deps);
  return { ...rest, changed: writes.length > 0, fresh: before === undefined };
}

/**
 * Reads the ring and the JWKS back and publishes any key of the stored ring the stored JWKS lacks: were
 * two runs (the schedule and an operator's rotate) to interleave their writes, the last one to
 * finish leaves a JWKS that lists every key of the ring that won.
 */
async function completeJwks(ids: KeygenProperties, deps: KeygenDeps): Promise<void> {
  const [signing, published] = await Promise.all([deps.getSecret(ids.SigningKeySecretId), deps.getJwks(ids.PublicKeysTable)]);
  const ring = parseRing(signing);
  if (!ring) return;
  const listed = publishedKids(published);
  const missing = ring.keys.filter((k) => !listed.includes(k.jwk.kid!));
  if (missing.length === 0) return;
  const kept = listed.length > 0 ? (JSON.parse(published!) as JSONWebKeySet).keys : [];
  await deps.putJwks(ids.PublicKeysTable, JSON.stringify({ keys: [...kept, ...missing.map((k) => publicJwk(k.jwk))] }));
  deps.log('info', { message: 'signing keys: completed a JWKS written by another run', kids: missing.map((k) => k.jwk.kid) });
}

/** Keeps a valid ring (completing its JWKS), or writes a new one. */
async function ensureKeyRing(ids: KeygenProperties, deps: KeygenDeps): Promise<RingOutcome> {
  const r = await updateRing(ids, deps, async (ring, nowS) => ({ ring: ring ?? newRing(await deps.generate(), nowS) }));
  return { key: r.fresh ? 'generated' : r.changed ? 'repaired' : 'kept' };
}

/** One maintenance step (or a rotation on demand). */
async function maintainKeyRing(ids: KeygenProperties, deps: KeygenDeps, rotate: boolean): Promise<RingOutcome> {
  const policy = deps.policy ?? rotationPolicyOf(loadConfig());
  let pending = false;
  const r = await updateRing(ids, deps, async (ring, nowS) => {
    if (!ring) return { ring: newRing(await deps.generate(), nowS) };
    const m = await maintainRing(ring, nowS, policy, deps.generate, rotate);
    pending = rotate && m.scheduled === undefined;
    return { ring: m.ring, ...(m.scheduled ? { scheduled: m.scheduled } : {}), dropped: m.dropped };
  });
  if (r.fresh) return { key: 'generated' };
  return {
    key: r.scheduled ? 'rotated' : r.changed ? 'maintained' : 'kept',
    ...(r.scheduled ? { scheduled: r.scheduled } : {}),
    ...(r.dropped?.length ? { dropped: r.dropped } : {}),
    ...(pending ? { rotationPending: true } : {}),
  };
}

interface Outcome extends RingOutcome {
  /** The signing-key secret's id; a new id makes CloudFormation delete (keep) the old resource. */
  readonly physicalId: string;
}

async function apply(event: CfnEvent, deps: KeygenDeps): Promise<Outcome> {
  if (event.RequestType === 'Delete') return { physicalId: event.PhysicalResourceId, key: 'kept' };
  const ids = storesOf(event.ResourceProperties);
  return { physicalId: ids.SigningKeySecretId, ...(await ensureKeyRing(ids, deps)) };
}

const isCfnEvent = (e: unknown): e is CfnEvent =>
  typeof e === 'object' && e !== null && 'RequestType' in e && 'ResponseURL' in e;

async function handleCfn(event: CfnEvent, d: KeygenDeps, context: Pick<Context, 'logStreamName'>): Promise<void> {
  const common = {
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
  };
  let response: CloudFormationCustomResourceResponse;
  try {
    const { physicalId, key } = await apply(event, d);
    response = { ...common, Status: 'SUCCESS', PhysicalResourceId: physicalId };
    d.log('info', { message: 'signing key request done', requestType: event.RequestType, key, ...common });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    d.log('error', { message: 'signing key request failed', error: message, requestType: event.RequestType, ...common });
    response = {
      ...common,
      Status: 'FAILED',
      Reason: `${message} (see log stream ${context.logStreamName})`,
      // A failed Create has no resource yet; CloudFormation still needs an id to answer with.
      PhysicalResourceId: 'PhysicalResourceId' in event ? event.PhysicalResourceId : context.logStreamName,
    };
  }
  await d.respond(event.ResponseURL, JSON.stringify(response));
}

/** The secret and the table named by the function's environment. */
function storesOfConfig(): KeygenProperties {
  const cfg = loadConfig();
  return storesOf({ SigningKeySecretId: cfg.signingKeySecret, PublicKeysTable: cfg.tableName });
}

export function createHandler(deps: () => KeygenDeps) {
  return async function handler(event: CfnEvent | MaintenanceEvent, context: Pick<Context, 'logStreamName'>): Promise<RingOutcome | void> {
    const d = deps();
    if (isCfnEvent(event)) return handleCfn(event, d, context);
    const action = (event as Partial<MaintenanceEvent>).action;
    if (action !== 'maintain' && action !== 'rotate') throw new Error('expected a CloudFormation request or {"action":"maintain"|"rotate"}');
    const ids = d.stores ?? storesOfConfig();
    try {
      const outcome = await maintainKeyRing(ids, d, action === 'rotate');
      d.log('info', { message: 'signing keys maintained', action, ...outcome });
      return outcome;
    } catch (err) {
      // Thrown again: the invocation fails, Lambda retries it, and the error alarm sees it.
      d.log('error', { message: 'signing key maintenance failed', action, error: err instanceof Error ? err.message : String(err) });
      throw err;
    }
  };
}

/**
 * PUTs the response document with an empty Content-Type: the URL is pre-signed for exactly that.
 * (CloudFormation's URLs are https; plain http is accepted for local tests.)
 */
export function putResponse(url: string, body: string): Promise<void> {
  const request = new URL(url).protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'PUT',
        headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new Error(`CloudFormation response upload answered ${status}`));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('CloudFormation response upload timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

let defaults: KeygenDeps | undefined;

function defaultDeps(): KeygenDeps {
  if (!defaults) {
    const client = new SecretsManagerClient({});
    // The table's client: GetItem and PutItem of the one JWKS item (the IAM policy allows no other key).
    const dynamo = createDb(loadConfig()).raw;
    const logger = createLogger({ logLevel: 'INFO' }, 'gatehouse-keygen');
    defaults = {
      generate: generateSigningJwk,
      getSecret: async (secretId) => {
        try {
          return (await client.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;
        } catch (err) {
          // A secret created without a value has no current version yet.
          if (err instanceof ResourceNotFoundException) return undefined;
          throw err;
        }
      },
      putSecret: async (secretId, value) => {
        await client.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: value }));
      },
      getJwks: (tableName) => readPublishedJwks(dynamo, tableName, { consistent: true }),
      putJwks: (tableName, value) => writePublishedJwks(dynamo, tableName, value),
      respond: putResponse,
      log: (level, { message, ...rest }) => logger[level](String(message), rest),
    };
  }
  return defaults;
}

// Errors reach the runtime with stacks that name the TypeScript (shared/source-mapped-stack.ts).
export const handler = mappingErrorStacks(createHandler(defaultDeps));
