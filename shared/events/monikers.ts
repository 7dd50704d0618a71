/**
 * The monikers of an event type's document (its `Monikers` with a nickname, the namespace '' when
 * absent): what event types are found, resolved and claimed by. Its own module, so that reading
 * event types does not load body validation (event-type-body.ts).
 */
import type { Doc } from '../objects/validate.ts';

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The monikers of an event type document (Namespace defaults to ''). */
export function monikersOf(doc: Readonly<Doc>): Array<{ Namespace: string; Nickname: string }> {
  const list = Array.isArray(doc.Monikers) ? doc.Monikers : [];
  return list
    .filter(isPlainObject)
    .filter((m) => typeof m.Nickname === 'string' && m.Nickname !== '')
    .map((m) => ({ Namespace: typeof m.Namespace === 'string' ? m.Namespace : '', Nickname: m.Nickname as string }));
}
