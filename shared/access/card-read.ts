/**
 * The card read command (`mercury:command-simulateCardRead` of the built-in `MercuryCommands`
 * app): a posting with one `Reader` among its `RelatedObjects` (`CardFormat` and `Controller`
 * are allowed and ignored) and `EventDataBsonBase64` = BSON `{ EncodedCardNumber, FacilityCode?,
 * PinCode?, Reason? }`. The command is stored as any event (without its PIN), then recorded as a
 * card read at its `OccurredOn` (decisions.ts `recordRead`), whose result event relates it as
 * `Command`.
 */
import { ApiError } from '../errors.ts';
import { encodeBson } from '../bson-writer.ts';
import type { Posting, RelatedObject } from '../events/posting.ts';
import type { CommandHookResult } from '../events/publish.ts';
import type { Ctx } from '../objects/context.ts';
import { cardNumberText, facilityText, pinText, recordRead } from './decisions.ts';
import { loadReader } from './facts.ts';

const invalidCommand = (message: string): ApiError => new ApiError(400, 'InvalidCommand', message);

/** The key a related object names: its LinkedObjectKey, else the key its Href ends with. */
function keyOf(r: RelatedObject): string | undefined {
  if (typeof r.LinkedObjectKey === 'string' && r.LinkedObjectKey !== '') return r.LinkedObjectKey.toLowerCase();
  const m = typeof r.Href === 'string' ? /\/([0-9a-fA-F]{24})\/?$/.exec(r.Href.trim()) : null;
  return m ? m[1]!.toLowerCase() : undefined;
}

/**
 * The command's event data as stored: the posted document without `PinCode` (a PIN is never in
 * an event). A document holding values the writer does not encode keeps the command's own fields.
 */
function withoutPin(data: Readonly<Record<string, unknown>>): string {
  const { PinCode: _pin, ...rest } = data;
  let bytes: Uint8Array;
  try {
    bytes = encodeBson(rest);
  } catch {
    const { EncodedCardNumber, FacilityCode, Reason } = rest;
    bytes = encodeBson({ EncodedCardNumber, FacilityCode, Reason });
  }
  return Buffer.from(bytes).toString('base64');
}

/**
 * Checks a card read command before it is written (400 InvalidCommand without exactly one reader
 * that exists, 400 InvalidEventData without a card number) and gives what to store and what to do
 * once the command's event is stored.
 */
export async function prepareCardRead(ctx: Ctx, posting: Posting, retentionDays: number): Promise<CommandHookResult> {
  const readers = posting.relatedObjects.filter((r) => typeof r.Relation === 'string' && r.Relation.toLowerCase() === 'reader');
  if (readers.length !== 1) throw invalidCommand('A card read command relates exactly one Reader (RelatedObjects with Relation "Reader").');
  const readerKey = keyOf(readers[0]!);
  const loaded = readerKey ? await loadReader(ctx, readerKey) : null;
  // The publish has already refused a related object outside the caller's scope (403).
  if (!loaded || !loaded.reader.path.includes(ctx.principal.instanceKey)) throw invalidCommand('The command\'s Reader names no reader.');
  const data = posting.eventData as Record<string, unknown>;
  if (data.EncodedCardNumber === undefined || data.EncodedCardNumber === null) {
    throw new ApiError(400, 'InvalidEventData', 'The card read\'s event data has no EncodedCardNumber.');
  }
  const read = {
    readerKey: loaded.reader.key,
    number: cardNumberText(data.EncodedCardNumber, 'EncodedCardNumber', 'InvalidEventData'),
    facility: facilityText(data.FacilityCode, 'FacilityCode', 'InvalidEventData'),
    pin: pinText(data.PinCode, 'PinCode', 'InvalidEventData'),
    at: posting.occurredOn,
  };
  return {
    eventData: 'PinCode' in data ? withoutPin(data) : posting.eventDataBsonBase64,
    after: async (event) => {
      await recordRead(ctx, loaded, read, retentionDays, event);
    },
  };
}
