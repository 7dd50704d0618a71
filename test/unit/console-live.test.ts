/**
 * The pure parts of the console's live events and alarms: event data decoded from its base64
 * BSON as the service writes it (64-bit card numbers exact, dates, nested objects, bad data named
 * rather than thrown), and how a priority reads (tint and words); and the benchmark's console rows.
 */
import { Long, serialize } from 'bson';
import { describe, expect, it } from 'vitest';
import { decodeEventData } from '../../console/src/event-data.ts';
import { PRIORITY_LEVELS, priorityClass, priorityText } from '../../console/src/event-priority.ts';
import { RESULT_KEYS, type ConsoleBench, type Results } from '../../bench/results.ts';
import { rowsOf } from '../../bench/results-table.ts';
import { unmeasured } from '../../bench/unmeasured.ts';

const b64 = (doc: Record<string, unknown>) => Buffer.from(serialize(doc)).toString('base64');

describe('decodeEventData', () => {
  it('decodes a card read result as the service writes it, 64-bit numbers digit for digit', () => {
    const at = new Date('2026-11-28T01:02:03.000Z');
    const data = decodeEventData(
      b64({
        Granted: false,
        Reason: 'CardNotFound',
        Reader: { Key: 'a'.repeat(24), CommonName: 'Lobby' },
        Person: null,
        EncodedCardNumber: Long.fromString('9223372036854775807'),
        FacilityCode: 12,
        MessageTimeUTC: at,
        Tags: ['x', 'y'],
      }),
    );
    expect(data).toEqual({
      Granted: false,
      Reason: 'CardNotFound',
      Reader: { Key: 'a'.repeat(24), CommonName: 'Lobby' },
      Person: null,
      EncodedCardNumber: '9223372036854775807',
      FacilityCode: 12,
      MessageTimeUTC: '2026-11-28T01:02:03.000Z',
      Tags: ['x', 'y'],
    });
  });

  it('is null without data and an Error (never a throw) for bytes that are not BSON', () => {
    expect(decodeEventData('')).toBeNull();
    expect(decodeEventData(null)).toBeNull();
    expect(decodeEventData(undefined)).toBeNull();
    const bad = decodeEventData(Buffer.from('not bson at all').toString('base64'));
    expect(bad).toBeInstanceOf(Error);
    expect((bad as Error).message).toMatch(/could not be decoded/);
  });
});

describe('priorities', () => {
  it('tints high from Access Denied (20) and critical from Lockdown Started (50), with words beside the number', () => {
    expect([0, 10, 15, 19].map(priorityClass)).toEqual([undefined, undefined, undefined, undefined]);
    expect([20, 30, 49].map(priorityClass)).toEqual(['p-high', 'p-high', 'p-high']);
    expect([50, 255].map(priorityClass)).toEqual(['p-critical', 'p-critical']);
    expect(priorityClass(undefined)).toBeUndefined();
    expect([10, 20, 50].map(priorityText)).toEqual(['10', '20 high', '50 critical']);
    expect(PRIORITY_LEVELS.map((l) => Number(l.value))).toEqual([0, 10, 20, 50]);
  });
});

describe('the benchmark\'s console rows', () => {
  const m = { mode: 'full' as const, startedAt: 'x', loadavgStart: [1], loadavgEnd: [1], wallMs: 1, node: 'v20', cpus: 2 };
  const none = Object.fromEntries(RESULT_KEYS.map((k) => [k, unmeasured[k]('because', m)])) as unknown as Results;

  it('says NOT MEASURED for both rows when the entry could not run (no Chromium)', () => {
    const rows = rowsOf(none).filter((r) => r.entry.startsWith('console.'));
    expect(rows.map((r) => [r.entry, r.verdict])).toEqual([
      ['console.firstLoad', 'NOT MEASURED'],
      ['console.burst', 'NOT MEASURED'],
    ]);
  });

  it('prints the measured figures and a verdict per row', () => {
    const console: ConsoleBench = {
      floor: null,
      ratio: null,
      goal: 'g',
      meetsGoal: false,
      note: 'missed: tasks',
      firstLoad: { bytes: 44_000, requests: 4, byType: { document: 1_000, script: 40_000 } },
      burst: {
        rate: 200,
        seconds: 10,
        publishSeconds: 10.1,
        published: 2_000,
        publishFailures: 0,
        publishedPerSecond: 199.5,
        received: 2_000,
        kept: 500,
        dropped: 1_500,
        longTasks: 2,
        longestTaskMs: 250,
        receivedAtMiddle: 520,
        heapBeforeBytes: 1_600_000,
        heapMiddleBytes: 4_000_000,
        heapAfterBytes: 4_100_000,
        heapGrowth: 1.025,
      },
      measured: m,
    };
    const rows = rowsOf({ ...none, console }).filter((r) => r.entry.startsWith('console.'));
    expect(rows[0]).toMatchObject({ entry: 'console.firstLoad', verdict: 'met' });
    expect(rows[0]!.figure).toContain('44000 B in 4 requests (document 1000, script 40000)');
    expect(rows[1]).toMatchObject({ entry: 'console.burst', verdict: 'missed', ratio: '1.025' });
    expect(rows[1]!.figure).toContain('2000 events in 10.1 s (199.5/s of 200/s asked for 10 s): 2000 counted, 500 kept, 1500 not kept; 2 tasks > 50 ms, longest 250 ms');
    expect(rows[1]!.figure).toContain('heap 1.6 / 4 / 4.1 MB');
  });
});
