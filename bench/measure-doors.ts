/**
 * `doors`: lockdown and the credential download through the real handlers (in process, on the
 * benchmark's DynamoDB Local).
 *
 * - Lockdown of a folder with `readers` readers below it (seeded as the API stores them): the
 *   writes of the call (goal: one PutItem, the lockdown item, beside the event's publish), and the
 *   request waves of a warm decision under it (goal: at most 2, as any decision).
 * - The credential download of a controller with 4 readers whose level `cards` people hold (their
 *   cards and connections seeded): read units of the whole download (every page of 1,000), per
 *   card returned; then an incremental download after `changes` changed people (their changes
 *   written to the change log as the fan-out writes them): its read units against what those
 *   cards cost in the full download. Goal: at most 3 × (O(changes), not O(cards)).
 */
import { randomBytes } from 'node:crypto';
import { recordChanges } from '#shared/db/credential-log.ts';
import { putConnection } from '#shared/db/relations-repo.ts';
import { getObject } from '#shared/db/objects-repo.ts';
import { toItem } from '#shared/db/object-writes.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';
import { expectStatus, recorded, totals, type Harness } from './harness.ts';
import type { Doors, Measured } from './results.ts';
import { personDoc, writeItems } from './seed.ts';
import { waves } from './stats.ts';
import { seedTenant } from '../test/support/tokens.ts';

export interface DoorsOptions {
  readonly h: Harness;
  /** Readers below the locked folder. */
  readonly readers: number;
  /** Card holders of the controller's level. */
  readonly cards: number;
  /** People changed before the incremental download. */
  readonly changes: number;
  readonly measured: () => Measured;
  readonly progress: (step: string) => void;
}

const PAGE_SIZE = 1_000;

export async function measureDoors(o: DoorsOptions): Promise<Doors> {
  const { h } = o;
  const tenant = await seedTenant({ db: h.db, config: h.config, calls: h.calls }, h.deps, { name: `Doors-${randomBytes(3).toString('hex')}` });
  const I = tenant.instance.key;
  const admin = tenant.tokens.Administrator;
  const make = async (coll: string, body: Record<string, unknown>, folder = I) => expectStatus(`POST ${coll}`, await h.call('POST', `/api/f/${folder}/${coll}`, { token: admin, body }), 201).body;
  const connect = async (coll: string, key: string, relation: string, to: string) =>
    expectStatus(`connect ${relation}`, await h.call('POST', `/api/f/${I}/${coll}/${key}/connections/${relation}`, { token: admin, query: { relatedKey: to } }), 200);

  // Lockdown of a folder with many readers below it.
  o.progress(`seeding ${o.readers} readers`);
  const building = await make('folders', { $type: 'FolderInfo', CommonName: 'bench building' });
  const folder = (await getObject(h.db, building.Key))!;
  const place = placeIn(folder);
  const readerKeys = Array.from({ length: o.readers }, () => newKey());
  await writeItems(
    h.db,
    readerKeys.map((key, n) => toItem({ key, collection: 'readers', type: 'VendorReaderInfo', ...place, version: 1, doc: { $type: 'VendorReaderInfo', CommonName: `bench reader ${n}` } })),
  );
  o.progress('lockdown');
  const lock = await recorded(h, () => h.call('POST', `/api/f/${building.Key}/lockdown`, { token: admin, body: { Reason: 'bench' } }));
  expectStatus('lockdown', lock.result, 201);
  const lockTotals = totals(lock.calls);
  const lockdownPuts = lock.calls.filter((c) => c.command === 'PutItem').length;
  const decide = () => h.call('POST', `/api/f/${I}/accessdecisions`, { token: tenant.tokens.Operator, body: { ReaderKey: readerKeys[o.readers - 1], EncodedCardNumber: 4242 } });
  expectStatus('decision (warm-up)', await decide(), 200);
  const d = await recorded(h, decide);
  if (d.result.body.Reason !== 'ReaderLockedDown') throw new Error(`decision under lockdown: ${d.result.text.slice(0, 200)}`);
  const decisionWaves = waves(d.details);
  expectStatus('end lockdown', await h.call('DELETE', `/api/f/${building.Key}/lockdown`, { token: admin }), 200);

  // A controller with 4 readers whose level `cards` people hold.
  o.progress(`seeding ${o.cards} card holders`);
  const schedule = await make('schedules', { $type: 'ScheduleInfo', CommonName: 'bench always', IsAlways: true });
  const controller = await make('controllers', { $type: 'Lp1502Info', CommonName: 'bench panel' });
  const level = await make('accesslevels', { $type: 'AccessLevelInfo', CommonName: 'bench panel staff' });
  for (let i = 0; i < 4; i++) {
    const r = await make('readers', { $type: 'VendorReaderInfo', CommonName: `bench panel reader ${i}` });
    await connect('readers', r.Key, 'Controller', controller.Key);
    await connect('accesslevels', level.Key, 'Reader', r.Key);
  }
  await connect('accesslevels', level.Key, 'Schedule', schedule.Key);
  const people = placeIn(tenant.instance);
  const holders: Array<{ key: string; card: string }> = [];
  const items: Record<string, unknown>[] = [];
  for (let n = 0; n < o.cards; n++) {
    const key = newKey();
    const number = 20_000_000 + n;
    const doc = {
      ...personDoc(n, `Holder ${n}`),
      CardAssignments: [{ EncodedCardNumber: number, Key: newKey() }],
      ObjectLinks: [{ $type: 'ObjectLinkItem', Relation: 'AccessLevel', LinkedObjectKey: level.Key, Href: level.Href, CommonName: level.CommonName, MetaDataBson: null }],
    };
    items.push(toItem({ key, collection: 'people', type: 'PersonInfo', ...people, version: 1, doc }));
    items.push(putConnection(h.db, { from: key, relation: 'AccessLevel', to: level.Key }).Put!.Item as Record<string, unknown>);
    holders.push({ key, card: `:${number}` });
  }
  await writeItems(h.db, items);

  o.progress('full download');
  const path = `/api/f/${I}/controllers/${controller.Key}/credentials`;
  let version = '';
  let returned = 0;
  const full = await recorded(h, async () => {
    for (let page = 0; ; page++) {
      const a = expectStatus('download', await h.call('GET', path, { token: admin, query: { page, pageSize: PAGE_SIZE } }), 200);
      version = a.body.Version;
      returned += a.body.Cards.length;
      if ((page + 1) * PAGE_SIZE >= a.body.HolderCount) break;
    }
  });
  const fullTotals = totals(full.calls);
  const notModified = await recorded(h, () => h.call('GET', path, { token: admin, headers: { 'if-none-match': `"${version}"` } }));
  if (notModified.result.status !== 304) throw new Error(`If-None-Match: HTTP ${notModified.result.status}`);
  const notModifiedTotals = totals(notModified.calls);

  o.progress(`incremental download after ${o.changes} changes`);
  // The changes as the fan-out logs them from the stream (the people are read again as they are).
  await recordChanges(
    h.db,
    I,
    holders.slice(0, o.changes).map((x) => ({ kind: 'person' as const, key: x.key, cards: [x.card] })),
    new Date(),
  );
  const inc = await recorded(h, () => h.call('GET', path, { token: admin, query: { since: version } }));
  expectStatus('incremental download', inc.result, 200);
  if (!inc.result.body.Incremental || inc.result.body.Cards.length !== o.changes) throw new Error(`incremental download: ${inc.result.text.slice(0, 200)}`);
  const incTotals = totals(inc.calls);

  const rcuPerCard = returned > 0 ? Math.round((fullTotals.rcu / returned) * 1000) / 1000 : null;
  const floor = rcuPerCard === null ? null : Math.round(rcuPerCard * o.changes * 1000) / 1000;
  const ratio = floor ? Math.round((incTotals.rcu / floor) * 1000) / 1000 : null;
  const meets = { lockdownOneWrite: lockdownPuts === 1, decisionWaves: decisionWaves <= 2, allCards: returned === o.cards, incremental: ratio !== null && ratio <= 3 };
  const missed = Object.entries(meets).filter(([, ok]) => !ok).map(([k]) => k);
  return {
    floor,
    ratio,
    goal: 'lockdown: one PutItem whatever the readers below; a decision under it <= 2 waves; incremental download RCU <= 3 x what its cards cost in the full one',
    meetsGoal: missed.length === 0,
    ...(missed.length ? { note: `missed: ${missed.join(', ')}` } : {}),
    lockdown: { readers: o.readers, puts: lockdownPuts, requests: lockTotals.requests, wcu: lockTotals.wcu, decisionWaves },
    download: {
      cards: returned,
      pageSize: PAGE_SIZE,
      requests: fullTotals.requests,
      rcu: fullTotals.rcu,
      rcuPerCard,
      notModifiedRequests: notModifiedTotals.requests,
      notModifiedRcu: notModifiedTotals.rcu,
      changes: o.changes,
      incrementalRequests: incTotals.requests,
      incrementalRcu: incTotals.rcu,
    },
    measured: o.measured(),
  };
}
