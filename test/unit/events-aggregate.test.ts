/** The aggregation's pure parts: the pipeline check, the OccurredOn range of the key condition, the fields held, the caps on values. */
import { beforeAll, describe, expect, it } from 'vitest';
import { checkValue, WORK_LIMITS } from '#shared/events/aggregate-engine.ts';
import { fieldsRead, loadRegexEngine, occurredRange, parsePipeline, splitWindow } from '#shared/events/aggregate.ts';
import { eventWrite } from '#shared/events/publish.ts';
import { renderEvent, renderEventFields } from '#shared/events/event-render.ts';

// The aggregation loads RE2 before it reads a pipeline (shared/events/event-operations.ts).
beforeAll(loadRegexEngine);

const match = (body: unknown) => (parsePipeline([{ $match: body }])[0]!.$match ?? {}) as Record<string, unknown>;

describe('parsePipeline', () => {
  it('reads stages and JSON strings holding one, with $date, ISO strings in $match and $numberLong', () => {
    const p = parsePipeline(['{"$match":{"OccurredOn":{"$gte":{"$date":"2026-11-01T00:00:00Z"}},"At":"2026-11-02T00:00:00Z"}}', { $limit: 5 }, { $set: { n: { $numberLong: '12' } } }]);
    expect(p).toEqual([
      { $match: { OccurredOn: { $gte: new Date('2026-11-01T00:00:00Z') }, At: new Date('2026-11-02T00:00:00Z') } },
      { $limit: 5 },
      { $set: { n: 12 } },
    ]);
  });

  it('rejects what is not allowed, naming it', () => {
    expect(() => parsePipeline([{ $out: 'x' }])).toThrow(/\$out .*only read/);
    expect(() => parsePipeline([{ $project: { a: { $let: { vars: {}, in: { $function: {} } } } } }])).toThrow(/\$function is not allowed: it runs code/);
    expect(() => parsePipeline([{ $facet: {} }])).toThrow(/The stage \$facet is not allowed/);
    expect(() => parsePipeline({})).toThrow(/JSON array/);
  });
});

describe('occurredRange', () => {
  it('takes the tightest bounds of the leading matches, $gt and $lte to the millisecond', () => {
    const t = (iso: string) => new Date(iso);
    expect(occurredRange([match({ OccurredOn: { $gte: { $date: '2026-11-01T00:00:00Z' }, $lt: '2026-11-03T00:00:00Z' } })])).toEqual({
      from: t('2026-11-01T00:00:00Z'),
      to: t('2026-11-03T00:00:00Z'),
    });
    expect(
      occurredRange([match({ $and: [{ OccurredOn: { $gt: '2026-11-01T00:00:00Z' } }] }), match({ OccurredOn: { $lte: '2026-11-02T00:00:00Z', $gte: '2026-10-01T00:00:00Z' } })]),
    ).toEqual({ from: t('2026-11-01T00:00:00.001Z'), to: t('2026-11-02T00:00:00.001Z') });
    expect(occurredRange([match({ OccurredOn: '2026-11-01T00:00:00Z' })])).toEqual({ from: t('2026-11-01T00:00:00Z'), to: t('2026-11-01T00:00:00.001Z') });
    expect(occurredRange([match({ $or: [{ OccurredOn: { $gte: '2026-11-01T00:00:00Z' } }] })])).toEqual({});
    expect(occurredRange([match({ OccurredOn: { $gte: 'yesterday' } })])).toEqual({});
  });
});

describe('fieldsRead', () => {
  it('names the fields a grouping reads, or all of them', () => {
    const p = parsePipeline([
      { $match: { OccurredOn: { $gte: '2026-11-01T00:00:00Z' }, 'EventData.Reader.CommonName': { $regex: '^F' } } },
      { $group: { _id: '$EventData.Reader.CommonName', n: { $sum: 1 }, p: { $max: '$Priority' } } },
      { $project: { whatever: '$$ROOT' } },
    ]);
    expect([...fieldsRead(p)!].sort()).toEqual(['EventData', 'OccurredOn', 'Priority', '_id', 'n', 'p']);
    expect(fieldsRead(parsePipeline([{ $count: 'n' }]))).toEqual(new Set());
    expect(fieldsRead(parsePipeline([{ $sort: { OccurredOn: -1 } }, { $limit: 3 }]))).toBeUndefined();
    expect(fieldsRead(parsePipeline([{ $group: { _id: null, all: { $push: '$$ROOT' } } }]))).toBeUndefined();
    expect([...fieldsRead(parsePipeline([{ $group: { _id: '$$CURRENT.Key' } }]))!]).toEqual(['_id', 'Key']);
    expect([...fieldsRead(parsePipeline([{ $project: { _id: 0, Key: 1, at: '$OccurredOn' } }, { $sort: { at: 1 } }]))!].sort()).toEqual(['Key', 'OccurredOn', '_id', 'at']);
    expect(fieldsRead(parsePipeline([{ $project: { EventData: 0 } }, { $sort: { Key: 1 } }]))).toBeUndefined();
  });
});

describe('renderEventFields', () => {
  it('gives exactly the named fields of the rendered event, derived ones included', () => {
    const { event } = eventWrite({
      key: 'a'.repeat(24),
      placement: { folder: 'b'.repeat(24), path: ['c'.repeat(24), 'b'.repeat(24)], instances: ['c'.repeat(24)] },
      appKey: 'd'.repeat(24),
      eventTypeKey: 'e'.repeat(24),
      eventTypeMoniker: { Namespace: 'Vendor', Nickname: 'Swipe' },
      occurredOn: new Date('2026-11-01T00:00:00Z'),
      publishedOn: new Date('2026-11-01T00:00:01Z'),
      priority: 3,
      requiresAcknowledgement: false,
      messageLong: null,
      messageShort: 'Swipe',
      objectLinks: [{ $type: 'ObjectLinkItem', Relation: 'Reader', LinkedObjectKey: 'f'.repeat(24), CommonName: 'Door' }],
      eventDataBsonBase64: null,
      retentionDays: 1,
    });
    const full = renderEvent(event, 'NS');
    for (const names of [['ObjectLinks', 'Priority', 'Missing'], ['Key', 'OccurredOn'], ['RelatedObjects', 'EventTypeMoniker', '$type'], []]) {
      const expected = Object.fromEntries(names.filter((n) => n in full).map((n) => [n, full[n]]));
      expect(renderEventFields(event, 'NS', new Set(names))).toEqual(expected);
    }
  });
});

describe('splitWindow', () => {
  it('cuts [from, end) into consecutive ranges that meet exactly, the last ending at the sort key', () => {
    const end = `2026-11-02T00:00:00.000Z#${'a'.repeat(24)}`;
    expect(splitWindow('2026-11-01T00:00:00.000Z', end, 4)).toEqual([
      { from: '2026-11-01T00:00:00.000Z', to: '2026-11-01T06:00:00.000Z' },
      { from: '2026-11-01T06:00:00.000Z', to: '2026-11-01T12:00:00.000Z' },
      { from: '2026-11-01T12:00:00.000Z', to: '2026-11-01T18:00:00.000Z' },
      { from: '2026-11-01T18:00:00.000Z', to: end },
    ]);
    expect(splitWindow('2026-11-01T00:00:00.000Z', end, 1)).toEqual([{ from: '2026-11-01T00:00:00.000Z', to: end }]);
    const tiny = `2026-11-01T00:00:00.002Z#${'a'.repeat(24)}`;
    expect(splitWindow('2026-11-01T00:00:00.000Z', tiny, 4)).toEqual([{ from: '2026-11-01T00:00:00.000Z', to: tiny }]);
  });
});

describe('checkValue', () => {
  const refused = (v: unknown) => {
    try {
      checkValue(v);
    } catch (err) {
      expect(err).toMatchObject({ status: 400, code: 'QueryTooExpensive' });
      return (err as Error).message;
    }
    throw new Error('not refused');
  };

  it('passes values within the caps and names the cap a value crosses', () => {
    expect(checkValue(Array.from({ length: WORK_LIMITS.maxArrayLength }, (_, i) => i))).toHaveLength(WORK_LIMITS.maxArrayLength);
    expect(refused(Array.from({ length: WORK_LIMITS.maxArrayLength + 1 }, () => 0))).toMatch(/more than 100000 elements/);
    expect(refused('x'.repeat(WORK_LIMITS.maxStringLength + 1))).toMatch(/longer than 1000000 characters/);
    let deep: unknown = 1;
    for (let i = 0; i <= WORK_LIMITS.maxValueDepth; i++) deep = [deep];
    expect(refused(deep)).toMatch(/deeper than 100 levels/);
  });

  it('measures a value of shared references as what it would serialize to, without walking it in full', () => {
    let shared: unknown = [1];
    for (let i = 0; i < 60; i++) shared = [shared, shared];
    const t0 = performance.now();
    expect(refused({ x: shared })).toMatch(/larger than 16777216 bytes/);
    // 2^60 leaves: the walk stops at the cap, not at the end.
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});
