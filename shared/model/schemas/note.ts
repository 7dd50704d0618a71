/** NoteInfo: a free-text note on an object (fields beyond NoteText are set by the server). */
import * as z from 'zod/mini';
import { LIMITS, builtOnce } from './common.ts';

/** Built on first use (see `builtOnce`). */
export const noteInfoSchema = builtOnce(() =>
  z.looseObject({
    $type: z.string().check(z.maxLength(LIMITS.code)),
    NoteText: z.string().check(z.maxLength(LIMITS.text)),
  }),
);
export type NoteInfo = z.infer<ReturnType<typeof noteInfoSchema>>;

/** A stored note. */
export interface StoredNote {
  readonly $type: 'NoteInfo';
  readonly Key: string;
  readonly NoteText: string;
  readonly CreatedOn: string;
  readonly CreatedBy: string;
  readonly [field: string]: unknown;
}
