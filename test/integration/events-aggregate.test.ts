/** Aggregation over a folder's events: body shapes, refusals, the read window, the cap, scope and big numbers. */
import { Long, ObjectId } from 'bson';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseJson } from '#shared/json.ts';
import { createApi } from '../support/api.ts';
import { seedTenant, testDeps, uniqueName } from '../support/tokens.ts';
import { bson, setupEvents, type Env } from './events-fixture.ts';

let e: Env;
let app: any;
let door: any;
let alarm: any;

beforeAll(async () => {
  e = await setupEvents();
  app = await e.app();
  door = await e.eventType(app, { Priority: 2 });
  alarm = await e.eventType(app, { Priority: 9 });
});

async function folder(parent = e.root, token = e.token): Promise<string> {
  const r = await e.api.post(`/api/f/${parent}/folders`, { token, body: { $type: 'FolderInfo', CommonName: uniqueName('f') } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.Key;
}

/** An event of `type` at `at` whose data names a reader (as access events carry it). */
async function pub(sink: string, at: string, reader: string, type: any = door, data: Record<string, unknown> = {}): Promise<any> {
  return e.published(
    e.posting(app.Key, type, { OccurredOn: at, EventDataBsonBase64: bson({ Reader: { CommonName: reader, Key: 'r1' }, ...data }) }),
    sink,
  );
}

const aggregate = (f: string, body: unknown, query: Record<string, any> = {}, token = e.token, api = e.api) =>
  api.post(`/api/f/${f}/aggregate/Events`, { token, body, query });

const ok = async (f: string, body: unknown, query: Record<string, any> = {}, token = e.token) => {
  const r = await aggregate(f, body, query, token);
  expect(r.status, r.text).toBe(200);
  return r.body as any[];
};

/** The C# client's shape: every stage a JSON string. */
const strings = (...stages: unknown[]) => stages.map((s) => JSON.stringify(s));

const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

describe('shapes', () => {
  it('groups by EventData.Reader.CommonName with stages sent as JSON strings, $date and $regex', async () => {
    const f = await folder();
    await pub(f, '2026-11-02T08:00:00Z', 'Front door');
    await pub(f, '2026-11-02T09:00:00Z', 'Front door');
    await pub(f, '2026-11-03T09:00:00Z', 'Front gate');
    await pub(f, '2026-11-03T10:00:00Z', 'Back door');
    await pub(f, '2026-10-20T10:00:00Z', 'Front door'); // before the range
    const body = [
      '{"$match":{"OccurredOn":{"$gte":{"$date":"2026-11-01T00:00:00Z"}},"EventData.Reader.CommonName":{"$regex":"^Front"}}}',
      '{"$group":{"_id":"$EventData.Reader.CommonName","count":{"$sum":1}}}',
    ];
    const rows = await ok(f, body);
    expect(rows.sort((a, b) => a._id.localeCompare(b._id))).toEqual([
      { _id: 'Front door', count: 2 },
      { _id: 'Front gate', count: 1 },
    ]);
  });

  it('takes stage objects too, ISO strings as dates, and answers the events as the API returns them plus EventData', async () => {
    const f = await folder();
    const a = await pub(f, '2026-11-05T08:00:00Z', 'Lobby');
    const b = await pub(f, '2026-11-05T09:00:00Z', 'Lobby');
    const rows = await ok(f, [{ $match: { OccurredOn: { $gte: '2026-11-05T00:00:00Z', $lt: '2026-11-06T00:00:00Z' } } }, { $sort: { OccurredOn: 1 } }]);
    expect(rows.map((r) => r.Key)).toEqual([a.Key, b.Key]);
    const listed = await e.api.get(`/api/f/${f}/events`, { token: e.token });
    const { EventData, ...asListed } = rows[1];
    expect(asListed).toEqual(listed.body[0]);
    expect(EventData).toEqual({ Reader: { CommonName: 'Lobby', Key: 'r1' } });
    expect(rows[0].OccurredOn).toBe('2026-11-05T08:00:00.000Z');
  });

  it('runs $project, $unwind, $addFields/$set, $sortByCount, $bucket, $count, $skip and $limit with the allowed accumulators', async () => {
    const f = await folder();
    for (let i = 0; i < 4; i++) await pub(f, `2026-11-10T0${i}:00:00Z`, i % 2 ? 'East' : 'West', i < 3 ? door : alarm, { Tags: ['a', 'b'], N: i });
    const m = { $match: { OccurredOn: { $gte: { $date: '2026-11-10T00:00:00Z' } } } };
    expect(await ok(f, [m, { $sortByCount: '$EventData.Reader.CommonName' }, { $sort: { _id: 1 } }])).toEqual([
      { _id: 'East', count: 2 },
      { _id: 'West', count: 2 },
    ]);
    expect(await ok(f, [m, { $unwind: '$EventData.Tags' }, { $count: 'n' }])).toEqual([{ n: 8 }]);
    expect(
      await ok(f, [
        m,
        { $set: { n: '$EventData.N' } },
        { $addFields: { twice: { $multiply: ['$n', 2] } } },
        {
          $group: {
            _id: null,
            sum: { $sum: '$twice' },
            avg: { $avg: '$n' },
            min: { $min: '$n' },
            max: { $max: '$n' },
            first: { $first: '$n' },
            last: { $last: '$n' },
            all: { $push: '$n' },
            readers: { $addToSet: '$EventData.Reader.CommonName' },
            count: { $count: {} },
            firstAt: { $min: '$OccurredOn' },
          },
        },
        { $project: { _id: 0, sum: 1, avg: 1, min: 1, max: 1, first: 1, last: 1, all: 1, readers: { $size: '$readers' }, count: 1, firstAt: 1 } },
      ]),
    ).toEqual([{ sum: 12, avg: 1.5, min: 0, max: 3, first: 3, last: 0, all: [3, 2, 1, 0], readers: 2, count: 4, firstAt: '2026-11-10T00:00:00.000Z' }]);
    expect(
      await ok(f, [m, { $bucket: { groupBy: '$Priority', boundaries: [0, 5, 10], default: 'other', output: { n: { $sum: 1 } } } }]),
    ).toEqual([
      { _id: 0, n: 3 },
      { _id: 5, n: 1 },
    ]);
    expect(await ok(f, [m, { $match: { EventTypeKey: alarm.Key } }, { $project: { _id: 0, Priority: 1 } }])).toEqual([{ Priority: 9 }]);
    expect((await ok(f, [m, { $sort: { OccurredOn: -1 } }, { $skip: 1 }, { $limit: 2 }])).map((r) => r.EventData.N)).toEqual([2, 1]);
  });

  it('gives a grouping every field it names, and whole events where it names $$ROOT', async () => {
    const f = await folder();
    const a = await pub(f, ago(1), 'Root');
    const [whole] = await ok(f, strings({ $group: { _id: '$EventData.Reader.CommonName', docs: { $push: '$$ROOT' } } }));
    const listed = (await e.api.get(`/api/f/${f}/events`, { token: e.token })).body[0];
    expect(whole).toEqual({ _id: 'Root', docs: [{ ...listed, EventData: { Reader: { CommonName: 'Root', Key: 'r1' } } }] });
    const named = await ok(f, strings({ $match: { Priority: 2 } }, { $set: { at: '$$CURRENT.OccurredOn' } }, { $group: { _id: '$Key', at: { $first: '$at' }, links: { $first: '$Links' } } }));
    expect(named).toEqual([{ _id: a.Key, at: a.OccurredOn, links: listed.Links }]);
  });

  it('accepts aggregate/events in lower case and queryTimeout', async () => {
    const f = await folder();
    await pub(f, ago(1), 'Side');
    const r = await e.api.post(`/api/f/${f}/aggregate/events`, { token: e.token, body: strings({ $count: 'n' }), query: { queryTimeout: 10 } });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual([{ n: 1 }]);
  });

  it('keeps 64-bit integers of event data exact, in matches and in answers', async () => {
    const f = await folder();
    await pub(f, ago(1), 'Card', door, { Card: Long.fromString('9223372036854775807') });
    await pub(f, ago(1), 'Card', door, { Card: Long.fromString('9223372036854775806') });
    const r = await aggregate(f, ['{"$match":{"EventData.Card":9223372036854775807}}', '{"$project":{"_id":0,"card":"$EventData.Card"}}']);
    expect(r.status, r.text).toBe(200);
    expect(r.text).toBe('[{"card":9223372036854775807}]');
    const grouped = await aggregate(f, strings({ $group: { _id: '$EventData.Card', n: { $sum: 1 } } }, { $sort: { _id: -1 } }));
    expect(parseJson(grouped.text)).toEqual([
      { _id: 9223372036854775807n, n: 1 },
      { _id: 9223372036854775806n, n: 1 },
    ]);
  });
  it('answers BSON dates and object ids of event data as the JSON of the events list, and matches the dates as dates', async () => {
    const f = await folder();
    await pub(f, ago(1), 'Typed', door, { When: new Date('2026-11-20T10:00:00Z'), Id: new ObjectId('0123456789abcdef01234567') });
    const rows = await ok(f, [{ $match: { 'EventData.When': { $gte: { $date: '2026-11-20T00:00:00Z' } } } }, { $project: { _id: 0, When: '$EventData.When', Id: '$EventData.Id' } }]);
    expect(rows).toEqual([{ When: '2026-11-20T10:00:00.000Z', Id: '0123456789abcdef01234567' }]);
  });
});

describe('refusals', () => {
  const refused = async (body: unknown, code = 'InvalidQuery') => {
    const f = e.root;
    const r = await aggregate(f, body);
    expect(r.status, r.text).toBe(400);
    expect(r.body.Error).toBe(code);
    return r.body.Message as string;
  };

  it('rejects stages that write or join, and unknown stages', async () => {
    for (const stage of ['$out', '$merge', '$lookup', '$unionWith', '$graphLookup', '$facet', '$sample', '$nope']) {
      expect(await refused(strings({ [stage]: {} }))).toContain(stage);
    }
  });

  it('rejects operators that run code anywhere in the pipeline', async () => {
    expect(await refused([{ $match: { $where: 'sleep(1000)' } }])).toMatch(/\$where.*runs code/);
    expect(await refused([{ $match: { $expr: { $function: { body: 'x', args: [], lang: 'js' } } } }])).toMatch(/\$expr/);
    expect(await refused([{ $project: { x: { $cond: [true, { $function: { body: 'x', args: [], lang: 'js' } }, 1] } } }])).toMatch(/\$function/);
    expect(await refused([{ $group: { _id: null, x: { $accumulator: { init: 'x' } } } }])).toMatch(/\$accumulator/);
    expect(await refused([{ $group: { _id: null, x: { $stdDevPop: '$Priority' } } }])).toMatch(/\$stdDevPop/);
    expect(await refused([{ $project: { x: { $regexMatch: { input: '$MessageShort', regex: '(a+)+$' } } } }])).toMatch(/\$regexMatch/);
  });

  it('rejects unsafe or malformed regular expressions and malformed bodies', async () => {
    expect(await refused([{ $match: { 'EventData.Reader.CommonName': { $regex: '(a)\\1' } } }])).toMatch(/not supported/);
    expect(await refused([{ $match: { MessageShort: { $regex: 'a', $options: 'g' } } }])).toMatch(/\$options/);
    await refused({ $match: {} });
    await refused(['{"$match": ']);
    await refused([42]);
    await refused([{ $match: {}, $limit: 1 }]);
    await refused([{ $match: { OccurredOn: { $gte: { $date: 'yesterday' } } } }]);
    await refused([{ $count: '$bad' }]);
  });

  it('answers malformed stage arguments with 400, never a 5xx', async () => {
    const f = await folder();
    await pub(f, ago(1), 'M');
    const bodies: unknown[] = [
      [null], [[]], ['{}'], ['[]'], [{ $match: null }], [{ $match: 'x' }], [{ $sort: 'x' }], [{ $sort: { a: 5 } }], [{ $group: 5 }],
      [{ $group: { count: { $sum: 1 } } }], [{ $unwind: 5 }], [{ $unwind: 'noDollar' }], [{ $project: 'x' }], [{ $bucket: {} }],
      [{ $bucket: { groupBy: '$Priority', boundaries: [5, 1] } }], [{ $limit: -1 }], [{ $limit: 'a' }], [{ $skip: 'a' }],
      [{ $count: 5 }], [{ $sortByCount: {} }], [{ $match: { a: { $in: 5 } } }], [{ $match: { a: { $size: 'x' } } }],
      [{ $addFields: { a: { $dateToString: { date: 'x' } } } }], [{ $project: { a: { $divide: [1, 0] } } }],
      [{ $set: { a: { $toInt: 'abc' } } }], [{ $project: { a: { $arrayElemAt: ['$x', 'y'] } } }],
      [{ $match: { OccurredOn: { $gte: { $date: 1e20 } } } }], [{ $group: { _id: { $cond: 5 } } }],
    ];
    for (const body of bodies) {
      const r = await aggregate(f, body);
      expect(r.status, `${JSON.stringify(body)}: ${r.text}`).toBeLessThan(500);
      if (r.status !== 200) expect(r.body.Error, JSON.stringify(body)).toBe('InvalidQuery');
    }
  });

  it('rejects a bad queryTimeout', async () => {
    const r = await aggregate(e.root, [], { queryTimeout: 'soon' });
    expect(r.status).toBe(400);
    expect(r.body.Error).toBe('InvalidParameter');
  });
});

describe('reads', () => {
  it('reads the last 30 days when the first $match has no lower bound on OccurredOn', async () => {
    const f = await folder();
    const recent = await pub(f, ago(2), 'R');
    await pub(f, ago(40), 'R');
    expect((await ok(f, [])).map((r) => r.Key)).toEqual([recent.Key]);
    expect((await ok(f, [{ $match: { OccurredOn: { $lt: ago(1) } } }])).map((r) => r.Key)).toEqual([recent.Key]);
    expect(await ok(f, [{ $match: { OccurredOn: { $gte: ago(50) } } }, { $count: 'n' }])).toEqual([{ n: 2 }]);
  });

  it('puts the OccurredOn range of the leading $match in the key condition: one Query for a bounded day', async () => {
    const f = await folder();
    for (let i = 0; i < 6; i++) await pub(f, `2026-11-1${i}T12:00:00Z`, 'K');
    await aggregate(f, []); // the folder's placement is read once
    const day = await e.measure(() =>
      ok(f, [{ $match: { OccurredOn: { $gte: { $date: '2026-11-12T00:00:00Z' }, $lt: { $date: '2026-11-13T00:00:00Z' } } } }, { $count: 'n' }]),
    );
    expect(day.result).toEqual([{ n: 1 }]);
    expect(day.commands).toEqual(['Query']);
    const scanned = e.t.calls.at(-1)!;
    expect(scanned.read).toBeLessThanOrEqual(0.5);
    // $gt and $lte are exact to the millisecond.
    expect(await ok(f, [{ $match: { OccurredOn: { $gt: '2026-11-12T12:00:00Z', $lte: '2026-11-14T12:00:00Z' } } }, { $count: 'n' }])).toEqual([{ n: 2 }]);
  });

  it('answers 400 QueryTooBroad naming the cap when the window holds more events than GATEHOUSE_AGGREGATE_MAX_EVENTS', async () => {
    const small = createApi(testDeps(e.t, { config: { ...e.t.config, aggregateMaxEvents: 3 } }));
    const f = await folder();
    for (let i = 0; i < 4; i++) await pub(f, `2026-11-0${i + 1}T12:00:00Z`, 'C');
    const r = await aggregate(f, [{ $match: { OccurredOn: { $gte: '2026-11-01T00:00:00Z' } } }], {}, e.token, small);
    expect(r.status, r.text).toBe(400);
    expect(r.body).toEqual({ Error: 'QueryTooBroad', Message: expect.stringContaining('3 events') });
    const narrow = await aggregate(f, [{ $match: { OccurredOn: { $gte: '2026-11-02T00:00:00Z' } } }, { $count: 'n' }], {}, e.token, small);
    expect(narrow.status, narrow.text).toBe(200);
    expect(narrow.body).toEqual([{ n: 3 }]);
  });

  it('answers 503 QueryTimeout when queryTimeout elapses before the timelines are read', async () => {
    const f = await folder();
    const subs = [];
    for (let i = 0; i < 3; i++) subs.push(await folder(f));
    for (const s of subs) await pub(s, ago(1), 'T');
    // A server clock that moves a minute each time it is read: the first page finds the time spent.
    let reads = 0;
    const slow = createApi(testDeps(e.t, { now: () => new Date(Date.now() + 60_000 * reads++) }));
    const r = await aggregate(f, [], { includeSubFolders: true, queryTimeout: 1 }, e.token, slow);
    expect(r.status, r.text).toBe(503);
    expect(r.body).toEqual({ Error: 'QueryTimeout', Message: expect.stringContaining('queryTimeout') });
  });
});

describe('scope', () => {
  it('includes sub-folders with includeSubFolders and child instances with spanScope, never a sibling\'s events', async () => {
    const parent = await seedTenant(e.t, e.env.deps, { parent: e.env.root.instance });
    const child = await seedTenant(e.t, e.env.deps, { parent: parent.instance });
    const sibling = await seedTenant(e.t, e.env.deps, { parent: e.env.root.instance });
    const p = parent.instance.key;
    const c = child.instance.key;
    const sub = await folder(p);
    const own = await pub(p, ago(1), 'P');
    const inSub = await pub(sub, ago(1), 'S');
    const inChild = await pub(c, ago(1), 'C');
    const inSibling = await pub(sibling.instance.key, ago(1), 'X');
    const keys = async (f: string, query: Record<string, any> = {}, token = parent.tokens.ReadOnly) =>
      (await ok(f, strings({ $project: { Key: 1 } }), query, token)).map((r) => r.Key).sort();
    expect(await keys(p)).toEqual([own.Key]);
    expect(await keys(p, { includeSubFolders: true })).toEqual([own.Key, inSub.Key].sort());
    expect(await keys(p, { spanScope: true })).toEqual([own.Key, inChild.Key].sort());
    expect(await keys(p, { spanScope: true, includeSubFolders: true })).toEqual([own.Key, inSub.Key, inChild.Key].sort());
    expect(await keys(p, { spanScope: true, includeSubFolders: true })).not.toContain(inSibling.Key);
    // The child's users see their own events only, and nothing above them.
    expect(await keys(c, { spanScope: true }, child.tokens.ReadOnly)).toEqual([inChild.Key]);
    const up = await aggregate(p, [], {}, child.tokens.ReadOnly);
    expect(up.status).toBe(403);
    const across = await aggregate(sibling.instance.key, [], { spanScope: true }, parent.tokens.Administrator);
    expect(across.status).toBe(403);
    expect((await aggregate('0123456789abcdef01234567', [])).status).toBe(403);
  });
});

describe('limits', () => {
  const expensive = async (f: string, body: unknown, message: RegExp, query: Record<string, any> = {}) => {
    const r = await aggregate(f, body, query);
    expect(r.status, r.text).toBe(400);
    expect(r.body).toEqual({ Error: 'QueryTooExpensive', Message: expect.stringMatching(message) });
  };
  /** `s`: 'ab' doubled `n` times, as one text of 2^(n+1) characters. */
  const doubledText = (n: number) => ({ $reduce: { input: { $range: [0, n] }, initialValue: 'ab', in: { $concat: ['$$value', '$$value'] } } });

  it('runs $range and $reduce within the caps, and names the cap a value would cross', async () => {
    const f = await folder();
    await pub(f, ago(1), 'L');
    expect(await ok(f, [{ $project: { _id: 0, s: { $reduce: { input: { $range: [0, 5] }, initialValue: 0, in: { $add: ['$$value', '$$this'] } } } } }])).toEqual([{ s: 10 }]);
    await expensive(f, [{ $project: { x: { $range: [0, 1e9] } } }], /array would hold more than 100000 elements/);
    await expensive(f, [{ $project: { s: doubledText(30) } }], /text would be longer than 1000000 characters/);
    await expensive(f, [{ $project: { x: { $reduce: { input: { $range: [0, 500] }, initialValue: [], in: ['$$value'] } } } }], /nested deeper than 100 levels/);
    // Shared references: 2^40 elements as JSON, a few objects in memory; measured, never walked in full.
    await expensive(f, [{ $project: { x: [1] } }, ...Array.from({ length: 40 }, () => ({ $set: { x: ['$x', '$x'] } }))], /larger than 16777216 bytes/);
    await expensive(f, [{ $project: { x: { $range: [0, 1001] }, y: { $range: [0, 1000] } } }, { $unwind: '$x' }, { $unwind: '$y' }], /\$unwind would emit more than 1000000 documents/);
  });

  it('ends a pipeline still running at queryTimeout, and one past its worker\'s memory, with 400 QueryTooExpensive; the next one runs', async () => {
    const f = await folder();
    await pub(f, ago(1), 'L');
    const slow = [{ $project: { x: { $reduce: { input: { $range: [0, 100_000] }, initialValue: [], in: { $concatArrays: ['$$value', ['$$this']] } } } } }];
    const t0 = Date.now();
    await expensive(f, slow, /did not finish within queryTimeout \(1 s\)/, { queryTimeout: 1 });
    expect(Date.now() - t0).toBeLessThan(3000);
    // 2000 documents, each with its own text of 2^19 characters, all held by $sort.
    const big = [{ $project: { s: doubledText(18), x: { $range: [0, 2000] } } }, { $unwind: '$x' }, { $set: { t: { $toUpper: '$s' } } }, { $sort: { x: -1 } }, { $count: 'n' }];
    await expensive(f, big, /more than the 256 MB of memory/);
    expect(await ok(f, [{ $count: 'n' }])).toEqual([{ n: 1 }]);
  });
});
