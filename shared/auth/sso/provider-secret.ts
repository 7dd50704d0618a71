/** An identity provider's client secret at rest: sealed (secret-box.ts) and bound to the provider. */
import type { Config } from '../../config.ts';
import { getProviderSecret } from '../../db/sso-repo.ts';
import { openSecret } from '../secret-box.ts';
import { providerSecretContext } from './provider-rules.ts';

/** The provider's client secret in clear, or undefined when it has none. */
export async function providerSecret(cfg: Config, db: Parameters<typeof getProviderSecret>[0], providerKey: string): Promise<string | undefined> {
  const sealed = await getProviderSecret(db, providerKey);
  return sealed === undefined ? undefined : openSecret(sealed, providerSecretContext(providerKey), cfg);
}
