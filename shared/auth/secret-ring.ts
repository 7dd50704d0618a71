/**
 * The private signing key ring in AWS: the Secrets Manager secret `GATEHOUSE_SIGNING_KEY_SECRET`,
 * written by the stack's key manager (functions/keygen). Only the token function imports this
 * module, so it is the only HTTP family that bundles the Secrets Manager client (secret-read.ts,
 * loaded with the first read); the others verify against the JWKS published in the table
 * (shared/db/published-keys.ts).
 */
import type { Config } from '../config.ts';
import { onFirstUse } from '../first-use.ts';
import { parseRing } from './key-ring.ts';
import { refreshing, type RingSource } from './keys.ts';

/**
 * The ring in the secret, read on first use and again after the key-cache lifetime; undefined
 * when no secret is named (the local runtime: the ring is in the data directory). The client
 * (secret-read.ts) is loaded and created on the first read.
 */
export function secretRingFor(cfg: Pick<Config, 'region' | 'signingKeySecret' | 'keyCacheSeconds'>): RingSource | undefined {
  const secretId = cfg.signingKeySecret;
  if (!secretId) return undefined;
  const read = onFirstUse(() => import('./secret-read.ts').then((m) => m.secretReader(cfg.region, secretId)));
  return refreshing(async () => {
    const ring = parseRing(await (await read())());
    if (!ring) throw new Error('the signing key secret holds no signing key ring');
    return ring;
  }, cfg.keyCacheSeconds * 1000);
}
