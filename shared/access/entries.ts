/**
 * `AccessLevelEntries` of an access level: `[{ ReaderId, ScheduleId }]`, each reader granted under
 * its own schedule. On write every pair must name a reader and a schedule the caller can see (its
 * instance or below it), else 400 ValidationFailed naming the entry; the names the client may send
 * are not stored. On read the server fills `ReaderCommonName` and `ScheduleCommonName` from the
 * objects as they are now (one BatchGetItem for the entries of a call's levels), so a rename
 * shows at once.
 */
import { getObjects } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { isObjectKey } from '../db/keys.ts';
import type { ApiResponse } from '../http/types.ts';
import type { Ctx, ObjectHooks } from '../objects/context.ts';
import { invalidField } from '../objects/errors.ts';

const FIELD = 'AccessLevelEntries';
const ENTRY_FIELDS = new Set(['$type', 'ReaderId', 'ScheduleId', 'ReaderCommonName', 'ScheduleCommonName']);
/** The most entries a level holds (one BatchGetItem reads their objects). */
const MAX_ENTRIES = 100;

/** The stored entries of a level document (the pairs only), 400 for a bad one. */
async function checkedEntries(ctx: Ctx, value: unknown): Promise<{ ReaderId: string; ScheduleId: string }[]> {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidField(FIELD, 'must be an array of { ReaderId, ScheduleId }');
  if (value.length > MAX_ENTRIES) throw invalidField(FIELD, `holds at most ${MAX_ENTRIES} entries`);
  const pairs = value.map((e, i) => {
    const at = `${FIELD}[${i}]`;
    if (e === null || typeof e !== 'object' || Array.isArray(e)) throw invalidField(at, 'must be an object { ReaderId, ScheduleId }');
    const entry = e as Record<string, unknown>;
    const unknown = Object.keys(entry).find((k) => !ENTRY_FIELDS.has(k));
    if (unknown) throw invalidField(`${at}.${unknown}`, 'is not a field of an access level entry');
    for (const f of ['ReaderId', 'ScheduleId'] as const) {
      if (typeof entry[f] !== 'string' || !isObjectKey((entry[f] as string).toLowerCase())) throw invalidField(`${at}.${f}`, 'must be the 24-hex key of an object');
    }
    return { ReaderId: (entry.ReaderId as string).toLowerCase(), ScheduleId: (entry.ScheduleId as string).toLowerCase() };
  });
  if (pairs.length === 0) return pairs;
  const found = new Map((await getObjects(ctx.db, pairs.flatMap((p) => [p.ReaderId, p.ScheduleId]))).map((o) => [o.key, o]));
  const visible = (key: string, collection: string) => {
    const o = found.get(key);
    return o !== undefined && o.collection === collection && o.path.includes(ctx.principal.instanceKey);
  };
  pairs.forEach((p, i) => {
    if (!visible(p.ReaderId, 'readers')) throw invalidField(`${FIELD}[${i}].ReaderId`, 'names no reader you can see');
    if (!visible(p.ScheduleId, 'schedules')) throw invalidField(`${FIELD}[${i}].ScheduleId`, 'names no schedule you can see');
  });
  return pairs;
}

/** The access family's object hooks: the relations' (`base`) with the entries of a level checked first. */
export function withEntryChecks(base: ObjectHooks): ObjectHooks {
  return Object.freeze<ObjectHooks>({
    ...base,
    beforeWrite: async (ctx, draft, previous) => {
      if (draft.collection !== 'accesslevels' || !(FIELD in draft.doc)) return base.beforeWrite?.(ctx, draft, previous);
      const checked: StoredObject = { ...draft, doc: { ...draft.doc, [FIELD]: await checkedEntries(ctx, draft.doc[FIELD]) } };
      return (await base.beforeWrite?.(ctx, checked, previous)) ?? { doc: { ...checked.doc }, extra: [] };
    },
  });
}

const isLevel = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Array.isArray((v as Record<string, unknown>)[FIELD]);

/** Fills the names of the entries of the levels an answer holds (a level or a list of them). */
export async function withEntryNames(ctx: Pick<Ctx, 'db'>, res: ApiResponse): Promise<ApiResponse> {
  const levels = (Array.isArray(res.body) ? res.body : [res.body]).filter(isLevel);
  const entries = levels.flatMap((l) => l[FIELD] as Record<string, unknown>[]).filter((e) => e !== null && typeof e === 'object');
  if (entries.length === 0) return res;
  const keys = [...new Set(entries.flatMap((e) => [e.ReaderId, e.ScheduleId]).filter((k): k is string => typeof k === 'string' && isObjectKey(k)))];
  const names = new Map((await getObjects(ctx.db, keys)).map((o) => [o.key, typeof o.doc.CommonName === 'string' ? o.doc.CommonName : null]));
  for (const l of levels) {
    l[FIELD] = (l[FIELD] as Record<string, unknown>[]).map((e) =>
      e !== null && typeof e === 'object'
        ? { ...e, ReaderCommonName: names.get(e.ReaderId as string) ?? null, ScheduleCommonName: names.get(e.ScheduleId as string) ?? null }
        : e,
    );
  }
  return res;
}
