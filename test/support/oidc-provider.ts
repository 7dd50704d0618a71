/**
 * A real OpenID provider for the single sign-on tests: `oidc-provider` (node-oidc-provider, a
 * certified OP) on a loopback port, with its development login form (`devInteractions`: any
 * login name is the account id, any password is accepted) and accounts given by the test.
 * `rotateKey()` restarts it on the same issuer with a new signing key (oidc-provider reads its
 * keys once), as a provider rolling its keys over does: tokens signed afterwards carry a `kid`
 * its earlier JWKS did not hold.
 *
 * oidc-provider 9 prints an unsupported-runtime warning on Node 20; the whole code flow works.
 */
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from './runtime.ts';

/** The claims of an account, by its login name (the subject). */
export interface TestAccount {
  readonly email?: string;
  readonly email_verified?: boolean;
  readonly name?: string;
  readonly groups?: readonly string[];
}

export interface TestClient {
  readonly client_id: string;
  readonly client_secret: string;
  readonly redirect_uris: readonly string[];
  readonly token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

export interface RunningProvider {
  readonly issuer: string;
  /** Replaces the signing key (a restart on the same port); the old key is gone from the JWKS. */
  rotateKey(): Promise<void>;
  /** The `kid` of the key now signing. */
  readonly kid: () => string;
  stop(): Promise<void>;
}

async function signingKey(): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: `k-${randomBytes(6).toString('hex')}`, alg: 'RS256', use: 'sig' };
}

/** Starts a provider; `accounts` may be changed by the test between logins (it is read at each). */
export async function startOidcProvider(opts: { readonly clients: readonly TestClient[]; readonly accounts: Map<string, TestAccount> }): Promise<RunningProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const cookieKeys = [randomBytes(16).toString('hex')];
  let key = await signingKey();
  let server: Server | undefined;

  const listen = async (): Promise<void> => {
    const provider = new Provider(issuer, {
      clients: opts.clients.map((c) => ({ ...c, redirect_uris: [...c.redirect_uris], grant_types: ['authorization_code'], response_types: ['code'] })),
      jwks: { keys: [key] },
      cookies: { keys: cookieKeys },
      features: { devInteractions: { enabled: true } },
      // Scope claims in the ID token itself, as Entra ID and Okta put email and groups there.
      conformIdTokenClaims: false,
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
      findAccount: async (_ctx, sub) => {
        const account = opts.accounts.get(sub);
        if (!account) return undefined;
        return { accountId: sub, claims: async () => ({ sub, ...account, groups: account.groups ? [...account.groups] : undefined }) };
      },
    });
    const s = createServer(provider.callback());
    await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
    server = s;
  };
  const close = async (): Promise<void> => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  await listen();
  return {
    issuer,
    kid: () => String(key.kid),
    rotateKey: async () => {
      await close();
      key = await signingKey();
      await listen();
    },
    stop: close,
  };
}
