/**
 * The part of `oidc-provider` (9.x, which ships no types; `@types/oidc-provider` is not a
 * dependency) that test/support/oidc-provider.ts uses.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AccountClaims {
    readonly sub: string;
    readonly [claim: string]: unknown;
  }
  export interface Account {
    readonly accountId: string;
    claims(use: string, scope: string): Promise<AccountClaims>;
  }
  export interface Configuration {
    readonly clients?: readonly Record<string, unknown>[];
    readonly jwks?: { readonly keys: readonly Record<string, unknown>[] };
    readonly cookies?: { readonly keys: readonly string[] };
    readonly features?: Record<string, unknown>;
    readonly conformIdTokenClaims?: boolean;
    readonly claims?: Record<string, readonly string[]>;
    readonly findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined>;
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
