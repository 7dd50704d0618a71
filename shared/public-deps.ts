/**
 * The dependencies of a function that serves only public routes (the service family: sysinfo,
 * the OpenAPI document and its reference page, the JSON 404): configuration, table, logger and
 * clock, and no signing keys. Its authenticator refuses every token; the pipeline never asks it,
 * since none of those routes takes one (`auth: false` in shared/routes.ts). Keeping keys, token
 * verification and licences out keeps `jose` and the Secrets Manager client out of its bundle.
 */
import { config as loadedConfig, type Config } from './config.ts';
import { createDb, type Db, type DbOptions } from './db/client.ts';
import { unauthorized } from './errors.ts';
import type { BaseDeps } from './http/operation-contract.ts';
import type { Authenticator } from './auth/principal.ts';
import { createLogger } from './logger.ts';

export interface PublicDepsOverrides {
  readonly config?: Config;
  readonly db?: Db;
  readonly dbOptions?: DbOptions;
  readonly now?: () => Date;
}

/**
 * The authenticator of a function whose routes take no token: it refuses every one (the token
 * function uses it too: it needs the signing keys, but verifies no access token).
 */
export const refusingAuthenticator: Authenticator = {
  authenticate: async () => {
    throw unauthorized('This function serves no route that takes an access token.');
  },
};

export function createPublicDeps(over: PublicDepsOverrides = {}): BaseDeps {
  const config = over.config ?? loadedConfig();
  return {
    config,
    db: over.db ?? createDb(config, over.dbOptions),
    logger: createLogger(config),
    now: over.now ?? (() => new Date()),
    authenticator: refusingAuthenticator,
  };
}
