/**
 * token: the password grant and the refresh grant through the real token handler, against one
 * scrypt hash alone (the password grant's physical floor: it must verify one scrypt hash).
 * Grants and hashes alternate so machine load hits both alike.
 */
import { seedDeployment } from '#shared/auth/bootstrap.ts';
import { hashPassword } from '#shared/auth/passwords.ts';
import { DEFAULT_CLIENT_ID } from '#shared/auth/token-request.ts';
import { expectStatus, recorded, totals, type Answer, type Harness } from './harness.ts';
import type { Measured, Token, TokenGrant } from './results.ts';
import { interleaved } from './sampling.ts';
import { orNull, ratioOf, summarize, within } from './stats.ts';

const TOKEN_GOAL = { max: 1.1 };
const FORM = 'application/x-www-form-urlencoded';
const PASSWORD = 'Bench-Passw0rd!x';

export interface TokenInput {
  readonly h: Harness;
  readonly passwordSamples: number;
  readonly refreshSamples: number;
  readonly measured: () => Measured;
}

export async function measureToken(input: TokenInput): Promise<Token> {
  const { h } = input;
  const instanceName = `BenchLogin-${Date.now().toString(36)}`;
  await seedDeployment(h.deps, {
    instanceName,
    adminUser: 'admin',
    adminPassword: PASSWORD,
    clientSecret: h.config.clientSecret,
    dataDir: h.config.dataDir,
  });
  const form = (fields: Record<string, string>) => new URLSearchParams({ client_id: DEFAULT_CLIENT_ID, client_secret: h.config.clientSecret, ...fields }).toString();
  const post = (body: string) => h.call('POST', '/token', { body, contentType: FORM });
  const passwordBody = form({ grant_type: 'password', instance: instanceName, username: 'admin', password: PASSWORD });

  let refreshToken = '';
  const password = async (): Promise<Answer> => {
    const a = expectStatus('password grant', await post(passwordBody), 200);
    refreshToken = String(a.body.refresh_token);
    return a;
  };
  const refresh = async (): Promise<Answer> => {
    const a = expectStatus('refresh grant', await post(form({ grant_type: 'refresh_token', refresh_token: refreshToken })), 200);
    refreshToken = String(a.body.refresh_token);
    return a;
  };

  // The first grant warms the signing key, the licence key and the modules (and runs beside the
  // token function's dummy hash made at import). It also finds the user by name (three reads one
  // after the other) and leaves the hint a returning user's login reads with (one): the calls
  // recorded are those of the second grant, as of every timed one.
  await password();
  const pw = await recorded(h, password);
  const { a: grants, b: hashes } = await interleaved(input.passwordSamples, password, () => hashPassword(PASSWORD));

  const rf = await recorded(h, refresh);
  const refreshes: number[] = [];
  for (let i = 0; i < input.refreshSamples; i++) {
    const t0 = performance.now();
    await refresh();
    refreshes.push(performance.now() - t0);
  }

  const grant = (w: typeof pw, samples: number[]): TokenGrant => {
    const t = totals(w.calls);
    return { latency: summarize(samples), requests: t.requests, commands: t.commands, rcu: t.rcu, wcu: t.wcu };
  };
  const g = summarize(grants);
  const s = summarize(hashes);
  const ratio = ratioOf(g.p50, s.p50);
  return {
    unit: 'ms',
    passwordGrant: grant(pw, grants),
    refreshGrant: grant(rf, refreshes),
    scryptHash: s,
    floor: orNull(s.p50),
    ratio: orNull(ratio),
    goal: 'ratio <= 1.1 (p50 of the password grant / p50 of one scrypt hash alone); the refresh grant has no floor and is reported',
    meetsGoal: within(ratio, TOKEN_GOAL),
    measured: input.measured(),
  };
}
