/**
 * The generic collection calls, one implementation for every collection (configured by its
 * {@link Behaviour}):
 *
 * | call    | requests (success)                                                          |
 * | ------- | --------------------------------------------------------------------------- |
 * | list    | see `listObjects` in `paging.ts`                                            |
 * | get     | one GetItem (`locate` in `tenant-scope.ts`)                                  |
 * | create  | one TransactWriteItems (object + claims); the folder is read first (GetItem, + GetItem of `InFolderKey`'s folder) unless this execution environment read it in the last minute |
 * | replace | GetItem, one TransactWriteItems (object + added/released claims); none when unchanged |
 * | delete  | GetItem, one TransactWriteItems (object + released claims + extras)         |
 *
 * Writes are conditional on the version read, so no update is lost: a replace that carries a
 * `ConcurrencyVersion` other than the stored one is a 409; one without it is retried on the fresh
 * version when another writer got in between. A transaction cancelled because another one was
 * working on the same claim (TransactionConflict) is retried too, so a race on a card number
 * always ends in one 2xx and 409s, never a 503.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { getObject, ownInstance, type ExtraWrite } from '../db/objects-repo.ts';
import type { Claim, StoredObject } from '../model/stored-object.ts';
import { conditionFailedAt, createObject, deleteObject, failedClaim, isTransactionConflict, replaceObjectWith } from '../db/object-writes.ts';
import type { CollectionDef } from '../model/collections.ts';
import { newKey } from '../model/placement.ts';
import type { StoredNote } from '../model/schemas/index.ts';
import { authorName, createTarget, forgetPlacement, locate, requireRole, type Locator } from './tenant-scope.ts';
import type { Behaviour } from './behaviour.ts';
import type { Ctx } from './domain-context.ts';
import { concurrencyConflict, invalidFolder } from './object-errors.ts';
import { behaviourOf } from './registry.ts';
import { canonicalJson, checkDocSize, parseObjectBody, type Doc, type ObjectInput } from './validate.ts';

/** Attempts of one write before giving up (each lost attempt means another writer succeeded). */
const MAX_ATTEMPTS = 25;

/** Jittered backoff between attempts: 5 ms, 10 ms, ... up to 200 ms. */
export const backoff = (attempt: number): Promise<unknown> => sleep(Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random()));

const claimId = (c: Claim): string => `${c.scope}\u0000${c.kind}\u0000${c.value}`;
const minus = (a: readonly Claim[], b: readonly Claim[]): Claim[] => {
  const ids = new Set(b.map(claimId));
  return a.filter((c) => !ids.has(claimId(c)));
};

/** Checks the caller's role for writing objects of a collection. */
export function requireWrite(ctx: Ctx, b: Behaviour): void {
  requireRole(ctx, b.writeRole, `change ${b.def.name}`);
}

/** Checks the role every write needs before anything is read (ReadOnly never writes). */
export function requireAnyWrite(ctx: Ctx): void {
  requireRole(ctx, 'Operator', 'change anything');
}

/** A stored note made by the server from a note's text and fields, on an object of `ownerInstance`. */
export function makeNote(ctx: Ctx, fields: Doc, ownerInstance: string): StoredNote {
  const { Key: _k, CreatedOn: _o, CreatedBy: _b, $type: _t, NoteText, ...rest } = fields;
  return {
    $type: 'NoteInfo',
    Key: newKey(),
    NoteText: typeof NoteText === 'string' ? NoteText : '',
    ...rest,
    CreatedOn: ctx.now.toISOString(),
    CreatedBy: authorName(ctx, ownerInstance),
  };
}

/** Creates an object in a folder of the path (or in the folder below it that `InFolderKey` names). */
export async function createIn(ctx: Ctx, def: CollectionDef, folderKey: string, body: unknown): Promise<StoredObject> {
  const b = behaviourOf(def.name);
  requireWrite(ctx, b);
  const input = await parseObjectBody(body, def);
  const { folder: target, read } = await createTarget(ctx, folderKey, input.inFolderKey);
  if (b.container === 'instance' && target.collection !== 'instances') {
    throw invalidFolder(`${def.name} live in an instance; ${target.key} is a folder.`);
  }
  const instanceKey = ownInstance(target);
  // The instance's document (its password rules) as read now: a cached target's may be stale.
  const extraFor = await b.prepareWrite(ctx, input, async () =>
    instanceKey === target.key ? (read ? target : getObject(ctx.db, instanceKey, true)) : getObject(ctx.db, instanceKey),
  );
  const key = newKey();
  const placed = b.place(key, target);
  const doc = b.complete(ctx, input, undefined);
  if (input.noteTexts.length > 0) doc.Notes = input.noteTexts.map((NoteText) => makeNote(ctx, { NoteText }, ownInstance(placed)));
  checkDocSize(doc);
  const draft: StoredObject = { key, collection: def.name, type: input.typeName, ...placed, version: 1, doc };
  // A hook may refuse the write (nothing is written) or add to its transaction (connections).
  const pre = await ctx.hooks.beforeWrite?.(ctx, draft, undefined);
  const o: StoredObject = pre ? { ...draft, doc: pre.doc } : draft;
  if (pre) checkDocSize(o.doc as Doc);
  const claims = b.claims(o);
  const extra = [...extraFor(key), ...(pre?.extra ?? [])];
  for (let attempt = 1; ; attempt++) {
    try {
      // No check of the folder item in the transaction: it would be in every create in the folder,
      // and in AWS concurrent transactions on one item cancel each other (TransactionConflict), so
      // parallel creates in one instance (a bulk import) would mostly retry. See createTarget.
      await createObject(ctx.db, o, claims, extra);
      break;
    } catch (err) {
      const claim = failedClaim(err, claims, 1);
      if (claim) throw b.claimError(claim);
      if (isTransactionConflict(err) && attempt < MAX_ATTEMPTS) {
        await backoff(attempt);
        continue;
      }
      throw err;
    }
  }
  await ctx.hooks.afterWrite?.(ctx, o, undefined);
  return o;
}

export interface ReplaceResult {
  readonly object: StoredObject;
  /** False when the save left the object unchanged (nothing was written). */
  readonly changed: boolean;
  readonly behaviour: Behaviour;
}

/** Full replace of the object a path names. */
export async function replaceAt(ctx: Ctx, loc: Locator, body: unknown): Promise<ReplaceResult> {
  let b: Behaviour | undefined;
  let input: ObjectInput | undefined;
  const typed = async (collection: string): Promise<[Behaviour, ObjectInput]> => {
    if (!b || !input) {
      b = behaviourOf(collection);
      requireWrite(ctx, b);
      input = await parseObjectBody(body, b.def);
    }
    return [b, input];
  };
  requireAnyWrite(ctx);
  if (loc.kind === 'member') await typed(loc.collection);
  let extraFor: ((key: string) => ExtraWrite[]) | undefined;

  for (let attempt = 1; ; attempt++) {
    const cur = await locate(ctx, loc);
    const [beh, inp] = await typed(cur.collection);
    if (inp.version !== undefined && inp.version !== cur.version) throw concurrencyConflict(cur.version);
    if (inp.inFolderKey !== undefined && inp.inFolderKey !== cur.folder) {
      throw invalidFolder('InFolderKey names another folder: objects do not move between folders.');
    }
    extraFor ??= await beh.prepareWrite(ctx, inp, () => getObject(ctx.db, ownInstance(cur)));
    const draftDoc = beh.complete(ctx, inp, cur);
    // Notes are not replaced by a PUT of the object.
    if (cur.doc.Notes !== undefined) draftDoc.Notes = cur.doc.Notes;
    const pre = await ctx.hooks.beforeWrite?.(ctx, { ...cur, type: inp.typeName, doc: draftDoc }, cur);
    const doc = (pre?.doc ?? draftDoc) as Doc;
    const extra = [...extraFor(cur.key), ...(pre?.extra ?? [])];
    if (extra.length === 0 && inp.typeName === cur.type && canonicalJson(doc) === canonicalJson(cur.doc)) {
      return { object: cur, changed: false, behaviour: beh };
    }
    checkDocSize(doc);
    const next: StoredObject = {
      ...cur,
      type: inp.typeName,
      doc,
      version: cur.version + 1,
      ...(beh.revokesSessions(inp, cur, doc) ? { sessionGeneration: (cur.sessionGeneration ?? 0) + 1 } : {}),
    };
    // Another writer got in first: read again (a client version now differs: 409).
    if (!(await writeOver(ctx, beh, cur, next, extra, attempt))) continue;
    await ctx.hooks.afterWrite?.(ctx, next, cur);
    return { object: next, changed: true, behaviour: beh };
  }
}

/**
 * Writes `next` over `cur` with the claims it adds and releases, in one TransactWriteItems
 * conditional on the version and document read. A claim another object owns throws its 409 (nothing
 * written); false when another writer got in between (after a backoff: read again and retry).
 */
async function writeOver(ctx: Ctx, b: Behaviour, cur: StoredObject, next: StoredObject, extra: ExtraWrite[], attempt: number): Promise<boolean> {
  const before = b.claims(cur);
  const after = b.claims(next);
  const add = minus(after, before);
  try {
    await replaceObjectWith(ctx.db, next, cur, add, minus(before, after), extra);
    return true;
  } catch (err) {
    const claim = failedClaim(err, add, 1);
    if (claim) throw b.claimError(claim);
    const retry = conditionFailedAt(err, 0) || isTransactionConflict(err);
    if (!retry || attempt >= MAX_ATTEMPTS) {
      if (conditionFailedAt(err, 0)) throw concurrencyConflict(cur.version + 1);
      throw err;
    }
    await backoff(attempt);
    return false;
  }
}

/** What an edit of part of an object makes of the object as read. */
export interface Edit<T> {
  /** The document to store; undefined leaves the object unchanged (nothing is written). */
  readonly doc: Doc | undefined;
  /** What the call answers, computed from the same read. */
  readonly result: T;
  /** Raise the object's session generation in the same write (users: sign out everywhere). */
  readonly revokeSessions?: boolean;
}

/**
 * Read-modify-write of part of the object a path names (a person's card), with the access checks
 * and cost of a PUT of the object: one GetItem, then one TransactWriteItems of the object (its
 * version bumped) with the claims it adds and releases; retried on a fresh read when another
 * writer got in between, so no update is lost. `edit` runs on every read and may throw (404 of
 * the part, 400 over a limit). The relationship hooks are not run: such an edit never changes the
 * object's ObjectLinks or CommonName.
 */
export async function editAt<T>(ctx: Ctx, loc: Locator, edit: (cur: StoredObject) => Edit<T>): Promise<{ object: StoredObject; changed: boolean; result: T }> {
  requireAnyWrite(ctx);
  if (loc.kind === 'member') requireWrite(ctx, behaviourOf(loc.collection));
  for (let attempt = 1; ; attempt++) {
    const cur = await locate(ctx, loc);
    const b = behaviourOf(cur.collection);
    requireWrite(ctx, b);
    const { doc, result, revokeSessions } = edit(cur);
    if (doc === undefined) return { object: cur, changed: false, result };
    checkDocSize(doc);
    const next: StoredObject = {
      ...cur,
      doc,
      version: cur.version + 1,
      ...(revokeSessions ? { sessionGeneration: (cur.sessionGeneration ?? 0) + 1 } : {}),
    };
    if (await writeOver(ctx, b, cur, next, [], attempt)) return { object: next, changed: true, result };
  }
}

/** Deletes the object a path names, with its claims, notes and extras. */
export async function removeAt(ctx: Ctx, loc: Locator): Promise<void> {
  requireAnyWrite(ctx);
  if (loc.kind === 'member') requireWrite(ctx, behaviourOf(loc.collection));
  for (let attempt = 1; ; attempt++) {
    const cur = await locate(ctx, loc);
    const b = behaviourOf(cur.collection);
    requireWrite(ctx, b);
    await b.beforeDelete(ctx, cur);
    try {
      await deleteObject(ctx.db, cur, b.claims(cur), b.deleteExtra(ctx, cur));
    } catch (err) {
      const retry = conditionFailedAt(err, 0) || isTransactionConflict(err);
      if (!retry || attempt >= MAX_ATTEMPTS) throw err;
      await backoff(attempt);
      continue;
    }
    forgetPlacement(ctx, cur.key);
    await ctx.hooks.afterDelete?.(ctx, cur);
    return;
  }
}
