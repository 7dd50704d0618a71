/**
 * Search: a document-database style query over the objects of an instance (and, on request, its
 * child instances). The planner picks the most selective index the query allows; the matcher
 * filters what that index returns. Results are in creation order (keys are time-ordered), paged
 * like lists.
 */
import { ApiError } from '../errors.ts';
import { getObjects, ownInstance, type ReadStep } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { newBudget, ownersOfCardNumber, readByName, readPartition, SearchTooBroad, type SearchBudget } from '../db/search-repo.ts';
import type { Paging } from '../http/params.ts';
import { COLLECTIONS } from '../model/collections.ts';
import { renderAny } from '../events/event-render.ts';
import { hideOuterFolder } from '../model/object-render.ts';
import { discriminators, typeChain, canonicalTypeName } from '../model/type-hierarchy.ts';
import type { Db } from '../db/client.ts';
import {
  equalityMatcher,
  loadMatcher,
  normalizeQuery,
  parseQueryBody,
  planQuery,
  requestedTypes,
  reviveDates,
  rewriteTypeArrays,
  type Plan,
} from '../query/query.ts';
import type { Matcher } from '../query/shape.ts';
import { filterPaced, pacer } from '../query/pacer.ts';

/**
 * Whether a search body needs the query engine (anything but string equalities on plain fields):
 * a caller may start loading it early. A body that does not parse needs it (its error is the engine's to tell).
 */
export function needsQueryEngine(body: unknown): boolean {
  try {
    return equalityMatcher(normalizeQuery(parseQueryBody(body))) === undefined;
  } catch {
    return true;
  }
}

export interface SearchInput {
  readonly db: Db;
  readonly ns: string;
  /** The folder searched, when it is a folder: results lie in it (an instance searched: undefined). */
  readonly folderScope?: string;
  /** Instances the search covers: the searched folder's instance, and its descendants when asked. */
  readonly instances: readonly string[];
  readonly body: unknown;
  readonly paging: Paging;
  /** The caller's instance (an object's folder above it is not shown). */
  readonly callerInstance: string;
  /** Awaited before each read request (the call's read steps: shared/objects/domain-context.ts `readSteps`). */
  readonly step?: ReadStep;
}

/** The collections whose objects a requested type can select. */
function collectionsFor(types: readonly string[] | undefined): string[] {
  if (!types) return [...COLLECTIONS.map((c) => c.name), 'eventtypes'];
  const wanted = types.map(canonicalTypeName);
  // Event types live under their apps, not in a collection of the route table.
  const extra = wanted.some((w) => w === 'EventTypeInfo' || w === 'BaseInfo') ? ['eventtypes'] : [];
  return [...extra, ...COLLECTIONS.filter((c) => {
    const held = [c.typeName, ...(Array.isArray(c.acceptsTypes) ? c.acceptsTypes : [])];
    // A collection that keeps any type as sent may hold a type nobody declared.
    if (c.acceptsTypes === '*') return true;
    return held.some((t) => wanted.some((w) => typeChain(t).includes(w)));
  }).map((c) => c.name)];
}

async function candidates(input: SearchInput, plan: Plan, budget: SearchBudget): Promise<StoredObject[]> {
  const { db, instances } = input;
  switch (plan.kind) {
    case 'keys': {
      // Not awaited when it may go now: a cold GET's reads by key go out together (item-reads.ts).
      const wait = input.step?.();
      if (wait) await wait;
      return getObjects(db, plan.keys.slice(0, 1000));
    }
    case 'card': {
      const owners = (await Promise.all(instances.map((i) => ownersOfCardNumber(db, i, plan.number, budget)))).flat();
      await input.step?.();
      return getObjects(db, owners);
    }
    case 'name':
      return (await Promise.all(instances.map((i) => readByName(db, i, plan, budget)))).flat();
    case 'types': {
      const colls = collectionsFor(plan.types);
      const reads = instances.flatMap((i) => colls.map((c) => readPartition(db, i, c, budget)));
      return (await Promise.all(reads)).flat();
    }
  }
}

/**
 * Runs a search; answers the page of rendered matches. The planned index read starts as soon as
 * the query is checked, and the query engine loads (the first search of an environment) or
 * compiles meanwhile: a query the engine refuses answers its 400 and the read is dropped.
 */
export async function search(input: SearchInput): Promise<Record<string, unknown>[]> {
  const query = normalizeQuery(parseQueryBody(input.body));
  const types = requestedTypes(query);
  const plan = planQuery(query, types);
  const reading = candidates(input, plan, newBudget(input.step));
  reading.catch(() => undefined);
  const compile = async (): Promise<Matcher> => {
    const { compileQuery, regexFor } = await loadMatcher();
    await regexFor(query);
    return compileQuery(rewriteTypeArrays(query));
  };
  // String equalities on plain fields (a lookup by name or key) need no engine unless a candidate
  // holds something else in a compared field; any other query compiles while the index is read.
  const equalities = equalityMatcher(query);
  let matcher = equalities ? undefined : await compile();
  let found: StoredObject[];
  try {
    found = await reading;
  } catch (err) {
    if (err instanceof SearchTooBroad) {
      throw new ApiError(400, 'InvalidQuery', 'The search would read too many objects: narrow it with _t or an indexed field.');
    }
    throw err;
  }
  const within = new Set(input.instances);
  const folderScope = input.folderScope;
  const seen = new Set<string>();
  const shown: Array<{ key: string; view: Record<string, unknown>; doc: Record<string, unknown> }> = [];
  for (const o of found) {
    if (seen.has(o.key) || o.collection === 'events') continue;
    seen.add(o.key);
    if (!within.has(ownInstance(o))) continue;
    if (folderScope && !o.path.includes(folderScope)) continue;
    const view = hideOuterFolder(renderAny(o, input.ns), o, input.callerInstance);
    shown.push({ key: o.key, view, doc: { ...(reviveDates(view) as Record<string, unknown>), _t: discriminators(o.type) } });
  }
  if (equalities && shown.some((s) => equalities.test(s.doc) === undefined)) matcher = await compile();
  const matches = await filterPaced(shown, (s) => (matcher ? matcher.test(s.doc) : equalities!.test(s.doc) === true), pacer('search'));
  matches.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const { page, pageSize } = input.paging;
  return matches.slice(page * pageSize, page * pageSize + pageSize).map((m) => m.view);
}

/** The instances a search with `includeChildInstances` looks in: at most this many. */
export const MAX_SEARCH_INSTANCES = 1000;
