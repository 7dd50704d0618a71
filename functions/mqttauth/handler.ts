/**
 * The AWS IoT Core custom authorizer of the MQTT live feed. IoT Core invokes it for each MQTT
 * connection (and again every `refreshAfterInSeconds`); it verifies the access token with the
 * same code as the HTTP API and the local broker (`shared/live/mqtt-auth.ts`) and answers a
 * policy limited to the token's instance scope.
 *
 * The token is the MQTT username (anything after a `?` there is IoT Core's own parameters), or
 * `access_token` in the WSS URL's query for browsers, which cannot set a username on every
 * library. The password is ignored.
 */
import type { Context } from 'aws-lambda';
import { decodeJwt } from 'jose/jwt/decode';
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { instanceScope, iotPolicyDocuments, verifyMqttToken } from '#shared/live/mqtt-auth.ts';
import { mappingErrorStacks } from '#shared/error-stacks.ts';

/** IoT Core's bounds for `disconnectAfterInSeconds` and `refreshAfterInSeconds`. */
export const MIN_SESSION_SECONDS = 300;
export const MAX_SESSION_SECONDS = 86_400;
/** Policy re-evaluation: a disabled user or a new sub-instance takes effect within this time. */
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

/** The instance a token claims (`ins`), read without verifying it; undefined when it does not decode. */
export function claimedInstance(token: string | undefined): string | undefined {
  if (!token) return undefined;
  try {
    const ins = decodeJwt(token).ins;
    return typeof ins === 'string' && ins ? ins : undefined;
  } catch {
    return undefined;
  }
}

type Settled<T> = { readonly value: T } | { readonly error: unknown };
/** A promise that never rejects (a dropped read must not be an unhandled rejection). */
const settled = <T>(p: Promise<T>): Promise<Settled<T>> => p.then((value) => ({ value }), (error: unknown) => ({ error }));
const outcome = async <T>(p: Promise<Settled<T>>): Promise<T> => {
  const s = await p;
  if ('error' in s) throw s.error;
  return s.value;
};

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
    const token = tokenOf(event);
    // The scope's first Query starts beside the verification, for the instance the token claims:
    // one round trip instead of two. Its answer counts only once the token is verified and names
    // that instance; a refused token's read is dropped unanswered.
    const claimed = claimedInstance(token);
    const early = claimed === undefined ? undefined : settled(instanceScope(d.db, claimed));
    const verdict = await verifyMqttToken(d, token);
    if ('refused' in verdict) {
      d.logger.info('mqtt connection refused', { reason: verdict.refused });
      return refused();
    }
    const left = verdict.expiresAt - Math.floor(d.now().getTime() / 1000);
    // IoT Core cannot disconnect sooner than 300 s: a token closer to its expiry is refused, and
    // the client (CONNACK 5) logs in again, so no connection outlives its token.
    if (left < MIN_SESSION_SECONDS) {
      d.logger.info('mqtt connection refused', { reason: 'The access token expires within 5 minutes.' });
      return refused();
    }
    const scope = early && claimed === verdict.principal.instanceKey ? await outcome(early) : await instanceScope(d.db, verdict.principal.instanceKey);
    if (scope.truncated) d.logger.warn('mqtt policy names only the first instances of the scope', { instances: scope.keys.length });
    const [, partition = 'aws', , region = d.config.region, account = ''] = (context?.invokedFunctionArn ?? '').split(':');
    return {
      isAuthenticated: true,
      principalId: verdict.principal.userKey,
      disconnectAfterInSeconds: Math.min(MAX_SESSION_SECONDS, left),
      refreshAfterInSeconds: Math.min(REFRESH_SECONDS, left),
      policyDocuments: iotPolicyDocuments({ partition, region, account: account || '*' }, scope.keys),
    };
  };
}

let deps: CoreDeps | undefined;

// Errors reach the runtime with stacks that name the TypeScript (shared/stack.ts).
export const handler = mappingErrorStacks(createHandler(() => (deps ??= createCoreDeps())));
