/**
 * The shapes the People pages read and write, and the conversions they need: JSON parsed without
 * losing a 64-bit card number's digits (its cards go back whole in a PUT), a scheduled level's
 * window out of its link's `MetaDataBson`, and the date-time inputs' local values. No call and no
 * browser API here (the reads are in people-reads.ts): the unit tests run it under Node.
 */

/** A card number as read: a number, the exact digits of one beyond 2^53, or text a client stored. */
export type CardNumber = number | string | RawNumber;

/** `JSON.rawJSON`'s value: serialized as its digits, as they were read. */
interface RawNumber {
  readonly rawJSON: string;
}

export interface Card {
  readonly Key?: string;
  readonly EncodedCardNumber?: CardNumber | null;
  readonly DisplayCardNumber?: string | null;
  readonly FacilityCode?: number | string | null;
  readonly ActiveOn?: string | null;
  readonly ExpiresOn?: string | null;
  readonly IsDisabled?: boolean | null;
  readonly LockdownExempt?: boolean | null;
  readonly PinCode?: string | null;
  readonly [field: string]: unknown;
}

export interface Address {
  readonly $type?: string;
  readonly [field: string]: unknown;
}

export interface ObjectLink {
  readonly Relation?: string;
  readonly LinkedObjectKey?: string;
  readonly CommonName?: string | null;
  readonly Href?: string | null;
  readonly MetaDataBson?: string | number[] | null;
}

export interface Person {
  readonly Key: string;
  readonly Href: string;
  readonly CommonName?: string | null;
  readonly GivenName?: string | null;
  readonly Surname?: string | null;
  readonly ConcurrencyVersion?: number | null;
  readonly Addresses?: readonly Address[] | null;
  readonly CardAssignments?: readonly Card[] | null;
  readonly ObjectLinks?: readonly ObjectLink[] | null;
  readonly [field: string]: unknown;
}

type RawJson = (text: string) => RawNumber;
/** Chromium 114+, Firefox 135+, Safari 18.4+; older browsers keep such a number as its text. */
const rawJSON = (JSON as unknown as { rawJSON?: RawJson }).rawJSON;

/** A number as JSON will send it: digits beyond 2^53 exactly (raw, or as text without `JSON.rawJSON`). */
export function cardNumberValue(digits: string): CardNumber {
  const n = Number(digits);
  if (Number.isSafeInteger(n)) return n;
  return rawJSON ? rawJSON(digits) : digits;
}

/** A card number's digits for display and comparison. */
export function cardNumberText(v: CardNumber | null | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return v.rawJSON;
  return String(v);
}

/** JSON.parse that keeps an integer beyond 2^53 digit for digit (the reviver's `source`, where the browser gives it). */
export function parseLossless(text: string): unknown {
  return JSON.parse(text, function (_key, value: unknown, context?: { source?: string }) {
    if (typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && /^-?\d+$/.test(context.source)) {
      return rawJSON ? rawJSON(context.source) : context.source;
    }
    return value;
  });
}

/** A scheduled access level's window: ISO date-times or null. */
export interface Window {
  readonly activeOn: string | null;
  readonly expiresOn: string | null;
}

const OPEN: Window = { activeOn: null, expiresOn: null };

/**
 * The window of a `ScheduledAccessLevel` link: its `MetaDataBson` is base64 (or bytes) of the BSON
 * document `{ActiveOn: Date|null, ExpiresOn: Date|null}` (docs/api.md). Only that document's
 * element types are read (date, string, null); anything else reads as an open bound.
 */
export function windowOfLink(link: ObjectLink): Window {
  const meta = link.MetaDataBson;
  if (!meta) return OPEN;
  let bytes: Uint8Array;
  try {
    bytes = typeof meta === 'string' ? Uint8Array.from(atob(meta), (c) => c.charCodeAt(0)) : Uint8Array.from(meta);
  } catch {
    return OPEN;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, string | null> = {};
  let at = 4;
  while (at < bytes.length - 1) {
    const type = bytes[at++];
    const nameEnd = bytes.indexOf(0, at);
    if (type === undefined || nameEnd < 0) break;
    const name = new TextDecoder().decode(bytes.subarray(at, nameEnd));
    at = nameEnd + 1;
    if (type === 0x09) {
      out[name] = new Date(Number(view.getBigInt64(at, true))).toISOString();
      at += 8;
    } else if (type === 0x02) {
      const len = view.getInt32(at, true);
      out[name] = new TextDecoder().decode(bytes.subarray(at + 4, at + 3 + len));
      at += 4 + len;
    } else if (type === 0x0a || type === 0x06) out[name] = null;
    else break;
  }
  return { activeOn: out.ActiveOn ?? null, expiresOn: out.ExpiresOn ?? null };
}

/** Whether `now` lies in a window (from included, until excluded). */
export function windowHolds(w: Window, now = Date.now()): boolean {
  return (w.activeOn === null || Date.parse(w.activeOn) <= now) && (w.expiresOn === null || now < Date.parse(w.expiresOn));
}

/** The value of a `datetime-local` input for an ISO instant, in the browser's zone. */
export function localInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The ISO instant of a `datetime-local` input's value (the browser's zone), or null when empty. */
export function isoOfLocal(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The card's state now, in words. */
export function cardState(card: Card, now = Date.now()): 'Active' | 'Disabled' | 'Not yet active' | 'Expired' {
  if (card.IsDisabled === true) return 'Disabled';
  if (card.ActiveOn && Date.parse(card.ActiveOn) > now) return 'Not yet active';
  if (card.ExpiresOn && Date.parse(card.ExpiresOn) <= now) return 'Expired';
  return 'Active';
}

/** An error's API code (`ConcurrencyConflict`, `CardIsAlreadyAssigned`...), if it has one. */
export function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
