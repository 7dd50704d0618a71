/**
 * The read of the signing key secret through the Secrets Manager client, in a module of its own:
 * secret-ring.ts loads it with the ring's first read, which the token service starts as soon as a
 * grant may succeed (beside the login's reads and the password check), so a new environment loads
 * the client while it waits for those instead of before its first request; secret-box.ts loads it
 * with the first sealed webhook secret it opens or seals (the webhooks and fan-out functions). Its
 * classes are imported by name: esbuild cannot tree-shake a package reached by `import()` itself.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** Reads the secret's string; the client is created on the first read. */
export function secretReader(region: string, secretId: string): () => Promise<string | undefined> {
  let client: SecretsManagerClient | undefined;
  return async () => {
    client ??= new SecretsManagerClient({ region });
    return (await client.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;
  };
}
