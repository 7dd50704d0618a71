/**
 * The tokens of one login and their renewal. Refresh tokens rotate, and a refresh token used twice
 * revokes the whole login (reuse detection), so at most one renewal is ever in flight: every caller
 * that needs a fresh token while one runs awaits that same renewal, and the next renewal starts
 * only from the refresh token the previous one answered.
 */

/** The tokens of a login, as a client keeps them (and may save to resume later). */
export interface TokenSet {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** When the access token expires, in milliseconds since the epoch on this client's clock. */
  readonly expiresAt: number;
  /** The key of the user's instance. */
  readonly instanceKey: string;
  /** `Instance\user`. */
  readonly userName: string;
}

export interface SessionOptions {
  /** Renews the tokens from a refresh token (the refresh grant, or a login again when it is refused). */
  readonly renew: (refreshToken: string) => Promise<TokenSet>;
  /** Renew this long before the access token expires. */
  readonly marginMs: number;
  /** The clock, in milliseconds since the epoch. */
  readonly now: () => number;
}

export class TokenSession {
  #tokens: TokenSet;
  #renewal: Promise<TokenSet> | undefined;
  #renewals = 0;

  constructor(
    tokens: TokenSet,
    private readonly options: SessionOptions,
  ) {
    this.#tokens = tokens;
  }

  /** The current tokens. */
  get tokens(): TokenSet {
    return this.#tokens;
  }

  /** How many renewals this session has completed. */
  get renewals(): number {
    return this.#renewals;
  }

  /** An access token to send now: renewed first when it is about to expire. */
  async accessToken(): Promise<string> {
    if (this.#renewal) return (await this.#renewal).accessToken;
    if (!this.#expiresSoon()) return this.#tokens.accessToken;
    return (await this.renew()).accessToken;
  }

  /**
   * An access token to retry with after the server refused `rejected` (401): the current one when
   * another caller has already replaced it, else a renewed one.
   */
  async afterRejected(rejected: string): Promise<string> {
    if (this.#renewal) return (await this.#renewal).accessToken;
    if (this.#tokens.accessToken !== rejected) return this.#tokens.accessToken;
    return (await this.renew()).accessToken;
  }

  /** Renews the tokens now; joins the renewal in flight if there is one. */
  renew(): Promise<TokenSet> {
    this.#renewal ??= this.options
      .renew(this.#tokens.refreshToken)
      .then((next) => {
        this.#tokens = next;
        this.#renewals += 1;
        return next;
      })
      .finally(() => {
        this.#renewal = undefined;
      });
    return this.#renewal;
  }

  #expiresSoon(): boolean {
    return this.#tokens.expiresAt - this.options.now() <= this.options.marginMs;
  }
}
