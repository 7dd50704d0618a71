/**
 * `decisions`: access decisions through the real access and events handlers (in process, on the
 * benchmark's DynamoDB Local).
 *
 * - A warm decision, not recorded, with `small` and then `large` people in the instance (people
 *   without cards, seeded as the API stores them; the same reader, level, schedule and holder):
 *   p50, DynamoDB request waves and read units of each. Goal: at most 2 waves, the same read units,
 *   p50 within 1.2 × at both sizes.
 * - Recorded decisions per second against publishes per second (the same posting size class: an
 *   event with related objects), 10 callers each, in four alternating rounds of each.
 *   Goal: recorded ≥ 0.8 × publishes.
 * - `whocanpass` on a reader whose level 10 000 people hold (their connection items seeded): the
 *   items a page of 100 reads. Goal: ≤ 3 × pageSize (O(page), not O(people)).
 */
import { randomBytes } from 'node:crypto';
import { putConnection } from '#shared/db/relations-repo.ts';
import { getObject } from '#shared/db/objects-repo.ts';
import { toItem } from '#shared/db/object-writes.ts';
import { newKey, placeIn } from '#shared/model/placement.ts';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { expectStatus, recorded, totals, type Harness } from './harness.ts';
import type { BenchRuntime } from './measure-runtime.ts';
import type { Decisions, Measured } from './results.ts';
import { personDoc, writeItems } from './seed.ts';
import { percentile, waves } from './stats.ts';
import { seedTenant } from '../test/support/tokens.ts';

export interface DecisionsOptions {
  readonly h: Harness;
  /** The sizes compared. */
  readonly small: number;
  readonly large: number;
  readonly samples: number;
  /** Seconds of each throughput run. */
  readonly seconds: number;
  readonly whoCanPassPeople: number;
  /** Seeding of the large size stops here (a loaded machine): the size reached is reported. */
  readonly seedDeadline: number;
  readonly measured: () => Measured;
  /** Told what the phase is doing (a phase cut off by its time limit says how far it got). */
  readonly progress: (step: string) => void;
  /** The local runtime: recorded decisions and publishes are then measured over HTTP on it. */
  readonly rt?: BenchRuntime;
}

const CLIENTS = 10;
const PAGE_SIZE = 100;

/** Seeds `count` people without cards into `folder` until `deadline`; answers how many were written. */
async function seedMore(h: Harness, folder: StoredObject, count: number, deadline: number): Promise<number> {
  const place = placeIn(folder);
  let written = 0;
  while (written < count && Date.now() < deadline) {
    const n = Math.min(5_000, count - written);
    const items = Array.from({ length: n }, (_, i) => toItem({ key: newKey(), collection: 'people', type: 'PersonInfo', ...place, version: 1, doc: personDoc(written + i, `Person d${written + i}`) }));
    await writeItems(h.db, items);
    written += n;
  }
  return written;
}

interface DecisionFigures {
  readonly p50Ms: number;
  readonly waves: number;
  readonly requests: number;
  readonly rcu: number;
}

/** `samples` warm decisions: p50, and the waves, requests and read units of the last one. */
async function decisionFigures(h: Harness, path: string, token: string, body: unknown, samples: number): Promise<DecisionFigures> {
  const call = () => h.call('POST', path, { token, body });
  for (let i = 0; i < 5; i++) expectStatus('decision (warm-up)', await call(), 200);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    const a = await call();
    times.push(performance.now() - t0);
    if (a.status !== 200 || a.body.Reason !== 'Granted') throw new Error(`decision: ${a.status} ${a.text.slice(0, 200)}`);
  }
  // Nine more, each recorded alone right after a warm call: the reader, levels and schedules are
  // kept 1 s from their read, so one decision a second reads them again; the median is the warm one.
  const figures: Array<{ waves: number; requests: number; rcu: number }> = [];
  for (let i = 0; i < 9; i++) {
    await call();
    const w = await recorded(h, call);
    const t = totals(w.calls);
    figures.push({ waves: waves(w.details), requests: t.requests, rcu: t.rcu });
  }
  const median = (f: (x: (typeof figures)[number]) => number) => figures.map(f).sort((a, b) => a - b)[4]!;
  return { p50Ms: Math.round(percentile(times, 50) * 1000) / 1000, waves: median((x) => x.waves), requests: median((x) => x.requests), rcu: median((x) => x.rcu) };
}

/** Calls made per second by `CLIENTS` callers running `fn` for `seconds`. */
async function rate(seconds: number, fn: () => Promise<void>): Promise<number> {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        await fn();
        done += 1;
      }
    }),
  );
  return Math.round((done / ((performance.now() - t0) / 1000)) * 10) / 10;
}

export async function measureDecisions(o: DecisionsOptions): Promise<Decisions> {
  const { h } = o;
  // An instance of its own: the people counted are the ones this entry seeds.
  const tenant = await seedTenant({ db: h.db, config: h.config, calls: h.calls }, h.deps, { name: `Decisions-${randomBytes(3).toString('hex')}` });
  const I = tenant.instance.key;
  const admin = tenant.tokens.Administrator;
  const make = async (coll: string, body: Record<string, unknown>) => expectStatus(`POST ${coll}`, await h.call('POST', `/api/f/${I}/${coll}`, { token: admin, body }), 201).body;
  const connect = async (coll: string, key: string, relation: string, to: string) =>
    expectStatus(`connect ${relation}`, await h.call('POST', `/api/f/${I}/${coll}/${key}/connections/${relation}`, { token: admin, query: { relatedKey: to } }), 200);
  const schedule = await make('schedules', { $type: 'ScheduleInfo', CommonName: 'bench always', IsAlways: true });
  const reader = await make('readers', { $type: 'VendorReaderInfo', CommonName: 'bench reader' });
  const level = await make('accesslevels', { $type: 'AccessLevelInfo', CommonName: 'bench level' });
  await connect('accesslevels', level.Key, 'Reader', reader.Key);
  await connect('accesslevels', level.Key, 'Schedule', schedule.Key);
  const holder = await make('people', { $type: 'PersonInfo', CommonName: 'bench holder', CardAssignments: [{ EncodedCardNumber: 4242 }] });
  await connect('people', holder.Key, 'AccessLevel', level.Key);
  const folder = (await getObject(h.db, String(expectStatus('POST folder', await h.call('POST', `/api/f/${I}/folders`, { token: admin, body: { $type: 'FolderInfo', CommonName: 'bench decisions' } }), 201).body.Key)))!;

  const path = `/api/f/${I}/accessdecisions`;
  const body = { ReaderKey: reader.Key, EncodedCardNumber: 4242 };
  const token = tenant.tokens.Operator;
  let people = 1;
  o.progress(`seeding ${o.small} people`);
  if (people < o.small) people += await seedMore(h, folder, o.small - people, Number.POSITIVE_INFINITY);
  const smallPeople = people;
  o.progress(`decisions at ${people} people`);
  const small = await decisionFigures(h, path, token, body, o.samples);
  o.progress(`seeding up to ${o.large} people`);
  people += await seedMore(h, folder, o.large - people, o.seedDeadline);
  o.progress(`decisions at ${people} people`);
  const largePeople = people;
  const large = await decisionFigures(h, path, token, body, o.samples);

  o.progress('recorded decisions and publishes');
  const throughput = o.rt ? await throughputOn(o.rt, o.seconds) : await throughputIn(h, make, I, token, reader.Key, holder.Key, o.seconds);

  o.progress(`whocanpass on ${o.whoCanPassPeople} holders`);
  // whocanpass on a level held by many people: their connection items (and the people) seeded.
  const crowd = await make('accesslevels', { $type: 'AccessLevelInfo', CommonName: 'bench crowd' });
  const door = await make('readers', { $type: 'VendorReaderInfo', CommonName: 'bench crowd reader' });
  await connect('accesslevels', crowd.Key, 'Reader', door.Key);
  await connect('accesslevels', crowd.Key, 'Schedule', schedule.Key);
  const place = placeIn(folder);
  const items: Record<string, unknown>[] = [];
  for (let n = 0; n < o.whoCanPassPeople; n++) {
    const key = newKey();
    const doc = { ...personDoc(n, `Crowd ${n}`), CardAssignments: [{ EncodedCardNumber: 10_000_000 + n, Key: newKey() }] };
    items.push(toItem({ key, collection: 'people', type: 'PersonInfo', ...place, version: 1, doc }));
    items.push(putConnection(h.db, { from: key, relation: 'AccessLevel', to: crowd.Key }).Put!.Item as Record<string, unknown>);
  }
  await writeItems(h.db, items);
  const page = (n: number) => h.call('GET', `/api/f/${I}/readers/${door.Key}/whocanpass`, { token, query: { page: n, pageSize: PAGE_SIZE } });
  expectStatus('whocanpass (warm-up)', await page(0), 200);
  const w = await recorded(h, () => page(1));
  const answer = expectStatus('whocanpass', w.result, 200);
  const itemsRead = w.details.reduce((s, d) => s + d.scanned, 0);
  const wt = totals(w.calls);

  const sameRcu = small.rcu === large.rcu;
  const p50Ratio = Math.round((large.p50Ms / small.p50Ms) * 1000) / 1000;
  const throughputRatio = Math.round((throughput.recorded / throughput.publishes) * 1000) / 1000;
  const meets = {
    waves: small.waves <= 2 && large.waves <= 2,
    rcu: sameRcu,
    p50: p50Ratio <= 1.2,
    throughput: throughputRatio >= 0.8,
    whoCanPass: itemsRead <= 3 * PAGE_SIZE && answer.body.length === PAGE_SIZE,
  };
  const missed = Object.entries(meets).filter(([, ok]) => !ok).map(([k]) => k);
  return {
    floor: small.p50Ms,
    ratio: p50Ratio,
    goal: 'warm decision: <= 2 waves and the same RCU at both sizes, p50 ratio <= 1.2; recorded/s >= 0.8 x publishes/s; whocanpass items read <= 3 x pageSize',
    meetsGoal: missed.length === 0,
    ...(missed.length ? { note: `missed: ${missed.join(', ')}` } : {}),
    small: { people: smallPeople, ...small },
    large: { people: largePeople, ...large },
    largeReached: largePeople >= o.large,
    recordedPerSecond: throughput.recorded,
    publishesPerSecond: throughput.publishes,
    throughputRatio,
    throughputOn: o.rt ? 'local runtime (HTTP)' : 'in process',
    whoCanPass: { holders: o.whoCanPassPeople, pageSize: PAGE_SIZE, rows: answer.body.length, itemsRead, requests: wt.requests, rcu: wt.rcu, durationMs: Math.round(w.ms) },
    measured: o.measured(),
  };
}

/** A posting of an event with two related objects (a reader and a person), as a card read's result has. */
function posting(readerKey: string, personKey: string): Record<string, unknown> {
  return {
    $type: 'EventMessagePosting',
    OccurredOn: new Date().toISOString(),
    AppKey: 'BenchDecisions',
    EventTypeMoniker: { Namespace: 'Bench', Nickname: 'Swipe' },
    RelatedObjects: [
      { Relation: 'Reader', LinkedObjectKey: readerKey },
      { Relation: 'Person', LinkedObjectKey: personKey },
    ],
  };
}

/** Publishes and recorded decisions a second, in four alternating rounds (the machine's load drifts: both see the same). */
async function alternate(seconds: number, publish: () => Promise<void>, record: () => Promise<void>): Promise<{ publishes: number; recorded: number }> {
  await publish();
  await record();
  const rounds = { publish: [] as number[], record: [] as number[] };
  for (let i = 0; i < 4; i++) {
    for (const kind of i % 2 === 0 ? (['publish', 'record'] as const) : (['record', 'publish'] as const)) {
      rounds[kind].push(await rate(seconds / 2, kind === 'publish' ? publish : record));
    }
  }
  const mean = (xs: number[]) => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10;
  return { publishes: mean(rounds.publish), recorded: mean(rounds.record) };
}

/** Through the handlers in process, on the harness's table. */
async function throughputIn(
  h: Harness,
  make: (coll: string, body: Record<string, unknown>) => Promise<any>,
  I: string,
  token: string,
  readerKey: string,
  personKey: string,
  seconds: number,
): Promise<{ publishes: number; recorded: number }> {
  const app = await make('apps', { $type: 'AppInfo', CommonName: 'bench decisions app', Monikers: [{ Namespace: 'Bench', Nickname: 'BenchDecisions' }] });
  expectStatus('event type', await h.call('PUT', `${app.Href}/eventtypes`, { token, body: { $type: 'EventTypeInfo', CommonName: 'Swipe', Monikers: [{ Namespace: 'Bench', Nickname: 'Swipe' }] } }), 201);
  const body = posting(readerKey, personKey);
  return alternate(
    seconds,
    async () => void expectStatus('publish', await h.call('POST', `/api/f/${I}/eventmessagesink`, { token, body }), 201),
    async () => void expectStatus('recorded decision', await h.call('POST', `/api/f/${I}/accessdecisions`, { token, body: { ReaderKey: readerKey, EncodedCardNumber: 4242, Record: true } }), 200),
  );
}

/** Over HTTP on the local runtime: the same reader, level, holder, app and posting in its instance. */
async function throughputOn(rt: BenchRuntime, seconds: number): Promise<{ publishes: number; recorded: number }> {
  const I = rt.instanceKey;
  const ok = async (method: string, path: string, body: unknown, status: number) => {
    const a = await rt.call(method, path, body);
    if (a.status !== status) throw new Error(`${method} ${path}: HTTP ${a.status} ${a.text.slice(0, 200)}`);
    return a.body;
  };
  const schedule = await ok('POST', `/api/f/${I}/schedules`, { $type: 'ScheduleInfo', CommonName: 'bench always', IsAlways: true }, 201);
  const reader = await ok('POST', `/api/f/${I}/readers`, { $type: 'VendorReaderInfo', CommonName: 'bench reader' }, 201);
  const level = await ok('POST', `/api/f/${I}/accesslevels`, { $type: 'AccessLevelInfo', CommonName: 'bench level', AccessLevelEntries: [{ ReaderId: reader.Key, ScheduleId: schedule.Key }] }, 201);
  const holder = await ok('POST', `/api/f/${I}/people`, { $type: 'PersonInfo', CommonName: 'bench holder', CardAssignments: [{ EncodedCardNumber: 4242 }] }, 201);
  await ok('POST', `/api/f/${I}/people/${holder.Key}/connections/AccessLevel?relatedKey=${level.Key}`, undefined, 200);
  const app = await ok('POST', `/api/f/${I}/apps`, { $type: 'AppInfo', CommonName: 'bench decisions app', Monikers: [{ Namespace: 'Bench', Nickname: 'BenchDecisions' }] }, 201);
  await ok('PUT', `${app.Href}/eventtypes`, { $type: 'EventTypeInfo', CommonName: 'Swipe', Monikers: [{ Namespace: 'Bench', Nickname: 'Swipe' }] }, 201);
  const body = posting(reader.Key, holder.Key);
  return alternate(
    seconds,
    async () => void (await ok('POST', `/api/f/${I}/eventmessagesink`, body, 201)),
    async () => void (await ok('POST', `/api/f/${I}/accessdecisions`, { ReaderKey: reader.Key, EncodedCardNumber: 4242, Record: true }, 200)),
  );
}
