/**
 * `aggregate`: a day of events in one folder (a few readers), with more events of the same folder
 * on the days around it, grouped by `EventData.Reader.CommonName` through the real handler with
 * the C# client's body. The floor is the events in the window (each must be read once); the
 * figure is the items the timeline Queries read (ScannedCount). Goal: ratio <= 1.05.
 */
import { getObject } from '#shared/db/objects-repo.ts';
import { expectStatus, recorded, totals, type Harness } from './harness.ts';
import type { Aggregate, Measured } from './results.ts';
import { seedEvents } from './seed.ts';

const DAY = 86_400_000;
const READERS = ['Front door', 'Back door', 'Loading bay', 'Lobby', 'Server room'];

export interface AggregateOptions {
  readonly h: Harness;
  readonly instanceKey: string;
  /** Events in the day grouped. */
  readonly events: number;
  readonly measured: () => Measured;
}

export async function measureAggregate(o: AggregateOptions): Promise<Aggregate> {
  const { h } = o;
  const admin = h.tenant.tokens.Administrator;
  const created = expectStatus(
    'POST folder',
    await h.call('POST', `/api/f/${o.instanceKey}/folders`, { token: admin, body: { $type: 'FolderInfo', CommonName: 'bench events' } }),
    201,
  );
  const folder = (await getObject(h.db, String(created.body.Key)))!;
  // Yesterday (UTC), well inside the default window and the retention.
  const day = new Date(Math.floor(Date.now() / DAY) * DAY - DAY);
  const next = new Date(day.getTime() + DAY);
  const outside = Math.ceil(o.events / 10);
  await seedEvents(h.db, { folder, from: day, to: next, total: o.events, readers: READERS });
  await seedEvents(h.db, { folder, from: new Date(day.getTime() - DAY), to: day, total: outside, readers: READERS });
  await seedEvents(h.db, { folder, from: next, to: new Date(next.getTime() + DAY), total: outside, readers: READERS });

  const body = [
    JSON.stringify({ $match: { OccurredOn: { $gte: { $date: day.toISOString() }, $lt: { $date: next.toISOString() } } } }),
    JSON.stringify({ $group: { _id: '$EventData.Reader.CommonName', count: { $sum: 1 } } }),
  ];
  const path = `/api/f/${folder.key}/aggregate/Events`;
  // Warm: the handler, the aggregation module and the folder's placement.
  const empty = JSON.stringify({ $match: { OccurredOn: { $gte: { $date: new Date(next.getTime() + 2 * DAY).toISOString() } } } });
  expectStatus('aggregate (warm-up)', await h.call('POST', path, { token: admin, body: [empty] }), 200);
  const w = await recorded(h, () => h.call('POST', path, { token: admin, body }));
  const answer = expectStatus('aggregate', w.result, 200);
  const counted = (answer.body as Array<{ count: number }>).reduce((s, g) => s + g.count, 0);
  if (counted !== o.events) throw new Error(`aggregate: the groups count ${counted} events, ${o.events} were seeded in the day`);
  const itemsRead = w.details.filter((d) => d.command === 'Query').reduce((s, d) => s + d.scanned, 0);
  const t = totals(w.calls);
  const ratio = itemsRead / o.events;
  return {
    floor: o.events,
    ratio: Math.round(ratio * 1000) / 1000,
    goal: 'items read / events in the window <= 1.05',
    meetsGoal: ratio <= 1.05,
    events: o.events,
    outside: 2 * outside,
    readers: READERS.length,
    itemsRead,
    requests: t.requests,
    rcu: t.rcu,
    durationMs: Math.round(w.ms),
    measured: o.measured(),
  };
}
