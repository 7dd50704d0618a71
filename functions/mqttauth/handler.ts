/**
 * The AWS IoT Core custom authorizer of the MQTT live feed. IoT Core invokes it for each MQTT
 * connection (and again every `refreshAfterInSeconds`); it verifies the access token with the
 * same code as the HTTP API and the local broker (`shared/live/mqtt/auth.ts`) and answers a
 * policy limited to the token's instance scope.
 *
 * The token is the MQTT username (anything after a `?` there is IoT Core's own parameters), or
 * `access_token` in the WSS URL's query for browsers, which cannot set a username on every
 * library. The password is ignored.
 */
import type { Context } from 'aws-lambda';
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { putMqttClient } from '#shared/db/mqtt-clients.ts';
import { instanceTree } from '#shared/db/objects-repo.ts';
import { iotPolicyDocuments, MAX_POLICY_INSTANCES, verifyMqttTokenWith } from '#shared/live/mqtt/auth.ts';
import { mappingErrorStacks } from '#shared/error-stacks.ts';

/** IoT Core's bounds for `disconnectAfterInSeconds` and `refreshAfterInSeconds`. */
export const MIN_SESSION_SECONDS = 300;
export const MAX_SESSION_SECONDS = 86_400;
/**
 * Policy re-evaluation: a new sub-instance, and a revoked user (disabled, new password, signed out
 * everywhere, demoted, deleted: the refresh reads the status uncached and refuses, and IoT Core
 * disconnects the client), take effect within this time. It is IoT Core's minimum: the bound for
 * a revoked user's client the fan-out could not disconnect sooner (each accepted client id is
 * recorded for it, see `putMqttClient`); the local broker re-checks every few seconds.
 */
export const REFRESH_SECONDS = 300;

/** What IoT Core sends a custom authorizer (signing disabled). */
export interface IotAuthorizerEvent {
  readonly token?: string;
  readonly signatureVerified?: boolean;
  readonly protocols?: readonly string[];
  readonly protocolData?: {
    readonly mqtt?: { readonly username?: string; readonly password?: string; readonly clientId?: string };
    readonly http?: { readonly headers?: Record<string, string>; readonly queryString?: string };
    readonly tls?: { readonly serverName?: string };
  };
  readonly connectionMetadata?: { readonly id?: string };
}

export interface IotAuthorizerResponse {
  readonly isAuthenticated: boolean;
  readonly principalId: string;
  readonly disconnectAfterInSeconds: number;
  readonly refreshAfterInSeconds: number;
  readonly policyDocuments: string[];
}

/** The access token a connection presents: MQTT username first, then the URL's `access_token`. */
export function tokenOf(event: IotAuthorizerEvent): string | undefined {
  const username = event.protocolData?.mqtt?.username;
  const fromUsername = username?.split('?')[0];
  if (fromUsername) return fromUsername;
  const query = event.protocolData?.http?.queryString ?? '';
  return new URLSearchParams(query.startsWith('?') ? query.slice(1) : query).get('access_token') || undefined;
}

const refused = (): IotAuthorizerResponse => ({
  isAuthenticated: false,
  principalId: 'refused',
  disconnectAfterInSeconds: MIN_SESSION_SECONDS,
  refreshAfterInSeconds: MIN_SESSION_SECONDS,
  policyDocuments: [],
});

export function createHandler(deps: () => CoreDeps) {
  return async function mqttauth(event: IotAuthorizerEvent, context?: Context): Promise<IotAuthorizerResponse> {
    const d = deps();
    // The policy's instance scope (the token's instance and those below it, at most
    // MAX_POLICY_INSTANCES) is read beside the token's checks (see verifyMqttTokenWith).
    const verdict = await verifyMqttTokenWith(d, tokenOf(event), (principal, step) => instanceTree(d.db, principal.instanceKey, MAX_POLICY_INSTANCES, step));
    if ('refused' in verdict) {
      d.logger.info('mqtt connection refused', { reason: verdict.refused });
      return refused();
    }
    const left = verdict.session.expiresAt - Math.floor(d.now().getTime() / 1000);
    // IoT Core cannot disconnect sooner than 300 s: a token closer to its expiry is refused, and
    // the client (CONNACK 5) logs in again, so no connection outlives its token.
    if (left < MIN_SESSION_SECONDS) {
      d.logger.info('mqtt connection refused', { reason: 'The access token expires within 5 minutes.' });
      return refused();
    }
    // The fan-out disconnects a revoked user's clients by id (IoT's DeleteConnection), sooner than
    // the next refresh: it learns them here. Without the record the refresh still ends the client.
    const clientId = event.protocolData?.mqtt?.clientId;
    if (clientId) {
      const now = Math.floor(d.now().getTime() / 1000);
      await putMqttClient(d.db, { clientId, userKey: verdict.session.principal.userKey, ttl: now + Math.min(MAX_SESSION_SECONDS, left) }).catch((err: unknown) =>
        d.logger.warn('mqtt client not recorded: a revocation ends it at the next refresh', { error: (err as Error).message }),
      );
    }
    const scope = verdict.value;
    if (scope.truncated) d.logger.warn('mqtt policy names only the first instances of the scope', { instances: scope.keys.length });
    const [, partition = 'aws', , region = d.config.region, account = ''] = (context?.invokedFunctionArn ?? '').split(':');
    return {
      isAuthenticated: true,
      principalId: verdict.session.principal.userKey,
      disconnectAfterInSeconds: Math.min(MAX_SESSION_SECONDS, left),
      refreshAfterInSeconds: Math.min(REFRESH_SECONDS, left),
      policyDocuments: iotPolicyDocuments({ partition, region, account: account || '*' }, scope.keys),
    };
  };
}

let deps: CoreDeps | undefined;

// Errors reach the runtime with stacks that name the TypeScript (shared/source-mapped-stack.ts).
export const handler = mappingErrorStacks(createHandler(() => (deps ??= createCoreDeps())));
