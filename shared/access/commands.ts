/**
 * The commands of the built-in `MercuryCommands` app that Gatehouse carries out when they are
 * posted to the event sink (shared/events/builtin-apps.ts): the card read,
 * `mercury:command-simulateCardRead`, and the door unlock, `mercury:command-unlockDoor`. The hook itself only recognises the command by the built-in
 * keys; the card read's code (card-read.ts, the engine and the facts) loads with the first one,
 * so a publish of any other event never reads it.
 */
import { MERCURY_COMMANDS_APP_KEY, SIMULATE_CARD_READ_TYPE_KEY, UNLOCK_DOOR_TYPE_KEY } from '../events/builtin-apps.ts';
import type { CommandHook } from '../events/publish.ts';
import { onFirstUse } from '../first-use.ts';

const cardRead = onFirstUse(() => import('./card-read.ts'));
const unlock = onFirstUse(() => import('./unlock-command.ts'));

/**
 * The command hook of the event sink: a posting of the built-in card read command is checked
 * (400 before anything is written) and, once stored, recorded as a card read at its `OccurredOn`.
 * An instance's own app named `MercuryCommands` takes precedence over the built-in one when the
 * posting is resolved: its events are its own, and nothing is decided for them.
 */
export const accessCommands: CommandHook = async (ctx, command) => {
  if (command.app.key !== MERCURY_COMMANDS_APP_KEY) return undefined;
  // The door unlock (doors issue): the same as POST …/doors/<key>/unlock.
  if (command.type.key === UNLOCK_DOOR_TYPE_KEY) return (await unlock()).prepareUnlock(ctx, command.posting, command.retentionDays);
  if (command.type.key !== SIMULATE_CARD_READ_TYPE_KEY) return undefined;
  return (await cardRead()).prepareCardRead(ctx, command.posting, command.retentionDays);
};
