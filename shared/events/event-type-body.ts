/**
 * The EventTypeInfo body of an add or an update: `$type` EventTypeInfo (whatever its namespace),
 * BaseInfo plus the spec's fields, each Moniker with a Nickname. As for every object, the stored
 * document is the client's JSON normalised (bare `$type`s, read-only fields and Notes dropped).
 * The schema (event-type-schema.ts), and zod with it, load on the first body validated.
 */
import type { Claim } from '../model/stored-object.ts';
import { monikerClaim } from '../model/claims.ts';
import { READ_ONLY_FIELDS, WRITE_ONLY_FIELDS } from '../model/object-render.ts';
import { typeNameOf } from '../model/type-tags.ts';
import { monikersOf } from './monikers.ts';
import { invalidField, wrongType } from '../objects/object-errors.ts';
import { checkLimits, formatPath, isPlainObject, normalizeTypes, type Doc } from '../objects/validate.ts';
import { onFirstUse } from '../first-use.ts';

export const EVENT_TYPE_NAME = 'EventTypeInfo';

export interface EventTypeInput {
  readonly doc: Doc;
  /** The ConcurrencyVersion the client edited, if it sent one. */
  readonly version: number | undefined;
}

/** Element types of the arrays an event type carries. */
const ELEMENTS: Readonly<Record<string, string>> = { Monikers: 'MonikerItem', Metadata: 'MetadataItem', ObjectLinks: 'ObjectLinkItem' };

const schema = onFirstUse(() => import('./event-type-schema.ts'));

/** Validates an EventTypeInfo body (its zod schema is loaded by the first one). */
export async function parseEventTypeBody(body: unknown): Promise<EventTypeInput> {
  if (!isPlainObject(body)) throw invalidField('', 'expected an EventTypeInfo object');
  // Without `$type` the body is the type the endpoint declares, as the original service reads it.
  if (body.$type !== undefined && body.$type !== null && typeNameOf(body.$type) !== EVENT_TYPE_NAME) {
    throw wrongType(String(body.$type), [EVENT_TYPE_NAME]);
  }
  checkLimits(body);
  const normalized = normalizeTypes({ ...body, $type: body.$type ?? EVENT_TYPE_NAME }) as Doc;
  for (const [field, typeName] of Object.entries(ELEMENTS)) {
    const list = normalized[field];
    if (Array.isArray(list)) normalized[field] = list.map((x) => (isPlainObject(x) && x.$type === undefined ? { $type: typeName, ...x } : x));
  }
  const { eventTypeInfoSchema } = await schema();
  const r = eventTypeInfoSchema().safeParse(normalized);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw invalidField(formatPath(issue.path as PropertyKey[]), issue.message);
  }
  const doc: Doc = { $type: EVENT_TYPE_NAME };
  for (const [k, v] of Object.entries(normalized)) {
    if (k === '$type' || k === 'Notes' || READ_ONLY_FIELDS.includes(k) || WRITE_ONLY_FIELDS.includes(k)) continue;
    doc[k] = v;
  }
  return { doc, version: typeof body.ConcurrencyVersion === 'number' ? body.ConcurrencyVersion : undefined };
}

/** The moniker claims of an event type of an app (each moniker once). */
export function eventTypeClaims(appKey: string, doc: Readonly<Doc>): Claim[] {
  const claims = new Map<string, Claim>();
  for (const m of monikersOf(doc)) {
    const c = monikerClaim(appKey, m.Namespace, m.Nickname);
    claims.set(c.value, c);
  }
  return [...claims.values()];
}
