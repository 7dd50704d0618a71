/**
 * Notes: kept in the object's own document (so an object GET, one GetItem, returns them in
 * chronological order), added and removed with a document update that does not bump the
 * object's ConcurrencyVersion (a note is not an edit of the object), conditional on the document
 * read, and retried when the object changed in between. A PUT of the object keeps its notes;
 * deleting the object deletes them with it.
 */
import { ownInstance } from '../db/objects-repo.ts';
import { updateDoc } from '../db/object-writes.ts';
import { ConditionFailed } from '../errors.ts';
import { notFound } from '../errors.ts';
import { LIMITS } from '../model/limits.ts';
import type { StoredNote } from '../model/schemas/index.ts';
import { locate, type Locator } from './tenant-scope.ts';
import { backoff, makeNote, requireAnyWrite, requireWrite } from './collection.ts';
import type { Ctx } from './domain-context.ts';
import { invalidField } from './object-errors.ts';
import { behaviourOf } from './registry.ts';
import { checkDocSize, isPlainObject, parseElementBody } from './validate.ts';

const MAX_ATTEMPTS = 25;

const notesOf = (doc: Readonly<Record<string, unknown>>): unknown[] => (Array.isArray(doc.Notes) ? doc.Notes : []);

/** Adds a note (POST <Href>/notes with a NoteInfo); the server sets Key, CreatedOn and CreatedBy. */
export async function addNote(ctx: Ctx, loc: Locator, body: unknown): Promise<StoredNote> {
  requireAnyWrite(ctx);
  const fields = await parseElementBody(body, 'NoteInfo');
  for (let attempt = 1; ; attempt++) {
    const cur = await locate(ctx, loc);
    requireWrite(ctx, behaviourOf(cur.collection));
    const note = makeNote(ctx, fields, ownInstance(cur));
    const notes = notesOf(cur.doc);
    if (notes.length >= LIMITS.notes) throw invalidField('Notes', `an object keeps at most ${LIMITS.notes} notes`);
    const doc = { ...cur.doc, Notes: [...notes, note] };
    checkDocSize(doc);
    try {
      await updateDoc(ctx.db, cur, doc);
      return note;
    } catch (err) {
      if (!(err instanceof ConditionFailed) || attempt >= MAX_ATTEMPTS) throw err;
      await backoff(attempt);
    }
  }
}

/** Removes a note (DELETE <Href>/notes/<note_key>); 404 when the object has no such note. */
export async function removeNote(ctx: Ctx, loc: Locator, noteKey: string): Promise<void> {
  requireAnyWrite(ctx);
  for (let attempt = 1; ; attempt++) {
    const cur = await locate(ctx, loc);
    requireWrite(ctx, behaviourOf(cur.collection));
    const notes = notesOf(cur.doc);
    const kept = notes.filter((n) => !(isPlainObject(n) && n.Key === noteKey));
    if (kept.length === notes.length) throw notFound('The note does not exist.');
    try {
      await updateDoc(ctx.db, cur, { ...cur.doc, Notes: kept });
      return;
    } catch (err) {
      if (!(err instanceof ConditionFailed) || attempt >= MAX_ATTEMPTS) throw err;
      await backoff(attempt);
    }
  }
}
