/**
 * The state of readers beside their objects (issue 37): the lockdowns of the folders above them
 * and the modes operators set, read by key in one strongly consistent BatchGetItem. A decision
 * starts it beside its card lookup (decisions.ts `evaluate`): no wave more, and a lockdown or a
 * mode applies to the very next decision.
 */
import { readDoorState, type LockdownRecord, type ModeRecord } from '../db/door-state.ts';
import { folderHref } from '../model/object-render.ts';
import type { StoredObject } from '../model/stored-object.ts';
import type { Ctx } from '../objects/domain-context.ts';
import type { ObjectRef, ReaderFacts } from './decision.ts';
import type { LoadedReader } from './facts.ts';
import { lockdownOver, modeAt } from './modes.ts';

/** A reader's state beside its object: its set mode and the lockdown over it (outermost first). */
export interface ReaderState {
  readonly mode: ModeRecord | null;
  readonly lockdown: { readonly folder: string; readonly record: LockdownRecord } | null;
}

/** The state of readers and of the folders above them, in one strongly consistent BatchGetItem. */
export async function statesOf(ctx: Ctx, readers: readonly StoredObject[], extraFolders: readonly string[] = []): Promise<{ of: (r: StoredObject) => ReaderState; lockdownOf: (path: readonly string[]) => ReaderState['lockdown'] }> {
  const { lockdowns, modes } = await readDoorState(
    ctx.db,
    [...readers.flatMap((r) => r.path), ...extraFolders],
    readers.map((r) => r.key),
  );
  const lockdownOf = (path: readonly string[]) => {
    const l = lockdownOver(path, lockdowns);
    return l ? { folder: l.folder, record: l.lockdown } : null;
  };
  return { of: (r) => ({ mode: modes.get(r.key) ?? null, lockdown: lockdownOf(r.path) }), lockdownOf };
}

/** The state of one reader (one BatchGetItem: the lockdowns of its folders and its mode). */
export async function readerState(ctx: Ctx, loaded: LoadedReader): Promise<ReaderState> {
  return (await statesOf(ctx, [loaded.reader])).of(loaded.reader);
}

/** `{ Key, CommonName, Href }` of a locked folder, as the lockdown item names it. */
export const lockdownFolderRef = (r: LockdownRecord): ObjectRef => ({ Key: r.folder, CommonName: r.folderName, Href: folderHref(r.folder) });

/** The reader's facts at `at` with its state applied: its set mode while it lasts, and the lockdown over it. */
export function factsWithState(facts: ReaderFacts, state: ReaderState, at: Date): ReaderFacts {
  return {
    ...facts,
    accessMethod: modeAt(facts.accessMethod, state.mode, at),
    lockdown: state.lockdown ? { folder: lockdownFolderRef(state.lockdown.record) } : null,
  };
}

