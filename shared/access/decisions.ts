/**
 * Access decisions as the API makes them: `POST /api/f/<folder>/accessdecisions` and the card read
 * of the built-in `MercuryCommands` app (commands.ts). The facts are loaded by facts.ts, the
 * decision is the engine's (engine.ts, pure), and a recorded decision (a card read) publishes its
 * result event ("Access Granted" / "Access Denied" of the built-in `MercuryService` app) and
 * counts the use of a card with a use limit.
 *
 * Counting is atomic: the use is written into the person item on the condition that the person
 * is still at the version the decision read; a writer in between (another read of the same card)
 * makes the decision be made again on the person as it now is, so parallel reads of a card with n
 * uses left grant exactly n.
 */
import { writeCountedUse } from '../db/access-reads.ts';
import { putEvent } from '../db/events-repo.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { ApiError, ConditionFailed, serviceUnavailable, validationFailed } from '../errors.ts';
import { encodeBson } from '../bson-writer.ts';
import { builtinTypeInAlarm } from '../events/builtin-alarms.ts';
import { accessResultType } from '../events/builtin-apps.ts';
import { parseInstant } from '../events/posting.ts';
import { eventWrite } from '../events/publish.ts';
import { eventHref } from '../events/event-render.ts';
import { cardNumberInRange, cardsWithKeys } from '../model/card-assignments.ts';
import { LIMITS } from '../model/limits.ts';
import { newKey } from '../model/placement.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { typeTag } from '../model/type-tags.ts';
import { missIn } from '../objects/tenant-scope.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { outOfScope } from '../objects/object-errors.ts';
import type { Decision, DecisionFacts, ObjectRef } from './decision.ts';
import { decide } from './engine.ts';
import { factsWithState, readerState } from './reader-state.ts';
import { findCard, grantsAt, loadHolidays, loadReader, lookupOf, personLevels, refOf, type FoundCard, type LoadedReader } from './facts.ts';

/** A card read to decide: what `POST accessdecisions` and the card read command carry. */
export interface CardRead {
  readonly readerKey: string;
  /** Decimal digits (or the text a card number was stored as), never through a double. */
  readonly number: string;
  readonly facility: string | undefined;
  /** Never in an answer, an event or a log. */
  readonly pin: string | null;
  readonly at: Date;
}

const FIELDS = new Set(['ReaderKey', 'EncodedCardNumber', 'FacilityCode', 'PinCode', 'At', 'Record']);

/** A card number as sent (an integer, a 64-bit `bigint` or text), as text; 400 otherwise. */
export function cardNumberText(v: unknown, field: string, code = 'ValidationFailed'): string {
  if (typeof v === 'number' && !Number.isInteger(v)) throw new ApiError(400, code, `${field} must be an integer.`);
  if (typeof v !== 'number' && typeof v !== 'bigint' && !(typeof v === 'string' && v !== '' && v.length <= LIMITS.code)) {
    throw new ApiError(400, code, `${field} must be a card number (an integer, or its digits as a string).`);
  }
  if (!cardNumberInRange(v)) throw new ApiError(400, code, `${field} must be from 0 to 2^63-1.`);
  return typeof v === 'string' && /^\+?\d+$/.test(v) ? BigInt(v).toString() : String(v);
}

/** A facility code as sent (an integer or text), as text; undefined when absent. */
export function facilityText(v: unknown, field: string, code = 'ValidationFailed'): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'string' && v.length <= LIMITS.code) return v === '' ? undefined : v;
  throw new ApiError(400, code, `${field} must be an integer or a string.`);
}

/** A PIN as sent (digits as text or an integer), or null. */
export function pinText(v: unknown, field: string, code = 'ValidationFailed'): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' && /^\d{1,16}$/.test(v)) return v;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  throw new ApiError(400, code, `${field} must be digits.`);
}

/** The body of `POST accessdecisions`, checked strictly: unknown fields, a non-integer number, an `At` without a zone, a `Record` not boolean are 400. */
export function parseDecisionBody(body: unknown, now: Date): CardRead & { readonly record: boolean } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw validationFailed('The body must be an AccessDecisionRequest object.');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !FIELDS.has(k));
  if (unknown.length > 0) throw validationFailed(`Unknown field ${unknown[0]}: an AccessDecisionRequest has ${[...FIELDS].join(', ')}.`);
  if (typeof b.ReaderKey !== 'string' || !isObjectKey(b.ReaderKey.toLowerCase())) throw validationFailed('ReaderKey must be the 24-hex key of a reader.');
  if (b.Record !== undefined && typeof b.Record !== 'boolean') throw validationFailed('Record must be true or false.');
  return {
    readerKey: b.ReaderKey.toLowerCase(),
    number: cardNumberText(b.EncodedCardNumber, 'EncodedCardNumber'),
    facility: facilityText(b.FacilityCode, 'FacilityCode'),
    pin: pinText(b.PinCode, 'PinCode'),
    at: b.At === undefined || b.At === null ? now : parseInstant(b.At, 'At'),
    record: b.Record === true,
  };
}

/** True when `o` lies in the caller's instance or below it. */
export const inCallerScope = (ctx: Ctx, o: Pick<StoredObject, 'path'>): boolean => o.path.includes(ctx.principal.instanceKey);

/**
 * The reader `key` in the folder `folderKey` or below it, as a path names an object: 403 when the
 * folder is outside the caller's scope, 404 when no such reader is there.
 */
export async function readerIn(ctx: Ctx, folderKey: string, key: string): Promise<LoadedReader> {
  const loaded = isObjectKey(key) ? await loadReader(ctx, key) : null;
  if (!loaded || !(loaded.reader.folder === folderKey || loaded.reader.path.includes(folderKey))) return missIn(ctx, folderKey);
  if (!inCallerScope(ctx, loaded.reader)) throw outOfScope();
  return loaded;
}

/** The outcome of one decision: the engine's decision, and the card it read (null: none found). */
export interface Outcome {
  readonly decision: Decision;
  readonly found: FoundCard | null;
}

/** Decides a card read at a reader (not recorded). Warm: two waves of requests (see facts.ts). */
export async function evaluate(ctx: Ctx, loaded: LoadedReader, read: CardRead): Promise<Outcome> {
  const chain = loaded.reader.instances;
  // The reader's set mode and the lockdowns above it (doors issue) are read beside the card.
  const [card, holidays, state] = await Promise.all([findCard(ctx, chain, read.number, read.facility), loadHolidays(ctx, chain), readerState(ctx, loaded)]);
  const { grants } = card.found ? await grantsAt(ctx, personLevels(card.found.person), loaded.reader.key) : { grants: [] };
  const reader = factsWithState(loaded.facts, state, read.at);
  const facts: DecisionFacts = { at: read.at, reader, lookup: lookupOf(card), pinCode: read.pin, grants, holidays };
  return { decision: decide(facts), found: card.found };
}

/** How many times a recorded decision is made again when another writer changed the person first. */
const MAX_ATTEMPTS = 40;

/**
 * Decides a card read and records it: counts the use of a granted card with a use limit (see
 * the module's comment), then publishes the result event. `command`: the command event the read
 * came from (related to the result as `Command`).
 */
export async function recordRead(ctx: Ctx, loaded: LoadedReader, read: CardRead, retentionDays: number, command?: StoredObject): Promise<Outcome> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const outcome = await evaluate(ctx, loaded, read);
    const { decision, found } = outcome;
    const limited = found !== null && typeof found.card.OriginalUseCount === 'number' && found.card.OriginalUseCount > 0;
    if (decision.granted && decision.reason !== 'FreeAccess' && limited) {
      try {
        await writeCountedUse(ctx.db, found.person, countedUse(found, read.at));
      } catch (err) {
        if (!(err instanceof ConditionFailed)) throw err;
        // Another read (or a write) of this person came first: decide again on what it wrote.
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 5 * (attempt + 1))));
        continue;
      }
    }
    await publishResult(ctx, loaded, read, outcome, retentionDays, command);
    return outcome;
  }
  throw serviceUnavailable();
}

/** The person's document with the card's use counted (`CurrentUseCount` + 1, `LastUsed`). */
function countedUse(found: FoundCard, at: Date): Record<string, unknown> {
  const cards = cardsWithKeys(found.person.key, found.person.doc).map((c) =>
    c.Key === found.card.Key ? { ...c, CurrentUseCount: (typeof c.CurrentUseCount === 'number' ? c.CurrentUseCount : 0) + 1, LastUsed: at.toISOString() } : c,
  );
  return { ...found.person.doc, CardAssignments: cards };
}

const named = (r: ObjectRef | null): { Key: string; CommonName: string | null } | null => (r ? { Key: r.Key, CommonName: r.CommonName } : null);

/** The read's card number as BSON holds it: an Int64 when it is decimal digits. */
function bsonCardNumber(number: string): bigint | string {
  return /^\d+$/.test(number) ? BigInt(number) : number;
}

/** The result event of a recorded decision, in the reader's folder (see the issue's shape; never the PIN). */
async function publishResult(ctx: Ctx, loaded: LoadedReader, read: CardRead, outcome: Outcome, retentionDays: number, command?: StoredObject): Promise<void> {
  const { decision, found } = outcome;
  const reader = loaded.reader;
  const result = accessResultType(decision.granted, reader.instances[0] ?? reader.folder);
  const person = found ? refOf(found.person) : null;
  const display = found ? (typeof found.card.DisplayCardNumber === 'string' && found.card.DisplayCardNumber !== '' ? found.card.DisplayCardNumber : read.number) : read.number;
  const short = decision.granted ? 'Access Granted' : 'Access Denied';
  const long = `${short} (${decision.reason}) at reader ${loaded.facts.ref.CommonName ?? reader.key}: card ${display}${person ? ` of ${person.CommonName ?? person.Key}` : ''}. ${decision.message}`;
  const link = (relation: string, r: ObjectRef | null) =>
    r ? [{ $type: 'ObjectLinkItem', Href: r.Href, LinkedObjectKey: r.Key, CommonName: r.CommonName, Relation: relation, MetaDataBson: null }] : [];
  const data = encodeBson({
    Granted: decision.granted,
    Reason: decision.reason,
    Reader: named(loaded.facts.ref),
    Person: named(person),
    Door: named(loaded.facts.door),
    Controller: named(loaded.facts.controller),
    AccessLevel: named(decision.accessLevel),
    Schedule: named(decision.schedule),
    EncodedCardNumber: bsonCardNumber(read.number),
    DisplayedCardNumber: display,
    FacilityCode: read.facility === undefined ? null : /^\d{1,9}$/.test(read.facility) ? Number(read.facility) : read.facility,
    MessageTime: decision.localTime,
    MessageTimeUTC: new Date(decision.at),
  });
  const w = eventWrite({
    key: newKey(),
    placement: { folder: reader.folder, path: reader.path, instances: reader.instances },
    appKey: result.app.key,
    eventTypeKey: result.type.key,
    eventTypeMoniker: result.moniker,
    occurredOn: read.at,
    publishedOn: ctx.now,
    priority: result.priority,
    // An alarm definition of the reader's instance chain on this result type raises an alarm.
    requiresAcknowledgement: await builtinTypeInAlarm(ctx.db, result.type.key, reader.instances),
    messageLong: long,
    messageShort: short,
    objectLinks: [
      ...link('Reader', loaded.facts.ref),
      ...link('Person', person),
      ...link('Door', loaded.facts.door),
      ...link('Controller', loaded.facts.controller),
      ...(command ? link('Command', { Key: command.key, CommonName: null, Href: eventHref(command.folder, command.key) }) : []),
    ],
    eventDataBsonBase64: Buffer.from(data).toString('base64'),
    retentionDays,
  });
  await putEvent(ctx.db, w);
}

/** `AccessDecisionInfo`: the decision with the objects it names (never the PIN). */
export function renderDecision(ctx: Ctx, loaded: LoadedReader, outcome: Outcome): Record<string, unknown> {
  const { decision: d, found } = outcome;
  return {
    $type: typeTag(ctx.ns, 'AccessDecisionInfo'),
    Granted: d.granted,
    Reason: d.reason,
    Message: d.message,
    At: d.at,
    LocalTime: d.localTime,
    TimeZone: d.timeZone,
    StrikeSeconds: d.strikeSeconds,
    Reader: loaded.facts.ref,
    Door: loaded.facts.door,
    Controller: loaded.facts.controller,
    Person: found ? refOf(found.person) : null,
    Card: found ? { Key: found.card.Key, DisplayCardNumber: typeof found.card.DisplayCardNumber === 'string' ? found.card.DisplayCardNumber : null } : null,
    AccessLevel: d.accessLevel,
    Schedule: d.schedule,
    Checks: d.checks,
  };
}
