/**
 * The size of an item as DynamoDB bills it, and the write units that size costs: what the cost
 * floors of the bench (`capacity`) and `docs/architecture.md` are stated in.
 *
 * DynamoDB's rules (Developer Guide, "Item sizes and formats"): an item is the sum of its
 * attributes, each the UTF-8 length of its name plus the size of its value: a string its UTF-8
 * length, a binary its length, a number 1 byte per pair of digits (aligned on the decimal point) plus 1, a boolean or
 * null 1 byte, a list or map 3 bytes plus 1 byte per element plus its elements (a map's entries
 * count their names), a set the sum of its elements. A write costs one unit per started KB of the
 * larger of the old and new item, on the table and again on each index whose keys the item has
 * (the indexes here project every attribute). The unit test checks these figures against the
 * units DynamoDB Local reports.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { TABLE } from './table.ts';

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * A number's size: DynamoDB stores its digits in pairs aligned on the decimal point (base 100),
 * without leading or trailing zero pairs, plus 1 byte, and 1 more for a negative number; zero is 1.
 */
function numberSize(text: string): number {
  const negative = text.startsWith('-');
  const [mantissa = '', exponent = '0'] = text.replace(/^[-+]/, '').toLowerCase().split('e');
  const [whole = '', fraction = ''] = mantissa.split('.');
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  const int = point <= 0 ? '' : digits.slice(0, point).padEnd(point, '0');
  const frac = point <= 0 ? '0'.repeat(-point) + digits : digits.slice(point);
  const aligned = (int.length % 2 ? '0' : '') + int + frac + (frac.length % 2 ? '0' : '');
  const pairs = aligned.replace(/^(00)+/, '').replace(/(00)+$/, '').length / 2;
  if (pairs === 0) return 1;
  return pairs + 1 + (negative ? 1 : 0);
}

function valueSize(v: AttributeValue): number {
  if (v.S !== undefined) return utf8(v.S);
  if (v.N !== undefined) return numberSize(v.N);
  if (v.B !== undefined) return v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.L !== undefined) return 3 + v.L.reduce((s, e) => s + 1 + valueSize(e), 0);
  if (v.M !== undefined) return 3 + Object.entries(v.M).reduce((s, [k, e]) => s + 1 + utf8(k) + valueSize(e), 0);
  if (v.SS !== undefined) return v.SS.reduce((s, e) => s + utf8(e), 0);
  if (v.NS !== undefined) return v.NS.reduce((s, e) => s + numberSize(e), 0);
  if (v.BS !== undefined) return v.BS.reduce((s, e) => s + e.length, 0);
  return 0;
}

/** The size in bytes DynamoDB gives an item (plain values, marshalled as the table's client does). */
export function itemSize(item: Record<string, unknown>): number {
  const attrs = marshall(item, { removeUndefinedValues: true, convertEmptyValues: false }) as Record<string, AttributeValue>;
  return Object.entries(attrs).reduce((s, [k, v]) => s + utf8(k) + valueSize(v), 0);
}

/** The indexes of the table an item is written to: those whose partition and sort key it has. */
export function indexesOf(item: Record<string, unknown>): string[] {
  return TABLE.indexes.filter((ix) => item[ix.partitionKey] !== undefined && item[ix.sortKey] !== undefined).map((ix) => ix.name);
}

/**
 * The write units of writing `item` (to an absent key or over one no larger): one per started KB,
 * on the table and on each index it is in. A transactional write costs twice this.
 */
export function writeUnits(item: Record<string, unknown>): number {
  return Math.ceil(itemSize(item) / 1024) * (1 + indexesOf(item).length);
}
