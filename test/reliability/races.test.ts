/**
 * Races that must each resolve to exactly one winner and a consistent store: a lost-update
 * checker (read-modify-write with ConcurrencyVersion, retried on 409), parallel claims of one
 * instance name, parallel event types with one moniker, and parallel connects of a one-to-one
 * relation. (Card numbers, single-version PUT races, refresh-token rotation and the lockout burst
 * are covered in test/integration.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../support/api.ts';
import { createTestDb, type TestDb } from '../support/db.ts';
import { setupApi, uniqueName, type Tenant } from '../support/tokens.ts';

let t: TestDb;
let api: ReturnType<typeof createApi>;
let root: Tenant;
let base: string;
let races = 0;
let lost = 0;

const T = (name: string) => `Acme.${name}, Acme`;

beforeAll(async () => {
  t = await createTestDb();
  ({ api, root } = await setupApi(t));
  base = `/api/f/${root.instance.key}`;
}, 60_000);

afterAll(() => {
  console.info(`[reliability/races] races run: ${races}, lost: ${lost}`);
});

describe('races', () => {
  it('loses no acknowledged read-modify-write among 8 clients × 5 increments with ConcurrencyVersion', async () => {
    const token = root.tokens.Operator;
    const created = await api.post(`${base}/accesslevels`, { token, body: { $type: T('AccessLevelInfo'), CommonName: uniqueName('rmw'), Acme_Counter: 0 } });
    expect(created.status, created.text).toBe(201);
    const href = created.body.Href as string;
    const CLIENTS = 8;
    const INCREMENTS = 5;
    let acknowledged = 0;
    let conflicts = 0;
    const client = async () => {
      for (let i = 0; i < INCREMENTS; i++) {
        for (let attempt = 0; ; attempt++) {
          expect(attempt, 'too many conflicts').toBeLessThan(200);
          const cur = await api.get(href, { token });
          expect(cur.status).toBe(200);
          const put = await api.put(href, { token, body: { ...cur.body, Acme_Counter: Number(cur.body.Acme_Counter) + 1 } });
          if (put.status === 409) {
            expect(put.body.Error).toBe('ConcurrencyConflict');
            conflicts++;
            continue;
          }
          expect(put.status, put.text).toBe(200);
          acknowledged++;
          break;
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    races++;
    const final = await api.get(href, { token });
    expect(acknowledged).toBe(CLIENTS * INCREMENTS);
    lost += acknowledged - Number(final.body.Acme_Counter);
    expect(final.body.Acme_Counter).toBe(acknowledged);
    expect(final.body.ConcurrencyVersion).toBe(1 + acknowledged);
    expect(conflicts).toBeGreaterThan(0); // the race really happened
  });

  it('gives exactly one of 6 parallel instance-name claims a 201, the others 409 DuplicateName', async () => {
    const name = uniqueName('Race');
    const results = await Promise.all(
      Array.from({ length: 6 }, () => api.post(`${base}/instances`, { token: root.tokens.Administrator, body: { $type: 'InstanceInfo', CommonName: name } })),
    );
    races++;
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, results.map((r) => r.text).join('\n')).toEqual([201, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.Error).toBe('DuplicateName');
    const listed = await api.get(`${base}/instances`, { token: root.tokens.Administrator });
    expect(listed.status).toBe(200);
    const named = (listed.body as Array<{ CommonName: string; Key: string }>).filter((i) => i.CommonName === name);
    expect(named.map((i) => i.Key)).toEqual([results.find((r) => r.status === 201)!.body.Key]);
  });

  it('gives exactly one of 6 parallel event types with one moniker a 201, and the app lists only it', async () => {
    const token = root.tokens.Administrator;
    const app = await api.post(`${base}/apps`, { token, body: { $type: 'AppInfo', CommonName: uniqueName('raceapp') } });
    expect(app.status).toBe(201);
    const nickname = uniqueName('once');
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        api.put(`${app.body.Href}/eventtypes`, { token, body: { $type: 'EventTypeInfo', CommonName: `type ${i}`, Monikers: [{ Namespace: 'Race', Nickname: nickname }] } }),
      ),
    );
    races++;
    expect(results.map((r) => r.status).sort(), results.map((r) => r.text).join('\n')).toEqual([201, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.Error).toBe('DuplicateMoniker');
    const types = await api.get(`${app.body.Href}/eventtypes`, { token });
    expect(types.status).toBe(200);
    const withMoniker = (types.body as Array<{ Key: string; Monikers?: Array<{ Nickname: string }> }>).filter((e) => e.Monikers?.some((m) => m.Nickname === nickname));
    expect(withMoniker.map((e) => e.Key)).toEqual([results.find((r) => r.status === 201)!.body.Key]);
  });

  it('keeps exactly one BadgeType link after 6 parallel one-to-one connects, consistent with /connections', async () => {
    const admin = root.tokens.Administrator;
    const person = await api.post(`${base}/people`, { token: admin, body: { $type: T('PersonInfo'), CommonName: uniqueName('one') } });
    expect(person.status).toBe(201);
    const badges: string[] = [];
    for (let i = 0; i < 6; i++) {
      const b = await api.post(`${base}/badgetypes`, { token: admin, body: { $type: T('BadgeTypeInfo'), CommonName: uniqueName(`badge${i}`) } });
      expect(b.status).toBe(201);
      badges.push(b.body.Key);
    }
    const results = await Promise.all(
      badges.map((relatedKey) => api.post(`${base}/people/${person.body.Key}/connections/BadgeType`, { token: root.tokens.Operator, query: { relatedKey } })),
    );
    races++;
    for (const r of results) expect([200, 409], r.text).toContain(r.status);
    expect(results.some((r) => r.status === 200)).toBe(true);
    const now = await api.get(person.body.Href, { token: admin });
    const links = (now.body.ObjectLinks as Array<{ Relation?: string; LinkedObjectKey: string }>).filter((l) => l.Relation === 'BadgeType');
    expect(links, JSON.stringify(now.body.ObjectLinks)).toHaveLength(1);
    expect(badges).toContain(links[0]!.LinkedObjectKey);
    const conns = await api.get(`${base}/people/${person.body.Key}/connections`, { token: root.tokens.ReadOnly });
    expect(conns.status).toBe(200);
    expect(conns.body.map((o: { Key: string }) => o.Key)).toEqual([links[0]!.LinkedObjectKey]);
    // The losers' badge types are referenced by nobody.
    for (const b of badges.filter((k) => k !== links[0]!.LinkedObjectKey)) {
      const refs = await api.get(`${base}/badgetypes/${b}/references`, { token: root.tokens.ReadOnly });
      expect(refs.body, `references of ${b}`).toEqual([]);
    }
  });
});
