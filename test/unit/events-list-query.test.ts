/** The events list's query parameters and filter. */
import { describe, expect, it } from 'vitest';
import type { ApiRequest } from '#shared/http/operation-contract.ts';
import { eventFilter, parseEventListQuery, type EventDocView } from '#shared/events/list-query.ts';
import { dateParam as utcDateParam } from '#shared/http/params.ts';

const req = (query: Record<string, string | string[]>): ApiRequest =>
  ({ query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])) }) as unknown as ApiRequest;

const K1 = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const K2 = 'bbbbbbbbbbbbbbbbbbbbbbbb';
const event = (over: Partial<EventDocView> = {}): EventDocView => ({
  Key: '650000000000000000000000',
  OccurredOn: '2024-05-01T12:00:00.000Z',
  Priority: 5,
  RequiresAcknowledgement: false,
  AlarmAcknowledgements: [],
  ObjectLinks: [{ LinkedObjectKey: K1 }],
  ...over,
});

describe('parseEventListQuery', () => {
  it('has the defaults of an unfiltered first page', async () => {
    const q = await parseEventListQuery(req({}));
    expect(q).toMatchObject({ page: 0, pageSize: 20, includeSubFolders: false, spanScope: false, requiresAck: false, priorityThreshold: 0, forKeys: [], window: undefined });
  });

  it('reads lists repeated or comma-separated, lower-casing keys', async () => {
    const q = await parseEventListQuery(req({ forKeys: [`${K1.toUpperCase()},${K2}`, K1], forAllKeys: K2 }));
    expect(q.forKeys).toEqual([K1, K2, K1]);
    expect(q.forAllKeys).toEqual([K2]);
  });

  it('reads time-of-day windows as seconds of the UTC day', async () => {
    expect((await parseEventListQuery(req({ timeWindowStarting: '22:00:00', timeWindowEnding: '02:30' }))).window).toEqual({ start: 79200, end: 9000 });
    expect((await parseEventListQuery(req({ timeWindowEnding: '0.01:00:00' }))).window).toEqual({ start: 0, end: 3600 });
  });

  it('rejects malformed values with 400', async () => {
    const bad: Array<Record<string, string>> = [{ pageSize: '0' }, { page: 'x' }, { spanScope: 'yes' }, { startingOn: 'x' }, { timeWindowStarting: '24:00' }, { forKeys: 'x' }, { sinceKey: 'x' }, { query: '{$where: 1}' }, { priorityThreshold: '-1' }];
    for (const q of bad) {
      await expect(parseEventListQuery(req(q)), JSON.stringify(q)).rejects.toThrow();
    }
  });

  it('matches parameter names whatever their case', async () => {
    const q = await parseEventListQuery(req({ pagesize: '5', PAGE: '2', forkeys: K1, SpanScope: 'true' }));
    expect(q).toMatchObject({ page: 2, pageSize: 5, forKeys: [K1], spanScope: true });
  });

  it('reads dates as UTC when they carry no zone, and refuses dates that do not exist', () => {
    const at = (v: string) => utcDateParam(req({ d: v }), 'd')?.toISOString();
    expect(at('2024-05-01')).toBe('2024-05-01T00:00:00.000Z');
    expect(at('2024-05-01T10:00:00')).toBe('2024-05-01T10:00:00.000Z');
    expect(at('2024-05-01T10:00:00.5+02:00')).toBe('2024-05-01T08:00:00.500Z');
    expect(at('2024-05-01T10:00:00 02:00')).toBe('2024-05-01T08:00:00.000Z');
    expect(at('2024-05-01T10:00:00Z')).toBe('2024-05-01T10:00:00.000Z');
    for (const bad of ['2024-02-30', '2024-05-01T24:00:00Z', 'May 1st', '2024-5-1']) expect(() => at(bad), bad).toThrow();
  });

  it('identifies a listing across its pages by every parameter but page', async () => {
    const a = await parseEventListQuery(req({ page: '1', forKeys: K1, pageSize: '5' }));
    const b = await parseEventListQuery(req({ pageSize: '5', forKeys: K1, page: '7' }));
    const c = await parseEventListQuery(req({ pageSize: '5', forKeys: K2 }));
    expect(a.signature).toBe(b.signature);
    expect(a.signature).not.toBe(c.signature);
  });
});

describe('eventFilter', () => {
  const keep = async (query: Record<string, string | string[]>, e: EventDocView, people?: Set<string>) => eventFilter(await parseEventListQuery(req(query)), people)(e);

  it('requiresAck keeps unacknowledged events that require acknowledgement', async () => {
    expect(await keep({ requiresAck: 'true' }, event({ RequiresAcknowledgement: true }))).toBe(true);
    expect(await keep({ requiresAck: 'true' }, event({ RequiresAcknowledgement: true, AlarmAcknowledgements: [{}] }))).toBe(false);
    expect(await keep({ requiresAck: 'true' }, event())).toBe(false);
  });

  it('the time window includes its start, excludes its end, and wraps over midnight', async () => {
    const at = (t: string) => event({ OccurredOn: `2024-05-01T${t}Z` });
    expect(await keep({ timeWindowStarting: '12:00:00', timeWindowEnding: '13:00:00' }, at('12:00:00'))).toBe(true);
    expect(await keep({ timeWindowStarting: '12:00:00', timeWindowEnding: '13:00:00' }, at('13:00:00'))).toBe(false);
    expect(await keep({ timeWindowStarting: '22:00:00', timeWindowEnding: '02:00:00' }, at('23:59:59'))).toBe(true);
    expect(await keep({ timeWindowStarting: '22:00:00', timeWindowEnding: '02:00:00' }, at('01:00:00'))).toBe(true);
    expect(await keep({ timeWindowStarting: '22:00:00', timeWindowEnding: '02:00:00' }, at('12:00:00'))).toBe(false);
  });

  it('priority threshold, keys, sinceKey, people and query', async () => {
    expect(await keep({ priorityThreshold: '6' }, event())).toBe(false);
    expect(await keep({ priorityThreshold: '5' }, event())).toBe(true);
    expect(await keep({ forKeys: `${K2},${K1}` }, event())).toBe(true);
    expect(await keep({ forAllKeys: `${K2},${K1}` }, event())).toBe(false);
    expect(await keep({ forKeys: K1 }, event({ ObjectLinks: [{ LinkedObjectKey: K1.toUpperCase() }] }))).toBe(true);
    expect(await keep({ sinceKey: '650000000000000000000000' }, event())).toBe(false);
    expect(await keep({ sinceKey: '64ffffffffffffffffffffff' }, event())).toBe(true);
    expect(await keep({}, event(), new Set([K2]))).toBe(false);
    expect(await keep({}, event(), new Set([K1]))).toBe(true);
    expect(await keep({ query: '{Priority: {$gte: 5}, _t: "EventMessageData"}' }, event())).toBe(true);
    expect(await keep({ query: "{OccurredOn: {$lt: ISODate('2024-05-01T00:00:00Z')}}" }, event())).toBe(false);
  });
});
