/**
 * The Gatehouse client: calls typed from the API's OpenAPI document through openapi-fetch, with
 * the things every integrator otherwise writes by hand — a password login whose tokens are
 * renewed before they expire (one renewal at a time, so rotating refresh tokens are never reused),
 * paging (`for await (const person of client.list('people', instanceKey))`), calls answered 429
 * (a rate limit) sent again after their `Retry-After`, and a typed `GatehouseError` for every
 * answer that is not 2xx.
 */
import createClient, { type Client, type ClientPathsWithMethod, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import { GatehouseError } from './errors.js';
import type { components, paths } from './schema.js';
import { TokenSession, type TokenSet } from './session.js';

/** A fetch as openapi-fetch calls it (a Request in, a Response out). */
export type FetchLike = (request: Request) => Promise<Response>;

export interface ClientOptions {
  /** The deployment, e.g. `http://localhost:3000` (no trailing `/api`). */
  readonly baseUrl: string;
  /** @default 'consoleApp' */
  readonly clientId?: string;
  /** Required for clients other than `consoleApp`. */
  readonly clientSecret?: string;
  /** @default globalThis.fetch */
  readonly fetch?: FetchLike;
  /** Renew the access token this many seconds before it expires. @default 60 */
  readonly refreshMarginSeconds?: number;
  /** The clock, in milliseconds since the epoch. @default Date.now */
  readonly now?: () => number;
  /**
   * How many times a call answered 429 (over a rate limit: nothing was done) is sent again, each
   * time after the seconds its `Retry-After` names (1 without one); 0 answers the 429 at once (a
   * `GatehouseError` with `retryAfterSeconds`). @default 3
   */
  readonly rateLimitRetries?: number;
  /** A 429 asking to wait longer than this many seconds is answered at once, not waited out. @default 60 */
  readonly maxRetryAfterSeconds?: number;
}

export interface PasswordLogin extends ClientOptions {
  /** The instance's name (case-sensitive); omit it when `username` is `Instance\user`. */
  readonly instance?: string;
  readonly username: string;
  readonly password: string;
}

export interface SavedSession extends ClientOptions {
  /** Tokens saved from `client.tokens` (for example across a restart of a command-line tool). */
  readonly tokens: TokenSet;
}

type Paths = Client<paths>;
type Method = 'get' | 'put' | 'post' | 'delete';
type PathOf<M extends Method> = ClientPathsWithMethod<Paths, M>;
type InitOf<P extends PathOf<M>, M extends Method> = MaybeOptionalInit<paths[P], M>;
type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** The init argument: optional when nothing in it is required (openapi-fetch's rule). */
type InitArg<I> = RequiredKeysOf<I> extends never ? [init?: I & { [key: string]: unknown }] : [init: I & { [key: string]: unknown }];
/** The success body of an operation, `undefined` for a 204 (a PUT that changed nothing, a DELETE). */
export type DataOf<P extends PathOf<M>, M extends Method, I = object> =
  paths[P][M] extends infer O extends { responses: object }
    ? Exclude<FetchResponse<O, I, `${string}/${string}`>['data'], undefined> | (204 extends keyof O['responses'] ? undefined : never)
    : never;

/** The schemas of the document: `Schemas['PersonInfo']`, `Schemas['PersonInfoRequest']`, ... */
export type Schemas = components['schemas'];

type ListQueryOf<P> = P extends keyof paths ? (paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never) : never;

/** The collections that list a page at a time: `people`, `accesslevels`, `events`, ... */
export type Collection = {
  [P in keyof paths]: P extends `/api/f/{folderKey}/${infer C}`
    ? C extends `${string}/${string}` | `{${string}}`
      ? never
      : paths[P] extends { get: { requestBody?: never } } // not search's GET-with-a-body twin
        ? 'page' extends keyof ListQueryOf<P>
          ? C
          : never
        : never
    : never;
}[keyof paths];

type ListPath<C extends Collection> = `/api/f/{folderKey}/${C}` & PathOf<'get'>;

/** An item of a collection's list: `ListItem<'people'>` is a PersonInfo. */
export type ListItem<C extends Collection> = DataOf<ListPath<C>, 'get'> extends ReadonlyArray<infer T> ? T : never;

/** The list's further query parameters (`page` and `pageSize` are the helper's). */
export type ListQuery<C extends Collection> = Omit<ListQueryOf<ListPath<C>>, 'page' | 'pageSize'>;

export interface ListOptions<C extends Collection> {
  /** Items asked per request (1..1000). @default 100 */
  readonly pageSize?: number;
  /** Further query parameters, e.g. `{ requiresAck: true }` for `events`. */
  readonly query?: ListQuery<C>;
}

export class GatehouseClient {
  /**
   * openapi-fetch's client for every call of the document, with the bearer token attached and
   * renewed: it answers `{ data, error, response }` and never throws for a status. The `GET`,
   * `POST`, `PUT` and `DELETE` methods of this class answer the data and throw `GatehouseError`.
   */
  readonly api: Client<paths>;
  readonly #session: TokenSession;

  private constructor(options: ClientOptions, tokens: TokenSet, renew: (refreshToken: string) => Promise<TokenSet>) {
    const baseFetch = retrying429(options);
    this.#session = new TokenSession(tokens, { renew, marginMs: (options.refreshMarginSeconds ?? 60) * 1000, now: options.now ?? Date.now });
    const session = this.#session;
    this.api = createClient<paths>({
      baseUrl: options.baseUrl,
      // Bearer on every call; a 401 is retried once with a renewed token (the server may have
      // refused a token this client still thought valid: a saved session, rotated signing keys).
      fetch: async (request) => {
        const retry = request.clone();
        const token = await session.accessToken();
        request.headers.set('Authorization', `Bearer ${token}`);
        const response = await baseFetch(request);
        if (response.status !== 401) return response;
        await response.body?.cancel();
        retry.headers.set('Authorization', `Bearer ${await session.afterRejected(token)}`);
        return baseFetch(retry);
      },
    });
  }

  /** Logs in with the password grant; the client renews its tokens from then on. */
  static async login(options: PasswordLogin): Promise<GatehouseClient> {
    const grants = tokenGrants(options);
    const credentials = { username: options.username, password: options.password, ...(options.instance === undefined ? {} : { instance: options.instance }) };
    const tokens = await grants.password(credentials);
    // A refused refresh token (its login's absolute lifetime is over) logs in again.
    const renew = async (refreshToken: string): Promise<TokenSet> => {
      try {
        return await grants.refresh(refreshToken);
      } catch (err) {
        if (err instanceof GatehouseError && err.code === 'RefreshTokenTicketNotValid') return grants.password(credentials);
        throw err;
      }
    };
    return new GatehouseClient(options, tokens, renew);
  }

  /** A client on saved tokens; it renews them with the refresh grant (there is no password to log in again with). */
  static resume(options: SavedSession): GatehouseClient {
    return new GatehouseClient(options, options.tokens, tokenGrants(options).refresh);
  }

  /** The key of the logged-in user's instance (the folder key of its root). */
  get instanceKey(): string {
    return this.#session.tokens.instanceKey;
  }

  /** The current tokens, to save and `resume` later. Whoever resumes them must be the only one to use them. */
  get tokens(): TokenSet {
    return this.#session.tokens;
  }

  /** How many times the tokens were renewed. */
  get renewals(): number {
    return this.#session.renewals;
  }

  /** Renews the tokens now (joins a renewal in flight). */
  refresh(): Promise<TokenSet> {
    return this.#session.renew();
  }

  GET<P extends PathOf<'get'>, I extends InitOf<P, 'get'>>(url: P, ...init: InitArg<I>): Promise<DataOf<P, 'get', I>> {
    return data((this.api.GET as AnyCall)(url, ...init));
  }

  POST<P extends PathOf<'post'>, I extends InitOf<P, 'post'>>(url: P, ...init: InitArg<I>): Promise<DataOf<P, 'post', I>> {
    return data((this.api.POST as AnyCall)(url, ...init));
  }

  PUT<P extends PathOf<'put'>, I extends InitOf<P, 'put'>>(url: P, ...init: InitArg<I>): Promise<DataOf<P, 'put', I>> {
    return data((this.api.PUT as AnyCall)(url, ...init));
  }

  DELETE<P extends PathOf<'delete'>, I extends InitOf<P, 'delete'>>(url: P, ...init: InitArg<I>): Promise<DataOf<P, 'delete', I>> {
    return data((this.api.DELETE as AnyCall)(url, ...init));
  }

  /**
   * Every item of a collection in a folder, a page at a time (`page` from 0): a short or empty
   * page is the last, as the document says of `pageSize`. Pages are read as the loop asks for
   * items, so breaking out of the loop stops reading.
   */
  async *list<C extends Collection>(collection: C, folderKey: string, options: ListOptions<C> = {}): AsyncGenerator<ListItem<C>, void, undefined> {
    const pageSize = options.pageSize ?? 100;
    for (let page = 0; ; page += 1) {
      const items = (await data(
        (this.api.GET as AnyCall)(`/api/f/{folderKey}/${collection}`, { params: { path: { folderKey }, query: { ...options.query, page, pageSize } } }),
      )) as ListItem<C>[];
      yield* items;
      if (items.length < pageSize) return;
    }
  }
}

/**
 * The options' fetch, sending a request answered 429 again after its `Retry-After`: a rate limit
 * refuses a call before it does anything, so even a POST is safe to repeat.
 */
function retrying429(options: ClientOptions): FetchLike {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retries = options.rateLimitRetries ?? 3;
  const maxWait = options.maxRetryAfterSeconds ?? 60;
  return async (request) => {
    for (let attempt = 0; ; attempt += 1) {
      // A body is read once: each attempt sends a copy, the request itself the last.
      const response = await send(attempt < retries ? request.clone() : request);
      if (response.status !== 429 || attempt >= retries) return response;
      const header = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
      const wait = Number.isFinite(header) && header >= 0 ? header : 1;
      if (wait > maxWait) return response;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  };
}

type AnyCall = (url: string, ...init: unknown[]) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** The data of a 2xx answer; a `GatehouseError` for any other. */
async function data<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  const { data: body, error, response } = await call;
  if (!response.ok) throw GatehouseError.from(response, error);
  return body as T;
}

/** The token endpoint's two grants (form-encoded, as the document describes `POST /token`). */
function tokenGrants(options: ClientOptions) {
  // A login over the token endpoint's throttle is refused before anything is checked: it is sent again too.
  const baseFetch = retrying429(options);
  const now = options.now ?? Date.now;
  const open = createClient<paths>({ baseUrl: options.baseUrl, fetch: baseFetch });
  const client = { client_id: options.clientId ?? 'consoleApp', ...(options.clientSecret === undefined ? {} : { client_secret: options.clientSecret }) };

  async function grant(form: Schemas['TokenRequest']): Promise<TokenSet> {
    const sentAt = now();
    const answer = await data<Schemas['TokenResponse']>(
      open.POST('/token', {
        body: form,
        bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
    );
    // Only the browser console's answers lack it (its refresh token is a cookie): not a client of this package.
    if (answer.refresh_token === undefined) throw new Error('The token answer has no refresh_token: use a client id other than the console\'s.');
    // Counted from before the request on this client's clock: a clock that is off does not matter.
    return { accessToken: answer.access_token, refreshToken: answer.refresh_token, expiresAt: sentAt + answer.expires_in * 1000, instanceKey: answer.instance, userName: answer.userName };
  }

  return {
    password: (credentials: { username: string; password: string; instance?: string }) => grant({ grant_type: 'password', ...client, ...credentials }),
    refresh: (refreshToken: string) => grant({ grant_type: 'refresh_token', ...client, refresh_token: refreshToken }),
  };
}
