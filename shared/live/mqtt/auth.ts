/**
 * Who may connect to the MQTT live feed and what it may subscribe to. One code path for both
 * brokers: the local runtime's `aedes` hooks (`local/mqtt-broker.ts`) and the AWS IoT Core custom
 * authorizer (`functions/mqttauth/handler.ts`) ask these functions.
 *
 * - The MQTT username is the access token (the password is ignored), verified exactly as the HTTP
 *   API verifies a bearer token: signature, issuer, audience, expiry, then the user/instance
 *   status check (a disabled user or instance is refused), read again past the status cache
 *   ({@link checkPrincipalNow}): a connection, and each refresh of IoT Core's authorizer, sees
 *   the user's current state (revoked sessions, a lower role, disabled, deleted).
 * - A SUBSCRIBE on the local broker re-reads the caller's status too ({@link currentPrincipal}):
 *   a revoked client gets no new subscription (IoT Core checks a SUBSCRIBE against the policy of
 *   the authorizer's last answer; the fan-out disconnects a revoked user's clients instead).
 * - A topic filter is granted when it is one of the JSON protocol's topics (`/<instance>/$`,
 *   `/<instance>/<object>`, no wildcards) and its instance is in the token's scope (the same
 *   {@link inScope} check as the JSON WebSocket).
 */
import { decodeJwt } from 'jose/jwt/decode';
import { checkPrincipalNow, enforceVerdict, principalStatus, type Verdict } from '../../auth/status-check.ts';
import { OAuthError } from '../../errors.ts';
import { liveEventsRefusal, type Authenticator, type Principal } from '../../auth/principal.ts';
import type { Db } from '../../db/client.ts';
import { readSteps, type ReadStep } from '../../objects/domain-context.ts';
import { inScope, parseTopic, type Topic } from '../topics.ts';

/** A verified MQTT client: who it is and when its token expires. */
export interface MqttSession {
  readonly principal: Principal;
  /** The token's `exp`, epoch seconds: the connection is closed then. */
  readonly expiresAt: number;
}

/** Why a connection was refused (logged, never sent: the client only sees CONNACK 5). */
export interface MqttRefusal {
  readonly refused: string;
}

/**
 * Verifies the access token an MQTT client presents (its username). Never throws for a bad
 * token: a refusal is an answer (CONNACK 5 locally, `isAuthenticated: false` in IoT Core).
 * Store failures do throw (the broker answers "server unavailable").
 */
export async function verifyMqttToken(
  deps: { readonly authenticator: Authenticator; readonly db: Db },
  token: string | undefined,
): Promise<MqttSession | MqttRefusal> {
  if (!token) return { refused: 'No access token in the MQTT username.' };
  let principal: Principal;
  try {
    principal = await deps.authenticator.authenticate(`Bearer ${token}`);
    await checkPrincipalNow(deps.db, principal);
  } catch (err) {
    if (err instanceof OAuthError) return { refused: err.message };
    throw err;
  }
  // The signature was just verified: reading `exp` back is safe.
  return sessionOf(principal, token);
}

/** The session of a verified token's principal, or why it may not have one (its role, no expiry). */
function sessionOf(principal: Principal, token: string): MqttSession | MqttRefusal {
  const refusal = liveEventsRefusal(principal);
  if (refusal) return { refused: refusal };
  const exp = decodeJwt(token).exp;
  if (typeof exp !== 'number') return { refused: 'The access token has no expiry.' };
  return { principal, expiresAt: exp };
}

/**
 * {@link verifyMqttToken}, with `alongside` (a read the answer needs, such as the policy's instance
 * scope) started for the token's caller as soon as the HTTP API would start an operation's reads:
 * on a new environment, whose keys are not read yet, beside the verification, from the token's
 * claims (one round trip instead of two); once the keys are known, after the signature checks and
 * beside the caller's status read, so a forged token starts no read then. Its result counts only
 * for an accepted token; a refused one's read is dropped unanswered.
 */
export async function verifyMqttTokenWith<T>(
  deps: { readonly authenticator: Authenticator; readonly db: Db },
  token: string | undefined,
  alongside: (principal: Principal, step: ReadStep) => Promise<T>,
): Promise<{ readonly session: MqttSession; readonly value: T } | MqttRefusal> {
  if (!token) return { refused: 'No access token in the MQTT username.' };
  const deferred = deps.authenticator.authenticateDeferred;
  if (!deferred) {
    const session = await verifyMqttToken(deps, token);
    return 'refused' in session ? session : { session, value: await alongside(session.principal, readSteps({})) };
  }
  let early: Promise<{ value: T } | { error: unknown }>;
  let principal: Principal;
  try {
    const verdict = await deferred(`Bearer ${token}`);
    principal = verdict.principal;
    // A read of several steps takes its first at once and waits for the verdict before the next,
    // as an HTTP call's reads do (shared/objects/domain-context.ts).
    const step = readSteps({ verdict: verdict.status.then(() => true, () => false) });
    early = alongside(principal, step).then((value) => ({ value }), (error: unknown) => ({ error }));
    await verdict.status;
    // Past the status cache (see the module's comment), beside the read the answer needs.
    await checkPrincipalNow(deps.db, principal);
  } catch (err) {
    if (err instanceof OAuthError) return { refused: err.message };
    throw err;
  }
  // The verdict is in: the principal is the verified one, and `exp` may be read back.
  const session = sessionOf(principal, token);
  if ('refused' in session) return session;
  const read = await early;
  if ('error' in read) throw read.error;
  return { session, value: read.value };
}

/**
 * Whether a connected client's principal is still current (read past the status cache): what a
 * SUBSCRIBE and the local broker's periodic re-check ask. The reason when it is not; store
 * failures throw.
 */
export async function currentPrincipal(deps: { readonly db: Db }, principal: Principal): Promise<MqttRefusal | undefined> {
  return (await currentPrincipals(deps, [principal]))[0];
}

/**
 * {@link currentPrincipal} for many connected clients at once, each user's status read once: the
 * refusal (or undefined) of each principal, in order.
 */
export async function currentPrincipals(deps: { readonly db: Db }, principals: readonly Principal[]): Promise<Array<MqttRefusal | undefined>> {
  const verdicts = new Map<string, Promise<Verdict>>();
  const verdictOf = (p: Principal) => {
    const id = `${p.userKey}|${p.instanceKey}`;
    let v = verdicts.get(id);
    if (!v) verdicts.set(id, (v = principalStatus(deps.db, p)));
    return v;
  };
  return Promise.all(
    principals.map(async (p) => {
      try {
        enforceVerdict(p, await verdictOf(p));
        return undefined;
      } catch (err) {
        if (err instanceof OAuthError) return { refused: err.message };
        throw err;
      }
    }),
  );
}

/**
 * The topic a SUBSCRIBE filter names when the principal may subscribe to it, or undefined (SUBACK
 * 0x80): wildcards, other shapes, unknown instances and instances outside the token's instance
 * and its descendants are all refused alike, so a filter cannot probe which keys exist.
 */
export async function authorizeMqttFilter(
  deps: { readonly db: Db },
  principal: Pick<Principal, 'instanceKey'>,
  filter: string,
): Promise<Topic | undefined> {
  const topic = parseTopic(filter);
  if (!topic) return undefined;
  return (await inScope(deps, principal, topic.instanceKey)) ? topic : undefined;
}

/** QoS granted for a requested QoS: 0 and 1 as asked, 2 as 1 (IoT Core has no QoS 2). */
export const grantedQos = (requested: number): 0 | 1 => (requested >= 1 ? 1 : 0);

/** The topics an event is published to: every topic whose JSON-protocol subscribers receive it. */
export function mqttTopicsOf(instances: readonly string[], linkedObjectKeys: ReadonlySet<string>): string[] {
  const topics = new Set<string>();
  for (const i of instances) {
    topics.add(`/${i}/$`);
    for (const o of linkedObjectKeys) topics.add(`/${i}/${o}`);
  }
  return [...topics];
}

/**
 * The most instances an IoT policy names: each costs two resources (~170 characters) and IoT
 * Core takes at most 10 policy documents of 2048 characters per connection.
 */
export const MAX_POLICY_INSTANCES = 100;
const INSTANCES_PER_DOCUMENT = 10;

/**
 * IoT policy documents (JSON strings) for a token's instance scope: connect with any client id,
 * subscribe to and receive the topics `/<instance>/…` of the scope's instances, nothing else
 * (never iot:Publish). IoT Core matches `*` across levels, so a wildcard filter within the scope
 * is let through there: it still receives only topics of the scope (iot:Receive is checked per
 * message).
 */
export function iotPolicyDocuments(arn: { partition: string; region: string; account: string }, instances: readonly string[]): string[] {
  const base = `arn:${arn.partition}:iot:${arn.region}:${arn.account}`;
  const docs: string[] = [];
  for (let i = 0; i < instances.length; i += INSTANCES_PER_DOCUMENT) {
    const chunk = instances.slice(i, i + INSTANCES_PER_DOCUMENT);
    const statements: Array<Record<string, unknown>> = [
      { Effect: 'Allow', Action: 'iot:Subscribe', Resource: chunk.map((k) => `${base}:topicfilter//${k}/*`) },
      { Effect: 'Allow', Action: 'iot:Receive', Resource: chunk.map((k) => `${base}:topic//${k}/*`) },
    ];
    if (i === 0) statements.unshift({ Effect: 'Allow', Action: 'iot:Connect', Resource: `${base}:client/*` });
    docs.push(JSON.stringify({ Version: '2012-10-17', Statement: statements }));
  }
  return docs;
}
