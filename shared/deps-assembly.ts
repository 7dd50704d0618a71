/**
 * The dependencies a function assembles, whatever checks its callers: core-deps.ts adds the
 * bearer-token authenticator for the families with protected routes; the token function, whose
 * routes are all public but which signs, adds the refusing one of public-deps.ts. Kept apart from
 * core-deps.ts so that the token function's bundle carries no token verification.
 */
import { config as loadedConfig, type Config } from './config.ts';
import { keyStoreFor, type KeyStore, type RingSource } from './auth/keys.ts';
import { createDb, type Db, type DbOptions } from './db/client.ts';
import type { BaseDeps } from './http/operation-contract.ts';
import type { Authenticator, Principal } from './auth/principal.ts';
import { createLogger } from './logger.ts';
import { outboxOnlyNotifierFor, type Notifier } from './notify/notifier.ts';

export interface CoreDeps extends BaseDeps {
  readonly keys: KeyStore;
  /**
   * Delivers one-time codes (local outbox, or SNS in AWS). Only the token function sends: it
   * passes the SNS notifier; the default never loads SNS (see `outboxOnlyNotifierFor`).
   */
  readonly notifier: Notifier;
}

export interface CoreDepsOverrides {
  readonly config?: Config;
  readonly db?: Db;
  readonly dbOptions?: DbOptions;
  readonly keys?: KeyStore;
  /**
   * The signing key ring when it is not in the data directory (the token function's, from its
   * secret in AWS: shared/auth/secret-ring.ts). Other functions only verify.
   */
  readonly signingRing?: RingSource;
  readonly now?: () => Date;
  readonly notifier?: Notifier;
  /** How long the authenticator reuses a user/instance status answer (default 30 s). */
  readonly statusCacheMs?: number;
  /**
   * Replaces the authenticator's user/instance status check; `false` switches it off (unit tests
   * without a database only: every deployment checks status).
   */
  readonly checkStatus?: false | ((principal: Principal) => Promise<void>);
}

/** Builds the authenticator of an environment from its other dependencies. */
export type AuthenticatorFor = (parts: { readonly config: Config; readonly db: Db; readonly keys: KeyStore; readonly now: () => Date }) => Authenticator;

/** The dependencies of an execution environment, with the authenticator `authenticatorFor` builds. */
export function assembleDeps(over: CoreDepsOverrides, authenticatorFor: AuthenticatorFor): CoreDeps {
  const config = over.config ?? loadedConfig();
  const db = over.db ?? createDb(config, over.dbOptions);
  const keys = over.keys ?? keyStoreFor(config, db, over.signingRing);
  const logger = createLogger(config);
  const now = over.now ?? (() => new Date());
  const authenticator = authenticatorFor({ config, db, keys, now });
  // Only the token function sends messages, and it passes its own notifier.
  const notifier = over.notifier ?? outboxOnlyNotifierFor(config);
  return { config, db, logger, keys, authenticator, now, notifier };
}
