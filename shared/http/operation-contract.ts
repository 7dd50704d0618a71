/**
 * The contract between the pipeline and the operations: what an operation receives and returns.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Config } from '../config.ts';
import type { Db } from '../db/client.ts';
import type { Route } from '../routes.ts';
import type { Authenticator, Principal } from '../auth/principal.ts';

export interface ApiRequest {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly route: Route;
  readonly params: Readonly<Record<string, string>>;
  /** Query values; a repeated parameter keeps every value, in order. */
  readonly query: Readonly<Record<string, readonly string[]>>;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The request's cookies by name (the console's refresh cookie on `/token`); the first of a repeated name wins. */
  readonly cookies: Readonly<Record<string, string>>;
  /** The body parsed as JSON; `undefined` when there is none or it is form-encoded. */
  readonly body: unknown;
  /** The body as text, for form-encoded calls (`POST /token`). */
  readonly rawBody: string | undefined;
  /** Set on every route with `auth: true`. */
  readonly principal: Principal | undefined;
  /**
   * Set while the caller's verdict is not in (a read-only call runs beside the token's checks:
   * on a new environment before its verification, else beside its status read): settles true
   * once the caller is accepted, false once refused. A read of several steps takes its first at
   * once and waits for this before the next (`verdictIn` of shared/objects/domain-context.ts), so a
   * refused caller costs at most a call's first reads.
   */
  readonly verdict?: Promise<boolean>;
  /** Client address, for logs and lockout telemetry. */
  readonly sourceIp: string | undefined;
}

export interface ApiResponse {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * A body sent as is instead of JSON (the documentation page and its script); its
   * `content-type` goes in `headers`. `base64` for bytes (a gzip-encoded asset).
   */
  readonly raw?: { readonly text: string; readonly base64?: boolean };
  /** `Set-Cookie` values (the console's refresh cookie). */
  readonly cookies?: readonly string[];
  /**
   * The tenant (instance key) to meter and log the call under when the caller has no token:
   * `POST /token` names the instance a login went to. Never sent to the client.
   */
  readonly tenant?: string;
}

/** What every family receives. A family may extend it with its own clients. */
export interface BaseDeps {
  readonly config: Config;
  readonly db: Db;
  readonly logger: Logger;
  readonly authenticator: Authenticator;
  /** The server clock (tests may move it). */
  readonly now: () => Date;
}

export type Operation<D extends BaseDeps = BaseDeps> = (req: ApiRequest, deps: D) => Promise<ApiResponse>;

/** A path parameter of the route (`{key}`); '' when the route has none of that name. */
export const pathParam = (req: Pick<ApiRequest, 'params'>, name: string): string => req.params[name] ?? '';

export const ok = (body: unknown, headers?: Record<string, string>): ApiResponse => ({ status: 200, body, ...(headers ? { headers } : {}) });
export const created = (body: unknown): ApiResponse => ({ status: 201, body });
export const accepted = (body: unknown): ApiResponse => ({ status: 202, body });
export const noContent = (): ApiResponse => ({ status: 204 });
/** A 200 with a body that is not JSON. */
export const okRaw = (text: string, headers: Record<string, string>, base64 = false): ApiResponse => ({
  status: 200,
  headers,
  raw: { text, ...(base64 ? { base64 } : {}) },
});

/** First value of a query parameter. */
export function queryValue(req: ApiRequest, name: string): string | undefined {
  return req.query[name]?.[0];
}
