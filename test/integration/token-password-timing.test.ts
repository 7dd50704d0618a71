/**
 * POST /token, password grant: an unknown user takes as long as a wrong password, at the
 * production scrypt cost (2^17, about 0.4 s a login). Its own file so that the rest of the
 * password grant's tests (token-password-grant.test.ts) run at the suite's lowered cost, and so
 * that the comparison runs alone in its worker: the unknown user's stand-in hash is made once per
 * process, at the cost configured when it is first needed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createInstance } from '#shared/auth/provisioning.ts';
import { localLicenseAuthority } from '#shared/auth/license-authority.ts';
import { hashPassword, parseHash } from '#shared/auth/passwords.ts';
import { reloadConfig } from '#shared/config.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { createCoreDeps } from '#shared/core-deps.ts';
import { newKey } from '#shared/model/placement.ts';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { seedUser, uniqueName } from '../support/tokens.ts';

// The project lowers scrypt's cost for the suite; this file measures logins at the production cost.
process.env.GATEHOUSE_PASSWORD_HASH_COST = '17';
reloadConfig();

const PASSWORD = 'Corr3ct-Horse!';
const FORM = 'application/x-www-form-urlencoded';

let t: TestDb;
let api: ReturnType<typeof createApi>;
let instance: StoredObject;
let user: StoredObject;

beforeAll(async () => {
  t = await createTestDb();
  api = createApi(createCoreDeps({ config: t.config, db: t.db }));
  const key = newKey();
  instance = await createInstance(t.db, {
    key,
    name: uniqueName('High'),
    securityLevel: 'High',
    license: await localLicenseAuthority(t.config.dataDir).issue({ instanceKey: key }),
  });
  const hash = await hashPassword(PASSWORD);
  expect(parseHash(hash)?.logN).toBe(17);
  user = await seedUser(t, instance, 'Operator', uniqueName('user'), { passwordHash: hash });
});

const login = (username: string, password: string) =>
  api.post('/token', { body: new URLSearchParams({ grant_type: 'password', username, password }).toString(), contentType: FORM });

describe('timing', () => {
  it('takes as long for an unknown user as for a wrong password', async () => {
    const time = async (username: string) => {
      const t0 = performance.now();
      const res = await login(username, 'Wr0ng-password!');
      const ms = performance.now() - t0;
      // High answers both with the same invalid_grant.
      expect({ status: res.status, error: (res.body as { error?: string }).error }).toEqual({ status: 400, error: 'invalid_grant' });
      return ms;
    };
    const unknown: number[] = [];
    const wrong: number[] = [];
    for (let i = 0; i < 3; i++) {
      unknown.push(await time(`${instance.doc.CommonName}\\ghost${i}`));
      wrong.push(await time(`${instance.doc.CommonName}\\${user.doc.CommonName}`));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
    // Both sides pay one scrypt at 2^17 (about 0.4 s): the unknown user's against a stand-in hash.
    expect(median(wrong)).toBeGreaterThan(100);
    const ratio = median(unknown) / median(wrong);
    expect(ratio).toBeGreaterThan(0.6);
    expect(ratio).toBeLessThan(1.6);
  });
});
