/**
 * The access decision engine: from the facts of one card read (loaded by the caller) to the
 * decision and its explanation. Pure: no I/O and no clock, so an API call, the card-read command,
 * the troubleshooting queries and, later, a controller working offline reach the same answer.
 *
 * The steps of issue 36, in order; the first that fails gives the reason:
 *
 * 1. ReaderMode: locked down (`AccessMethod` 6 or a lockdown above the reader) → `ReaderLockedDown`
 *    unless the card would otherwise be granted and is `LockdownExempt`; unlocked (5) → `FreeAccess`.
 * 2. Card: `CardNotFound`, or `InvalidFacilityCode` when the number is held only under another code.
 * 3. CardState: `CardDisabled`, `CardNotYetActive`, `CardExpired`, `UseLimitReached`.
 * 4. Pin (card-and-PIN readers): `InvalidPin`.
 * 5. AccessLevel: `NoAccessAtReader`.
 * 6. Schedule: `OutsideSchedule`.
 * 7. `Granted`.
 *
 * `Checks` lists the six steps. Every step that can be evaluated is, even after the deciding one,
 * so a denial shows every problem at once; those that cannot be (no card: no person, no levels;
 * an unlocked reader needs no card) are listed as not evaluated.
 */
import type { Check, CardFacts, Decision, DecisionFacts, HolidayDay, LevelGrant, ObjectRef, Reason, ReaderFacts, ScheduleRule } from './decision.ts';
import { activeBy, formatLocalTime, localClock, type ActiveBy } from './schedule.ts';

/** A card's own state at an instant: `Active`, or the reason of step 3 that denies it. */
export type CardState = 'Active' | 'CardDisabled' | 'CardNotYetActive' | 'CardExpired' | 'UseLimitReached';

const instant = (iso: string | null): number => (iso === null ? Number.NaN : Date.parse(iso));

/**
 * The state of a card at `at`: disabled first, then its validity (`ActiveOn` included,
 * `ExpiresOn` excluded), then its use limit (`OriginalUseCount` 0 is unlimited).
 */
export function cardState(card: CardFacts, at: Date): CardState {
  if (card.isDisabled) return 'CardDisabled';
  const t = at.getTime();
  if (t < instant(card.activeOn)) return 'CardNotYetActive';
  if (t >= instant(card.expiresOn)) return 'CardExpired';
  if (card.originalUseCount > 0 && card.currentUseCount >= card.originalUseCount) return 'UseLimitReached';
  return 'Active';
}

/** Whether a level's window (a `ScheduledAccessLevel`'s; none for an `AccessLevel`) contains `at`. */
function grantActiveAt(grant: LevelGrant, at: Date): boolean {
  if (grant.window === null) return true;
  const t = at.getTime();
  return !(t < instant(grant.window.activeOn)) && !(t >= instant(grant.window.expiresOn));
}

/** The levels of `grants` that apply at `at` and pair the reader with at least one schedule. */
export function grantsAt(grants: readonly LevelGrant[], at: Date): LevelGrant[] {
  return grants.filter((g) => g.schedules.length > 0 && grantActiveAt(g, at));
}

/** The level and schedule that grant a reader at an instant. */
export interface GrantingPair {
  readonly level: ObjectRef;
  readonly schedule: ObjectRef;
  readonly by: ActiveBy;
}

/**
 * The first (in the order given: levels, then each level's schedules) level applying at `at`
 * whose schedule is active at the reader's local time, or null. The troubleshooting queries ask
 * this of each person or reader; `decide` asks it once.
 */
export function grantingPair(grants: readonly LevelGrant[], holidays: readonly HolidayDay[], at: Date, timeZone: string): GrantingPair | null {
  for (const g of grantsAt(grants, at)) {
    for (const s of g.schedules) {
      const by = activeBy(s, holidays, at, timeZone);
      if (by) return { level: g.level, schedule: s.ref, by };
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Words.

const nameOf = (ref: ObjectRef): string => ref.CommonName ?? ref.Key;
const readerName = (r: ReaderFacts): string => `reader ${nameOf(r.ref)}`;
const cardName = (c: CardFacts): string => `card ${c.displayCardNumber ?? String(c.encodedCardNumber)} of ${nameOf(c.person)}`;
const requestedName = (facts: DecisionFacts): string => (facts.requested ? `card ${String(facts.requested.encodedCardNumber)}` : 'the card');
const capitalized = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** An instant as the reader's people read it: the local date when it is local midnight, else the local time with its offset. */
function localInstant(iso: string, timeZone: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const local = formatLocalTime(at, timeZone);
  return local.slice(11, 19) === '00:00:00' && !local.slice(19).startsWith('.') ? local.slice(0, 10) : local;
}

const hms = (seconds: number): string => {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${p(Math.floor(seconds / 3600))}:${p(Math.floor(seconds / 60) % 60)}:${p(seconds % 60)}`;
};

function describeBy(by: ActiveBy): string {
  if (by.always) return 'always active';
  const end = by.window.startSeconds + by.window.durationSeconds;
  const weekday = WEEKDAYS[new Date(`${by.day}T00:00:00Z`).getUTCDay()];
  return `active from ${hms(by.window.startSeconds)} to ${end >= 86_400 ? `${hms(end - 86_400)} the next day` : hms(end)} on ${weekday} ${by.day}`;
}

const MODES: Readonly<Record<number, string>> = { 0: 'card only', 2: 'card and PIN', 5: 'unlocked, free passage', 6: 'locked down' };

function describeMode(r: ReaderFacts): string {
  const mode = `${capitalized(MODES[r.accessMethod] ?? `access method ${r.accessMethod}`)} (AccessMethod ${r.accessMethod})`;
  return r.lockdown ? `${mode}; locked down by the lockdown of folder ${nameOf(r.lockdown.folder)}` : mode;
}

function describeUses(c: CardFacts): string {
  return c.originalUseCount > 0 ? `; used ${c.currentUseCount} of ${c.originalUseCount} times` : '';
}

function describeCardState(c: CardFacts, state: CardState, zone: string): string {
  const name = capitalized(cardName(c));
  switch (state) {
    case 'CardDisabled':
      return `${name} is disabled`;
    case 'CardNotYetActive':
      return `${name} is not active until ${localInstant(c.activeOn!, zone)}`;
    case 'CardExpired':
      return `${name} expired on ${localInstant(c.expiresOn!, zone)}`;
    case 'UseLimitReached':
      return `${name} has been used ${c.currentUseCount} of ${c.originalUseCount} times`;
    case 'Active': {
      const from = c.activeOn ? ` from ${localInstant(c.activeOn, zone)}` : '';
      const until = c.expiresOn ? ` until ${localInstant(c.expiresOn, zone)}` : '';
      return `${name} is active${from}${until}${describeUses(c)}`;
    }
  }
}

function describeGrant(g: LevelGrant, zone: string): string {
  const schedules = g.schedules.length > 0 ? `schedules ${g.schedules.map((s) => nameOf(s.ref)).join(', ')}` : 'no schedule';
  if (!g.window) return `${nameOf(g.level)} (${schedules})`;
  const from = g.window.activeOn ? ` from ${localInstant(g.window.activeOn, zone)}` : '';
  const until = g.window.expiresOn ? ` until ${localInstant(g.window.expiresOn, zone)}` : '';
  return `${nameOf(g.level)} (${schedules}; scheduled${from}${until})`;
}

/** Compares PINs in time independent of where they differ (a PIN is a secret, if a short one). */
function samePin(sent: string, held: string): boolean {
  let diff = sent.length ^ held.length;
  // `sent` is not empty (the caller checks): index it modulo its length so every length takes as long.
  for (let i = 0; i < held.length; i++) diff |= held.charCodeAt(i) ^ sent.charCodeAt(i % sent.length);
  return diff === 0;
}

// ---------------------------------------------------------------------------------------------
// The decision.

const notEvaluated = (Step: Check['Step'], why: string): Check => ({ Step, Passed: false, Evaluated: false, Found: `Not evaluated: ${why}.` });
const check = (Step: Check['Step'], Passed: boolean, Found: string): Check => ({ Step, Passed, Evaluated: true, Found: `${Found}.` });

/** What the card steps (2 to 6) found, the reader's mode aside. */
interface CardOutcome {
  /** The reason of the first failing card step, or `Granted`. */
  readonly reason: Reason;
  readonly message: string;
  readonly checks: readonly Check[];
  readonly card: CardFacts | null;
  readonly pair: GrantingPair | null;
}

function evaluateCard(facts: DecisionFacts, zone: string): CardOutcome {
  const { reader, at } = facts;
  const checks: Check[] = [];
  const failures: Array<{ reason: Reason; message: string }> = [];
  const fail = (reason: Reason, message: string): void => void failures.push({ reason, message });

  // 2. The card.
  const { lookup } = facts;
  if (lookup.card === null) {
    const reason: Reason = lookup.heldUnderOtherFacilityCode ? 'InvalidFacilityCode' : 'CardNotFound';
    const code = facts.requested?.facilityCode;
    const found = lookup.heldUnderOtherFacilityCode
      ? `${capitalized(requestedName(facts))} is held here only under another facility code${code === null || code === undefined ? ' (none was given)' : ` than ${String(code)}`}`
      : `${capitalized(requestedName(facts))}${code === null || code === undefined ? '' : ` (facility code ${String(code)})`} is not held by anyone here`;
    checks.push(check('Card', false, found));
    const why = 'no card was found';
    checks.push(notEvaluated('CardState', why), notEvaluated('Pin', why), notEvaluated('AccessLevel', why), notEvaluated('Schedule', why));
    return { reason, message: found, checks, card: null, pair: null };
  }
  const card = lookup.card;
  checks.push(check('Card', true, capitalized(cardName(card))));

  // 3. Its state.
  const state = cardState(card, at);
  const stateText = describeCardState(card, state, zone);
  checks.push(check('CardState', state === 'Active', stateText));
  if (state !== 'Active') fail(state, stateText);

  // 4. The PIN.
  if (reader.accessMethod !== 2) {
    checks.push(check('Pin', true, `Not required at ${readerName(reader)} (${MODES[reader.accessMethod] ?? 'card only'})`));
  } else if (card.pinCode === null) {
    checks.push(check('Pin', false, `${capitalized(cardName(card))} has no PIN; ${readerName(reader)} needs card and PIN`));
    fail('InvalidPin', `${capitalized(cardName(card))} has no PIN and ${readerName(reader)} needs card and PIN`);
  } else if (facts.pinCode === null || facts.pinCode === '') {
    checks.push(check('Pin', false, `No PIN was entered; ${readerName(reader)} needs card and PIN`));
    fail('InvalidPin', `No PIN was entered with ${cardName(card)} at ${readerName(reader)}`);
  } else if (!samePin(facts.pinCode, card.pinCode)) {
    checks.push(check('Pin', false, 'The PIN entered is wrong'));
    fail('InvalidPin', `Wrong PIN entered with ${cardName(card)} at ${readerName(reader)}`);
  } else {
    checks.push(check('Pin', true, 'The PIN entered is correct'));
  }

  // 5. The person's levels at that instant.
  const person = nameOf(card.person);
  const applying = grantsAt(facts.grants, at);
  const others = facts.grants.filter((g) => !applying.includes(g));
  const otherText = others.length > 0 ? `; granting nothing now: ${others.map((g) => describeGrant(g, zone)).join('; ')}` : '';
  let pair: GrantingPair | null = null;
  if (applying.length === 0) {
    const found = `No level of ${person} pairs ${readerName(reader)} with a schedule at this time${otherText}`;
    checks.push(check('AccessLevel', false, found));
    fail('NoAccessAtReader', `${person} has no access level for ${readerName(reader)}${others.length > 0 ? ' at this time' : ''}`);
    checks.push(notEvaluated('Schedule', 'no level pairs this reader with a schedule'));
  } else {
    checks.push(check('AccessLevel', true, `${capitalized(readerName(reader))} is granted to ${person} by ${applying.map((g) => describeGrant(g, zone)).join('; ')}${otherText}`));

    // 6. Their schedules at the reader's local time.
    pair = grantingPair(applying, facts.holidays, at, zone);
    const local = localTimeWithDay(at, zone);
    if (pair) {
      checks.push(check('Schedule', true, `Schedule ${nameOf(pair.schedule)} of level ${nameOf(pair.level)} is ${describeBy(pair.by)}; local time ${local}`));
    } else {
      const names = [...new Set(applying.flatMap((g) => g.schedules.map((s: ScheduleRule) => nameOf(s.ref))))].join(', ');
      checks.push(check('Schedule', false, `None of the schedules ${names} is active at ${local}`));
      fail('OutsideSchedule', `${person} may use ${readerName(reader)} only within schedules ${names}, not at ${local}`);
    }
  }

  const first = failures[0];
  if (first) return { reason: first.reason, message: first.message, checks, card, pair: null };
  return {
    reason: 'Granted',
    message: `${capitalized(cardName(card))} granted at ${readerName(reader)} by level ${nameOf(pair!.level)}, schedule ${nameOf(pair!.schedule)}`,
    checks,
    card,
    pair,
  };
}

function localTimeWithDay(at: Date, zone: string): string {
  const weekday = WEEKDAYS[new Date(localClock(at, zone).wall).getUTCDay()];
  return `${formatLocalTime(at, zone)} (${weekday}, ${zone})`;
}

/**
 * Decides one card read at `facts.at` (see the module comment for the steps). The answer never
 * holds the PIN, the one sent or the card's.
 */
export function decide(facts: DecisionFacts): Decision {
  const { reader, at } = facts;
  const zone = reader.timeZone;
  const base = { at: at.toISOString(), localTime: formatLocalTime(at, zone), timeZone: zone };
  const locked = reader.accessMethod === 6 || reader.lockdown !== null;

  // An unlocked reader needs no card (a lockdown overrides it).
  if (!locked && reader.accessMethod === 5) {
    const why = `${readerName(reader)} is unlocked and needs no card`;
    return {
      ...base,
      granted: true,
      reason: 'FreeAccess',
      message: `${capitalized(readerName(reader))} is unlocked: free passage`,
      strikeSeconds: null,
      accessLevel: null,
      schedule: null,
      checks: [
        check('ReaderMode', true, describeMode(reader)),
        ...(['Card', 'CardState', 'Pin', 'AccessLevel', 'Schedule'] as const).map((s) => notEvaluated(s, why)),
      ],
    };
  }

  const outcome = evaluateCard(facts, zone);
  const card = outcome.card;
  const granted = outcome.reason === 'Granted' && (!locked || card!.lockdownExempt);

  let modeCheck: Check;
  let reason: Reason = outcome.reason;
  let message = outcome.message;
  if (!locked) {
    modeCheck = check('ReaderMode', true, describeMode(reader));
  } else if (granted) {
    modeCheck = check('ReaderMode', true, `${describeMode(reader)}; ${cardName(card!)} is lockdown exempt`);
    message = `${message} (locked down; the card is lockdown exempt)`;
  } else {
    const exempt = card === null ? '' : card.lockdownExempt ? `; ${cardName(card)} is lockdown exempt but not otherwise granted` : `; ${cardName(card)} is not lockdown exempt`;
    modeCheck = check('ReaderMode', false, `${describeMode(reader)}${exempt}`);
    reason = 'ReaderLockedDown';
    const by = reader.lockdown ? ` by the lockdown of folder ${nameOf(reader.lockdown.folder)}` : '';
    message = `${capitalized(readerName(reader))} is locked down${by}`;
  }

  const pair = granted ? outcome.pair : null;
  return {
    ...base,
    granted,
    reason,
    message,
    strikeSeconds: granted ? (card!.extendedAccess ? reader.extendedGrantAccessTime : reader.normalGrantAccessTime) : null,
    accessLevel: pair?.level ?? null,
    schedule: pair?.schedule ?? null,
    checks: [modeCheck, ...outcome.checks],
  };
}
