/**
 * The contract of the access decision engine: the facts one decision reads (loaded from the
 * table by the caller) and the decision it answers. The engine itself (`decide`, schedule
 * evaluation in the reader's zone) is pure: no I/O, no clock, so a controller holding a
 * credential download can reach the same answer offline.
 */
import type { AccessMethod } from '../model/readers.ts';

/** An object as a decision names it: `{ Key, CommonName, Href }`. */
export interface ObjectRef {
  readonly Key: string;
  readonly CommonName: string | null;
  readonly Href: string;
}

/** The reason codes, in the order of the steps that give them (`Granted` and `FreeAccess` grant). */
export const REASONS = [
  'ReaderLockedDown',
  'FreeAccess',
  'CardNotFound',
  'InvalidFacilityCode',
  'CardDisabled',
  'CardNotYetActive',
  'CardExpired',
  'UseLimitReached',
  'InvalidPin',
  'NoAccessAtReader',
  'OutsideSchedule',
  'Granted',
] as const;
export type Reason = (typeof REASONS)[number];

// A reader's `AccessMethod` (0 card only, 2 card and PIN, 5 unlocked, 6 locked down) lives in the
// model, where the write schemas validate it.
export { ACCESS_METHODS, type AccessMethod } from '../model/readers.ts';

/** One `ScheduleDurationItem`, parsed: seconds from the start of the local day. */
export interface ScheduleWindow {
  /** Bit 0 = Sunday … bit 6 = Saturday. */
  readonly dayMask: number;
  /** 0 to 86 399. */
  readonly startSeconds: number;
  /** 1 to 86 400. */
  readonly durationSeconds: number;
  /** Bit n−1 = holiday type n (0 = none). */
  readonly holidayExceptions: number;
}

export interface ScheduleRule {
  readonly ref: ObjectRef;
  readonly isAlways: boolean;
  readonly windows: readonly ScheduleWindow[];
}

/** One entry of a `HolidayInfo`'s `HolidayDays` that applies to the reader's instance. */
export interface HolidayDay {
  /** `YYYY-MM-DD`, a local date. */
  readonly date: string;
  /** 1 to 366. */
  readonly numberOfDays: number;
  /** Bit n−1 = holiday type n. */
  readonly holidayTypes: number;
}

export interface ReaderFacts {
  readonly ref: ObjectRef;
  /** The reader's own mode (absent means 0). */
  readonly accessMethod: AccessMethod;
  readonly normalGrantAccessTime: number;
  readonly extendedGrantAccessTime: number;
  /** The IANA zone schedules are evaluated in (its controller's, else the nearest instance's, else `UTC`). */
  readonly timeZone: string;
  readonly door: ObjectRef | null;
  readonly controller: ObjectRef | null;
  /** A lockdown of the reader's folder or one above it (the doors issue), or null. */
  readonly lockdown: { readonly folder: ObjectRef } | null;
}

export interface CardFacts {
  readonly person: ObjectRef;
  readonly key: string;
  readonly encodedCardNumber: bigint;
  readonly facilityCode: string | number | null;
  readonly displayCardNumber: string | null;
  readonly isDisabled: boolean;
  /** ISO 8601 UTC instants or null (open). */
  readonly activeOn: string | null;
  readonly expiresOn: string | null;
  /** Never in an answer, an event or a log. */
  readonly pinCode: string | null;
  /** 0 = unlimited. */
  readonly originalUseCount: number;
  readonly currentUseCount: number;
  readonly extendedAccess: boolean;
  readonly lockdownExempt: boolean;
}

/** The card a read names: found (nearest instance first), or not, and whether the number is held under another facility code. */
export type CardLookup = { readonly card: CardFacts } | { readonly card: null; readonly heldUnderOtherFacilityCode: boolean };

/**
 * One level of the person that pairs this reader with schedules: from an `AccessLevel`
 * connection (no window) or a `ScheduledAccessLevel` one (its window: `activeOn` included,
 * `expiresOn` excluded).
 */
export interface LevelGrant {
  readonly level: ObjectRef;
  readonly window: { readonly activeOn: string | null; readonly expiresOn: string | null } | null;
  /** The schedules this level pairs the reader with (entries and Reader × Schedule connections). */
  readonly schedules: readonly ScheduleRule[];
}

export interface DecisionFacts {
  readonly at: Date;
  /**
   * The card number and facility code the read named (added for the engine's messages: a card
   * that is not found is named by them). Optional: without it a missing card reads "The card".
   */
  readonly requested?: { readonly encodedCardNumber: bigint | string; readonly facilityCode: string | number | null };
  readonly reader: ReaderFacts;
  readonly lookup: CardLookup;
  readonly pinCode: string | null;
  /** Every level of the card's person pairing this reader (windows not yet applied: the engine applies them at `at`). */
  readonly grants: readonly LevelGrant[];
  /** The holidays of the reader's instance and the instances above it. */
  readonly holidays: readonly HolidayDay[];
}

/** One step of the decision, as a person reads it. */
export interface Check {
  readonly Step: 'ReaderMode' | 'Card' | 'CardState' | 'Pin' | 'AccessLevel' | 'Schedule';
  /** False for a step that was not evaluated, or that failed. */
  readonly Passed: boolean;
  /**
   * Whether the step was evaluated. Every step that can be is, even after the one that decided
   * (a troubleshooter sees every problem at once); a step that cannot be (no card, so no person
   * and no levels; no card needed at an unlocked reader) is listed with `Evaluated: false`.
   */
  readonly Evaluated: boolean;
  /** What the step found, in words (never a PIN). */
  readonly Found: string;
}

/** What the engine answers; the caller adds the objects' links to make `AccessDecisionInfo`. */
export interface Decision {
  readonly granted: boolean;
  readonly reason: Reason;
  /** A readable sentence, e.g. "Card 4242 of Jane Doe expired on 2026-10-01". */
  readonly message: string;
  /** UTC. */
  readonly at: string;
  /** The reader's local time with its offset, e.g. `2026-11-27T09:30:00-05:00`. */
  readonly localTime: string;
  readonly timeZone: string;
  /** Strike seconds when granted (extended for an `ExtendedAccess` card), else null. */
  readonly strikeSeconds: number | null;
  readonly accessLevel: ObjectRef | null;
  readonly schedule: ObjectRef | null;
  readonly checks: readonly Check[];
}
