/**
 * The console's events CSV (console/src/pages/events-csv.ts): RFC 4180 quoting and the guard
 * against formula injection, on the text the "Export CSV" button downloads.
 */
import { describe, expect, it } from 'vitest';
import { CSV_COLUMNS, csvCell, eventsCsv, type EventRow } from '../../console/src/pages/events-csv.ts';

const row = (over: Partial<EventRow> = {}): EventRow => ({
  occurredOn: '2026-11-20T10:00:00.000Z',
  priority: 20,
  type: 'Access Denied',
  message: 'Denied at the front door',
  related: 'Reader: Front',
  requiresAcknowledgement: true,
  acknowledged: '',
  folder: 'Site A',
  key: '0123456789abcdef01234567',
  ...over,
});

describe('the events CSV', () => {
  it('quotes fields holding a comma, a quote or a line break, and doubles quotes inside', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\rlf')).toBe('"cr\rlf"');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(null)).toBe('');
    expect(csvCell(7)).toBe('7');
  });

  it('keeps text that a spreadsheet would run as a formula as text', () => {
    for (const start of ['=', '+', '-', '@', '\t']) expect(csvCell(`${start}SUM(A1:A9)`)).toBe(`'${start}SUM(A1:A9)`);
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvCell('\rcmd')).toBe(`"'\rcmd"`);
    // Numbers are numbers: a negative one is not text a person wrote.
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell('a=b')).toBe('a=b');
  });

  it('writes a header line and a line per event, each ended by CRLF', () => {
    const text = eventsCsv([row(), row({ message: 'He said, "open"', priority: undefined, requiresAcknowledgement: false, acknowledged: 'alice 2026-11-20T10:05:00.000Z' })]);
    const lines = text.split('\r\n');
    expect(lines).toEqual([
      CSV_COLUMNS.join(','),
      '2026-11-20T10:00:00.000Z,20,Access Denied,Denied at the front door,Reader: Front,yes,,Site A,0123456789abcdef01234567',
      '2026-11-20T10:00:00.000Z,,Access Denied,"He said, ""open""",Reader: Front,no,alice 2026-11-20T10:05:00.000Z,Site A,0123456789abcdef01234567',
      '',
    ]);
    expect(eventsCsv([])).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
  });
});
