/**
 * The usage meter's aggregation and flush timing (injected clock), the stream records it counts,
 * the login outcomes the token metrics count, and the EMF lines of the request metrics.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loginOutcome } from '#shared/auth/login-outcome.ts';
import { usageOfStreamRecord } from '#shared/db/usage-repo.ts';
import { SYSTEM_APP_KEY } from '#shared/events/audit.ts';
import { createRequestMetrics } from '#shared/metrics.ts';
import { UsageMeter, requestCounter, utcDay } from '#shared/usage/meter.ts';
import { meterStreamBatch } from '#shared/usage/stream.ts';

const A = 'aaaaaaaaaaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbbbbbbbbbb';

function meterAt(start: string, flushEveryMs = 60_000) {
  let now = Date.parse(start);
  const meter = new UsageMeter({ flushEveryMs, now: () => now });
  return { meter, advance: (ms: number) => (now += ms) };
}

describe('usage meter', () => {
  it('holds counts until a minute has passed, then hands out one delta per instance and day', () => {
    const { meter, advance } = meterAt('2026-05-01T10:00:00Z');
    for (let i = 0; i < 1000; i++) meter.add(i % 4 === 0 ? B : A, { [requestCounter('people')]: 1 });
    meter.add(A, { [requestCounter('events')]: 2 });
    advance(59_999);
    expect(meter.takeDue()).toEqual([]);
    advance(1);
    expect(meter.takeDue()).toEqual([
      { instanceKey: B, day: '2026-05-01', counts: { Req_people: 250 } },
      { instanceKey: A, day: '2026-05-01', counts: { Req_people: 750, Req_events: 2 } },
    ]);
    expect(meter.hasPending).toBe(false);
  });

  it('waits a full interval after each flush, and writes nothing for an idle environment', () => {
    const { meter, advance } = meterAt('2026-05-01T10:00:00Z');
    advance(120_000);
    expect(meter.isDue()).toBe(false);
    meter.add(A, { Req_people: 1 });
    expect(meter.takeDue()).toHaveLength(1);
    meter.add(A, { Req_people: 1 });
    advance(30_000);
    expect(meter.takeDue()).toEqual([]);
    advance(30_000);
    expect(meter.takeDue()).toEqual([{ instanceKey: A, day: '2026-05-01', counts: { Req_people: 1 } }]);
  });

  it('splits counts at UTC midnight', () => {
    const { meter, advance } = meterAt('2026-05-01T23:59:30Z');
    meter.add(A, { Req_token: 1 });
    advance(45_000);
    meter.add(A, { Req_token: 1 });
    advance(15_000);
    expect(meter.takeDue()).toEqual([
      { instanceKey: A, day: '2026-05-01', counts: { Req_token: 1 } },
      { instanceKey: A, day: '2026-05-02', counts: { Req_token: 1 } },
    ]);
  });

  it('keeps counts that could not be written for the next flush, added to the new ones', () => {
    const { meter, advance } = meterAt('2026-05-01T10:00:00Z');
    meter.add(A, { EventsPublished: 3 });
    advance(60_000);
    const failed = meter.takeDue();
    meter.add(A, { EventsPublished: 1, ObjectsCreated: 2 });
    meter.putBack(failed);
    advance(60_000);
    expect(meter.takeDue()).toEqual([{ instanceKey: A, day: '2026-05-01', counts: { EventsPublished: 4, ObjectsCreated: 2 } }]);
  });

  it('ignores zero counts and a missing instance', () => {
    const { meter } = meterAt('2026-05-01T10:00:00Z', 0);
    meter.add(A, { Req_people: 0 });
    meter.add('', { Req_people: 1 });
    expect(meter.hasPending).toBe(false);
    expect(meter.takeDue()).toEqual([]);
  });

  it('flushes after every count with an interval of 0', () => {
    const { meter } = meterAt('2026-05-01T10:00:00Z', 0);
    meter.add(A, { Req_people: 1 });
    expect(meter.takeDue()).toHaveLength(1);
    meter.add(A, { Req_people: 1 });
    expect(meter.takeDue()).toHaveLength(1);
  });

  it('names UTC days', () => {
    expect(utcDay(Date.parse('2026-12-31T23:59:59.999Z'))).toBe('2026-12-31');
    expect(utcDay(Date.parse('2027-01-01T00:00:00+01:00'))).toBe('2026-12-31');
  });
});

/** A stream record of an item image (Lambda's shape: attribute values as DynamoDB JSON). */
function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', item: Record<string, unknown>, seq: string): DynamoDBRecord {
  const image: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) image[k] = Array.isArray(v) ? { L: v.map((s) => ({ S: s })) } : typeof v === 'number' ? { N: String(v) } : { S: v };
  return {
    eventID: seq,
    eventName,
    dynamodb: { SequenceNumber: seq, ...(eventName === 'REMOVE' ? { OldImage: image } : { NewImage: image }) } as DynamoDBRecord['dynamodb'],
  };
}
const object = (key: string, coll: string, instances: string[], doc: Record<string, unknown> = {}) => ({
  PK: `O#${key}`,
  SK: 'A',
  Key: key,
  Coll: coll,
  Instances: instances,
  Doc: JSON.stringify(doc),
});

describe('stream usage', () => {
  it("counts events, audit events, objects created and deleted under the item's own instance", () => {
    expect(usageOfStreamRecord(record('INSERT', object('e1', 'events', [A, B], { AppKey: 'x' }), '1'), SYSTEM_APP_KEY)).toEqual({ instanceKey: B, kind: 'event' });
    expect(usageOfStreamRecord(record('INSERT', object('e2', 'events', [A], { AppKey: SYSTEM_APP_KEY }), '2'), SYSTEM_APP_KEY)).toEqual({ instanceKey: A, kind: 'audit-event' });
    expect(usageOfStreamRecord(record('INSERT', { ...object('e3', 'events', [A]), PK: 'LIVE#e3' }, '3'), SYSTEM_APP_KEY)).toEqual({ instanceKey: A, kind: 'event' });
    expect(usageOfStreamRecord(record('INSERT', object('p1', 'people', [A]), '4'), SYSTEM_APP_KEY)).toEqual({ instanceKey: A, kind: 'object-created' });
    expect(usageOfStreamRecord(record('REMOVE', object('p1', 'people', [A]), '5'), SYSTEM_APP_KEY)).toEqual({ instanceKey: A, kind: 'object-deleted' });
  });

  it('ignores updates, expired events, and items that are not objects', () => {
    expect(usageOfStreamRecord(record('MODIFY', object('p1', 'people', [A]), '1'), SYSTEM_APP_KEY)).toBeUndefined();
    expect(usageOfStreamRecord(record('REMOVE', object('e1', 'events', [A]), '2'), SYSTEM_APP_KEY)).toBeUndefined();
    expect(usageOfStreamRecord(record('INSERT', { PK: `US#${A}`, SK: 'D#2026-05-01', Req_people: 1 }, '3'), SYSTEM_APP_KEY)).toBeUndefined();
    expect(usageOfStreamRecord(record('INSERT', { PK: `O#${A}`, SK: 'R#AccessLevel#x', Instances: [A] }, '4'), SYSTEM_APP_KEY)).toBeUndefined();
    expect(usageOfStreamRecord(record('INSERT', { PK: `U#${A}#card#1`, SK: 'A', Instances: [A] }, '5'), SYSTEM_APP_KEY)).toBeUndefined();
  });

  it('counts the records before the first failure only: the rest come back', () => {
    const { meter } = meterAt('2026-05-01T10:00:00Z', 0);
    const batch = ['1', '2', '3', '4'].map((seq) => record('INSERT', object(`e${seq}`, 'events', [A], { AppKey: 'x' }), seq));
    meterStreamBatch(meter, batch, { batchItemFailures: [{ itemIdentifier: '3' }] });
    expect(meter.takeDue()).toEqual([{ instanceKey: A, day: '2026-05-01', counts: { EventsPublished: 2 } }]);
    meterStreamBatch(meter, batch.slice(2), { batchItemFailures: [] });
    expect(meter.takeDue()).toEqual([{ instanceKey: A, day: '2026-05-01', counts: { EventsPublished: 2 } }]);
  });
});

describe('login outcome', () => {
  const form = (fields: Record<string, string>) => ({ rawBody: new URLSearchParams(fields).toString(), body: undefined });
  const password = form({ grant_type: 'password', username: 'admin', password: 'x', instance: 'Gatehouse' });

  it('counts a password grant refused for its credentials or a lockout as a failure', () => {
    for (const code of ['invalid_grant', 'incorrect_password', 'incorrect_tfacode', 'user_notfound', 'user_lockedout']) {
      expect(loginOutcome(password, 400, code)).toEqual({ failed: true });
    }
  });

  it('counts a successful password grant (field clients omit grant_type) as an attempt that did not fail', () => {
    expect(loginOutcome(password, 200, undefined)).toEqual({ failed: false });
    expect(loginOutcome(form({ username: 'admin', password: 'x', instance: 'Gatehouse' }), 200, undefined)).toEqual({ failed: false });
    expect(loginOutcome(password, 400, 'instance_not_found')).toEqual({ failed: false });
  });

  it('does not count a malformed request, an unknown client or a refresh grant', () => {
    expect(loginOutcome(form({ grant_type: 'client_credentials' }), 400, 'unsupported_grant_type')).toBeUndefined();
    expect(loginOutcome(password, 400, 'invalid_client')).toBeUndefined();
    expect(loginOutcome(form({ grant_type: 'refresh_token', refresh_token: 'r' }), 400, 'RefreshTokenTicketNotValid')).toBeUndefined();
    expect(loginOutcome({ rawBody: undefined, body: undefined }, 400, 'unsupported_grant_type')).toBeUndefined();
  });
});

describe('request metrics', () => {
  afterEach(() => vi.restoreAllMocks());

  /** The EMF lines written to stdout while `fn` runs (and its promise, when it returns one). */
  async function emfLines(fn: () => Promise<void> | undefined): Promise<Array<Record<string, any>>> {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      await fn();
    } finally {
      vi.restoreAllMocks();
    }
    return lines.flatMap((l) => l.split('\n')).filter((l) => l.includes('"_aws"')).map((l) => JSON.parse(l));
  }

  it('writes one EMF line per request with the service and Operation dimensions, never the tenant', async () => {
    const metrics = createRequestMetrics({ metrics: true }, 'people');
    const [line, ...rest] = await emfLines(() => metrics.record({ operation: 'list', status: 503, ms: 12.5, consumedCapacity: 1.5 }));
    expect(rest).toEqual([]);
    const cw = line!._aws.CloudWatchMetrics[0];
    expect(cw.Namespace).toBe('Gatehouse');
    expect(cw.Dimensions).toEqual([['service', 'Operation']]);
    expect(cw.Metrics.map((m: { Name: string; Unit: string }) => `${m.Name}:${m.Unit}`).sort()).toEqual(['ConsumedCapacity:Count', 'Errors:Count', 'Latency:Milliseconds', 'Requests:Count']);
    expect(line).toMatchObject({ service: 'people', Operation: 'list', Requests: 1, Errors: 1, Latency: 12.5, ConsumedCapacity: 1.5 });
  });

  it('adds LoginAttempts and LoginFailures with the service dimension only', async () => {
    const metrics = createRequestMetrics({ metrics: true }, 'token');
    const lines = await emfLines(() => metrics.record({ operation: 'token', status: 400, ms: 350, consumedCapacity: 3, login: { failed: true } }));
    expect(lines).toHaveLength(2);
    expect(lines[1]!._aws.CloudWatchMetrics[0].Dimensions).toEqual([['service']]);
    expect(lines[1]).toMatchObject({ service: 'token', LoginAttempts: 1, LoginFailures: 1 });
    expect(lines[1]).not.toHaveProperty('Operation');
  });

  it('writes nothing outside Lambda', async () => {
    const metrics = createRequestMetrics({ metrics: false }, 'people');
    expect(await emfLines(() => metrics.record({ operation: 'list', status: 200, ms: 1, consumedCapacity: 0 }))).toEqual([]);
  });

  it('loads Powertools Metrics with the first environment that emits, and writes the figures recorded meanwhile', async () => {
    const metrics = createRequestMetrics({ metrics: true }, 'people');
    // Recorded before this environment's metrics are ready (the import settles first): the promise writes it.
    let first: Promise<void> | undefined;
    const lines = await emfLines(() => {
      first = metrics.record({ operation: 'get', status: 200, ms: 3, consumedCapacity: 1 });
      return first;
    });
    expect(lines.map((l) => l.Operation)).toEqual(['get']);
    // Once loaded, a record writes before it returns, and returns nothing to wait for.
    const again = await emfLines(() => {
      const r = metrics.record({ operation: 'list', status: 200, ms: 4, consumedCapacity: 1 });
      expect(r).toBeUndefined();
      return r;
    });
    expect(again.map((l) => l.Operation)).toEqual(['list']);
  });
});
