/**
 * The private signing key ring in AWS: the Secrets Manager secret `GATEHOUSE_SIGNING_KEY_SECRET`,
 * written by the stack's key manager (functions/keygen). Only the token function imports this
 * module, so it is the only HTTP family that bundles the Secrets Manager client; the others verify
 * against the JWKS published in the table (shared/db/published-keys.ts).
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Config } from '../config.ts';
import { parseRing } from './key-ring.ts';
import { refreshing, type RingSource } from './keys.ts';

/**
 * The ring in the secret, read on first use and again after the key-cache lifetime; undefined
 * when no secret is named (the local runtime: the ring is in the data directory). The client is
 * created on first use.
 */
export function secretRingFor(cfg: Pick<Config, 'region' | 'signingKeySecret' | 'keyCacheSeconds'>): RingSource | undefined {
  const secretId = cfg.signingKeySecret;
  if (!secretId) return undefined;
  let client: SecretsManagerClient | undefined;
  return refreshing(async () => {
    client ??= new SecretsManagerClient({ region: cfg.region });
    const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    const ring = parseRing(out.SecretString);
    if (!ring) throw new Error('the signing key secret holds no signing key ring');
    return ring;
  }, cfg.keyCacheSeconds * 1000);
}
