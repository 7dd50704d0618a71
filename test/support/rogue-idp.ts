/**
 * A small OpenID provider that misbehaves on purpose, for the refusals a certified provider will
 * not produce: an ID token with the wrong issuer, the wrong audience, already expired, with
 * another nonce, or signed by a key its JWKS does not publish. Hand-rolled on node:http and
 * `jose`; it logs every user in at once (no login form). `defect` is read at each token request.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import { freePort } from './runtime.ts';

type Defect = 'none' | 'wrong-issuer' | 'wrong-audience' | 'expired' | 'wrong-nonce' | 'unknown-key';

export interface RogueIdp {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  defect: Defect;
  /** The claims of the next ID tokens (sub, email, email_verified...). */
  claims: Record<string, unknown>;
  stop(): Promise<void>;
}

const body = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });

export async function startRogueIdp(): Promise<RogueIdp> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const signing = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const kid = 'rogue-1';
  const publicJwk: JWK = { ...(await exportJWK(signing.publicKey)), kid, alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { nonce: string }>();
  const idp: RogueIdp = {
    issuer,
    clientId: 'gatehouse-at-rogue',
    clientSecret: randomBytes(12).toString('hex'),
    defect: 'none',
    claims: {},
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const idToken = async (nonce: string): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const d = idp.defect;
    return new SignJWT({ ...idp.claims, nonce: d === 'wrong-nonce' ? 'another-nonce' : nonce })
      .setProtectedHeader({ alg: 'RS256', kid })
      .setIssuer(d === 'wrong-issuer' ? 'https://impostor.example' : issuer)
      .setAudience(d === 'wrong-audience' ? 'someone-else' : idp.clientId)
      .setIssuedAt(d === 'expired' ? now - 7200 : now)
      .setExpirationTime(d === 'expired' ? now - 3600 : now + 300)
      .sign(d === 'unknown-key' ? other.privateKey : signing.privateKey);
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', issuer);
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(value));
      };
      if (url.pathname === '/.well-known/openid-configuration') {
        return json(200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
        });
      }
      if (url.pathname === '/jwks') return json(200, { keys: [publicJwk] });
      if (url.pathname === '/authorize') {
        const code = randomBytes(16).toString('hex');
        codes.set(code, { nonce: url.searchParams.get('nonce') ?? '' });
        const back = new URL(url.searchParams.get('redirect_uri') ?? '');
        back.searchParams.set('code', code);
        back.searchParams.set('state', url.searchParams.get('state') ?? '');
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(await body(req));
        // RFC 6749 2.3.1: both parts form-urlencoded before the Base64.
        const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString('utf8');
        const [id, secret] = basic.split(':').map((p) => decodeURIComponent(p.replace(/\+/g, ' ')));
        if (id !== idp.clientId || secret !== idp.clientSecret) return json(401, { error: 'invalid_client' });
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (!grant) return json(400, { error: 'invalid_grant' });
        return json(200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: await idToken(grant.nonce) });
      }
      return json(404, { error: 'not_found' });
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return idp;
}
