/**
 * The events list as CSV (RFC 4180): CRLF line ends, a field quoted when it holds a comma, a quote
 * or a line break, a quote doubled inside a quoted field. A spreadsheet runs a cell that starts with
 * `=`, `+`, `-`, `@` (or a tab or carriage return, which some strip first) as a formula, and an
 * event's message or a related object's name is text anyone who may publish or name an object
 * wrote: such a cell gets a leading `'` so it stays text (OWASP's CSV injection advice).
 *
 * No DOM here: the page turns the text into a download.
 */

/** What one event row shows, already resolved to text. */
export interface EventRow {
  readonly occurredOn: string;
  readonly priority: number | undefined;
  readonly type: string;
  readonly message: string;
  readonly related: string;
  readonly requiresAcknowledgement: boolean;
  readonly acknowledged: string;
  readonly folder: string;
  readonly key: string;
}

/** The header line's names, in column order. */
export const CSV_COLUMNS = ['Occurred (UTC)', 'Priority', 'Type', 'Message', 'Related objects', 'Requires acknowledgement', 'Acknowledged', 'Folder', 'Key'] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell: neutralised against formulas, then quoted when RFC 4180 needs it. */
export function csvCell(value: string | number | boolean | undefined | null): string {
  let text = value === undefined || value === null ? '' : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The whole file: a header line, then a line per row, each ended by CRLF. */
export function eventsCsv(rows: readonly EventRow[]): string {
  const lines = [CSV_COLUMNS.map(csvCell).join(',')];
  for (const r of rows) {
    lines.push(
      [r.occurredOn, r.priority ?? '', r.type, r.message, r.related, r.requiresAcknowledgement ? 'yes' : 'no', r.acknowledged, r.folder, r.key]
        .map(csvCell)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
