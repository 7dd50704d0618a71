/**
 * Signing-key generator: the Lambda behind each stack's `Custom::GatehouseSigningKey` resource.
 *
 * - Create and Update: make sure the two secrets hold a key pair. If the private secret holds a
 *   private JWK whose `kid` the public JWKS lists, keep it (a redeploy, a retried invocation or a
 *   rollback never invalidates issued tokens); otherwise make an ES256 key pair (kid = JWK
 *   thumbprint) and write the public JWKS, then the private JWK (public first: a key is
 *   published before anything is signed with it).
 * - Delete: keep the values; the secrets themselves belong to the stack.
 *
 * The result goes to CloudFormation's pre-signed response URL, failures included (an
 * unanswered request would hold the deployment for an hour). Key material is never logged
 * nor returned.
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
import { generateSigningJwk, publicJwk } from '#shared/auth/keys.ts';
import { createLogger } from '#shared/logger.ts';

export interface KeygenProperties {
  readonly SigningKeySecretId: string;
  readonly PublicKeysSecretId: string;
}

export interface KeygenDeps {
  /** Makes a new private JWK with `kid`, `alg` and `use`. */
  readonly generate: () => Promise<JWK>;
  /** The current value of a secret (a new secret holds a random placeholder). */
  readonly getSecret: (secretId: string) => Promise<string | undefined>;
  /** Stores a new current value of a secret. */
  readonly putSecret: (secretId: string, value: string) => Promise<void>;
  /** Uploads the response document to CloudFormation's pre-signed URL. */
  readonly respond: (url: string, body: string) => Promise<void>;
  /** Writes one structured log line (never key material). */
  readonly log: (level: 'info' | 'error', entry: Record<string, unknown>) => void;
}

type Event = CloudFormationCustomResourceEvent<KeygenProperties>;

function secretIds(props: Partial<KeygenProperties> | undefined): KeygenProperties {
  const signing = props?.SigningKeySecretId;
  const pub = props?.PublicKeysSecretId;
  if (typeof signing !== 'string' || !signing || typeof pub !== 'string' || !pub) {
    throw new Error('SigningKeySecretId and PublicKeysSecretId are required');
  }
  return { SigningKeySecretId: signing, PublicKeysSecretId: pub };
}

/** True when `signing` is a private JWK with a `kid` that the JWKS in `published` lists. */
function holdsKeyPair(signing: string | undefined, published: string | undefined): boolean {
  if (!signing || !published) return false;
  try {
    const jwk = JSON.parse(signing) as JWK;
    const jwks = JSON.parse(published) as JSONWebKeySet;
    return (
      typeof jwk.d === 'string' &&
      typeof jwk.kid === 'string' &&
      Array.isArray(jwks.keys) &&
      jwks.keys.some((k) => k.kid === jwk.kid)
    );
  } catch {
    return false;
  }
}

/** Keeps a valid key pair, or writes a new one. */
async function ensureKeyPair(ids: KeygenProperties, deps: KeygenDeps): Promise<'kept' | 'generated'> {
  const [signing, published] = await Promise.all([
    deps.getSecret(ids.SigningKeySecretId),
    deps.getSecret(ids.PublicKeysSecretId),
  ]);
  if (holdsKeyPair(signing, published)) return 'kept';
  const jwk = await deps.generate();
  await deps.putSecret(ids.PublicKeysSecretId, JSON.stringify({ keys: [publicJwk(jwk)] }));
  await deps.putSecret(ids.SigningKeySecretId, JSON.stringify(jwk));
  return 'generated';
}

interface Outcome {
  /** The signing-key secret's id; a new id makes CloudFormation delete (keep) the old resource. */
  readonly physicalId: string;
  readonly key: 'kept' | 'generated' | 'untouched';
}

async function apply(event: Event, deps: KeygenDeps): Promise<Outcome> {
  if (event.RequestType === 'Delete') return { physicalId: event.PhysicalResourceId, key: 'untouched' };
  const ids = secretIds(event.ResourceProperties);
  return { physicalId: ids.SigningKeySecretId, key: await ensureKeyPair(ids, deps) };
}

export function createHandler(deps: () => KeygenDeps) {
  return async function handler(event: Event, context: Pick<Context, 'logStreamName'>): Promise<void> {
    const d = deps();
    const common = {
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    };
    let response: CloudFormationCustomResourceResponse;
    try {
      const outcome = await apply(event, d);
      response = { ...common, Status: 'SUCCESS', PhysicalResourceId: outcome.physicalId };
      d.log('info', { message: 'signing key request done', requestType: event.RequestType, key: outcome.key, ...common });
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
      respond: putResponse,
      log: (level, { message, ...rest }) => logger[level](String(message), rest),
    };
  }
  return defaults;
}

export const handler = createHandler(defaultDeps);
