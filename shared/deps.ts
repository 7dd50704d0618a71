/**
 * The default dependencies of an execution environment: created once, on first use, and
 * injected into operations. Tests and the local runtime pass their own where they need to.
 */
import { config as loadedConfig, type Config } from './config.ts';
import { createAuthenticator } from './auth/authenticator.ts';
import { keyStoreFor, type KeyStore } from './auth/keys.ts';
import { createDb, type Db, type DbOptions } from './db/client.ts';
import type { BaseDeps } from './http/types.ts';
import { createLogger } from './logger.ts';

export interface CoreDeps extends BaseDeps {
  readonly keys: KeyStore;
}

export interface CoreDepsOverrides {
  readonly config?: Config;
  readonly db?: Db;
  readonly dbOptions?: DbOptions;
  readonly keys?: KeyStore;
  readonly now?: () => Date;
}

export function createCoreDeps(over: CoreDepsOverrides = {}): CoreDeps {
  const config = over.config ?? loadedConfig();
  const db = over.db ?? createDb(config, over.dbOptions);
  const keys = over.keys ?? keyStoreFor(config);
  const logger = createLogger(config);
  const authenticator = createAuthenticator({ config, keys });
  return { config, db, logger, keys, authenticator, now: over.now ?? (() => new Date()) };
}
