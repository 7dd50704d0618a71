/**
 * The door unlock command (`mercury:command-unlockDoor` of the built-in `MercuryCommands` app):
 * a posting with a `Door` among its `RelatedObjects` (or a `Reader` connected to a door) and
 * optional BSON `{ Duration }` in seconds (1 to 3600; default: the door's readers'
 * `NormalGrantAccessTime`). It does what `POST …/doors/<key>/unlock` does: a door under a
 * lockdown is 409 `LockedDown` and nothing is written, not even the command.
 */
import { ApiError } from '../errors.ts';
import type { Posting, RelatedObject } from '../events/posting.ts';
import type { CommandHookResult } from '../events/publish.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { carryOutUnlock, doorOfCommand, secondsOf, unlockTarget } from './doors.ts';

/** The key a related object names: its LinkedObjectKey, else the key its Href ends with. */
function keyOf(r: RelatedObject): string | undefined {
  if (typeof r.LinkedObjectKey === 'string' && r.LinkedObjectKey !== '') return r.LinkedObjectKey.toLowerCase();
  const m = typeof r.Href === 'string' ? /\/([0-9a-fA-F]{24})\/?$/.exec(r.Href.trim()) : null;
  return m ? m[1]!.toLowerCase() : undefined;
}

/** Checks an unlock command before it is written and gives what to do once it is stored. */
export async function prepareUnlock(ctx: Ctx, posting: Posting, retentionDays: number): Promise<CommandHookResult> {
  const related = posting.relatedObjects
    .map((r) => ({ relation: typeof r.Relation === 'string' ? r.Relation.toLowerCase() : '', key: keyOf(r) }))
    .filter((r): r is { relation: string; key: string } => r.key !== undefined);
  const door = await doorOfCommand(ctx, related);
  if (!door) throw new ApiError(400, 'InvalidCommand', 'An unlock command relates a Door, or a Reader connected to a door (RelatedObjects with Relation "Door" or "Reader").');
  const data = (posting.eventData ?? {}) as Record<string, unknown>;
  const seconds = secondsOf(data.Duration, (m) => new ApiError(400, 'InvalidEventData', m.replace('Seconds', 'Duration')));
  const target = await unlockTarget(ctx, door);
  return { after: (event) => carryOutUnlock(ctx, retentionDays, target, seconds, event) };
}
