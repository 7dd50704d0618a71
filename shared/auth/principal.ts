/**
 * Who calls, and with which role: the auth layer's types, named by the http pipeline, the db
 * layer and the domain folders alike, so none of them imports the http contract for them.
 */

/**
 * A user's role. `Controller` (doors issue) is made for edge door controllers: it may read
 * credential downloads and record access decisions, nothing else (shared/http/pipeline.ts).
 */
export type Role = 'Administrator' | 'Operator' | 'ReadOnly' | 'Controller';

/**
 * The only operations (route-table names) a `Controller` user may call; the pipeline answers 403
 * to any other: read its credential download, and ask or record access decisions.
 */
export const CONTROLLER_OPERATIONS: ReadonlySet<string> = new Set(['credentials', 'accessDecision']);

/**
 * Why a principal may not receive live events (the JSON WebSocket, MQTT), or undefined when it
 * may: a `Controller` user calls its download and decisions, nothing else, and live events carry
 * what it may not read (people, cards, every object change of its scope).
 */
export const liveEventsRefusal = (p: Pick<Principal, 'role'>): string | undefined =>
  p.role === 'Controller' ? 'A Controller user may not receive live events.' : undefined;

/** Who is calling, from a verified access token. */
export interface Principal {
  readonly userKey: string;
  readonly userName: string;
  readonly instanceKey: string;
  readonly instanceName: string;
  readonly role: Role;
  /** The token's `jti`. */
  readonly tokenId: string;
  /** The user's session generation the token was issued in (`gen`; absent: 0). */
  readonly sessionGeneration?: number;
}

/** Verifies the `Authorization` header of a protected call; throws `unauthorized()` otherwise. */
export interface Authenticator {
  authenticate(authorization: string | undefined): Promise<Principal>;
  /**
   * Verifies the token now and leaves its status check (user and instance enabled, sessions not
   * revoked) running: `status` rejects with the 401 `authenticate` would have thrown. The
   * pipeline runs a read-only (GET) operation beside it and answers only once both are done, so
   * a cold environment's first status read does not delay the request's own read. On the
   * environment's first token, before any key was read, the verification itself is deferred
   * too: `principal` is what the token claims, and `status` rejects unless it verifies.
   */
  authenticateDeferred?(authorization: string | undefined): Promise<{ readonly principal: Principal; readonly status: Promise<void> }>;
}
