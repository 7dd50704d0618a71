/**
 * Connections between objects (the spec's relation kinds). A connection is an item of its own
 * (listing either side is one Query plus a BatchGet) and an ObjectLinkItem in the source's
 * `ObjectLinks`, written together in one transaction with the source's version checked, so a
 * connection and the links a client reads never disagree. Renames and deletes of a target are
 * carried to the sources' links. A scheduled access level also carries its window: on the
 * connection item, and as the link's `MetaDataBson` (see `window.ts`).
 */
import { badRequest, ConditionFailed, notFound } from '../errors.ts';
import { getObject, getObjects, ownInstance, type ExtraWrite } from '../db/objects-repo.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { replaceObjectWith, updateDoc, transact } from '../db/object-writes.ts';
import { connectionsFrom, connectionsTo, deleteConnection, putConnection, type Connection } from '../db/relations-repo.ts';
import { objectHref, renderObject } from '../model/object-render.ts';
import { isWithin } from '../model/placement.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { outOfScope } from '../objects/object-errors.ts';
import { isRelationKind, relationRule, SCHEDULED_ACCESS_LEVEL, type RelationRule } from './rules.ts';
import { metaDataOf, OPEN_WINDOW, sameWindow, windowFromMetaData, windowOf, type Window } from './window.ts';

const MAX_ATTEMPTS = 6;

export const invalidRelation = (message: string) => badRequest('InvalidRelation', message);

type Link = Record<string, unknown>;

/**
 * The ObjectLinkItem a connection shows in its source (bare `$type`, as stored); a scheduled
 * access level's shows its window as `metaData` (base64 BSON).
 */
function linkItem(relation: string, target: StoredObject, metaData?: string): Link {
  return {
    $type: 'ObjectLinkItem',
    Relation: relation,
    LinkedObjectKey: target.key,
    CommonName: typeof target.doc.CommonName === 'string' ? target.doc.CommonName : null,
    Href: objectHref(target),
    ...(metaData !== undefined ? { MetaDataBson: metaData } : {}),
  };
}

/** A connection item, with its window when it has one. */
const connection = (from: string, relation: string, to: string, w: Window | undefined): Connection => ({
  from,
  relation,
  to,
  ...(w ? { activeOn: w.activeOn, expiresOn: w.expiresOn } : {}),
});

const linkId = (l: Link): string => `${String(l.Relation)}#${String(l.LinkedObjectKey)}`;
const connectionId = (c: Connection): string => `${c.relation}#${c.to}`;

const linksOf = (o: StoredObject): Link[] => (Array.isArray(o.doc.ObjectLinks) ? (o.doc.ObjectLinks as Link[]) : []);

/** True when the caller may see `o` (its instance chain holds the caller's instance). */
const visible = (ctx: Ctx, o: StoredObject): boolean =>
  o.instances.includes(ctx.principal.instanceKey) || isWithin(ctx.principal.instanceKey, o);

/** The rule of a relation from `source`, or a 400 InvalidRelation. */
export function ruleFor(source: StoredObject, relationName: string): RelationRule {
  const rule = relationRule(relationName);
  if (!rule) throw invalidRelation(`${relationName} is not a relation kind.`);
  if (!rule.from.includes(source.collection)) {
    throw invalidRelation(`A ${rule.relation} relation cannot start at an object of ${source.collection}.`);
  }
  return rule;
}

/**
 * The target of a new connection: 404 when missing, 403 outside the caller's scope or outside the
 * source's own instance (everyone who can read the source must be able to read its links, so a
 * link never shows a name from a tenant its reader cannot see), 400 of the wrong type.
 */
async function loadTarget(ctx: Ctx, rule: RelationRule, key: string, source: StoredObject): Promise<StoredObject> {
  return checkTarget(ctx, rule, isKey(key) ? await getObject(ctx.db, key, true) : undefined, source);
}

const isKey = (key: string): boolean => /^[0-9a-f]{24}$/.test(key);

/** {@link loadTarget} of many keys in one BatchGetItem per 100; the first bad key, in order, decides the answer. */
async function loadTargets(ctx: Ctx, rule: RelationRule, keys: readonly string[], source: StoredObject): Promise<Map<string, StoredObject>> {
  const found = new Map((await getObjects(ctx.db, keys.filter(isKey), true)).map((o) => [o.key, o] as const));
  for (const key of keys) checkTarget(ctx, rule, found.get(key), source);
  return found;
}

function checkTarget(ctx: Ctx, rule: RelationRule, target: StoredObject | undefined, source: StoredObject): StoredObject {
  if (!target) throw notFound('The related object does not exist.');
  if (!visible(ctx, target) || !target.instances.includes(ownInstance(source))) throw outOfScope();
  if (target.collection !== rule.to) {
    throw invalidRelation(`A ${rule.relation} relation must point at an object of ${rule.to}, not ${target.collection}.`);
  }
  return target;
}

/**
 * Rewrites the source's relation links in one transaction with the connection items, retrying
 * when another writer changed the source in between. An added connection that exists already
 * (a new window) replaces its item and its link, in place.
 */
async function rewrite(
  ctx: Ctx,
  located: StoredObject,
  change: (source: StoredObject, current: Connection[]) => { add: Array<{ c: Connection; link: Link }>; remove: Connection[] } | undefined,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    // The first attempt uses the source as located (a consistent read); a retry reads it again.
    const source = attempt === 0 ? located : await getObject(ctx.db, located.key, true);
    if (!source) throw notFound('The object does not exist.');
    const current = await connectionsFrom(ctx.db, source.key);
    const plan = change(source, current);
    if (!plan || (plan.add.length === 0 && plan.remove.length === 0)) return;
    const removed = new Set(plan.remove.map(connectionId));
    const added = new Map(plan.add.map(({ c, link }) => [connectionId(c), link] as const));
    const placed = new Set<string>();
    const links: Link[] = [];
    for (const l of linksOf(source)) {
      const id = linkId(l);
      if (isRelationKind(l.Relation) && (removed.has(id) || added.has(id))) {
        if (added.has(id) && !placed.has(id)) links.push(added.get(id)!);
        placed.add(id);
        continue;
      }
      links.push(l);
    }
    for (const [id, link] of added) if (!placed.has(id)) links.push(link);
    const next: StoredObject = { ...source, version: source.version + 1, doc: { ...source.doc, ObjectLinks: links } };
    const extra: ExtraWrite[] = [
      ...plan.remove.map((c) => deleteConnection(ctx.db, c)),
      ...plan.add.map(({ c }) => putConnection(ctx.db, c)),
    ];
    try {
      await replaceObjectWith(ctx.db, next, source, [], [], extra);
      return;
    } catch (err) {
      if (!(err instanceof ConditionFailed) || attempt + 1 >= MAX_ATTEMPTS) throw err;
    }
  }
}

/**
 * Connects `source` to the object `relatedKey` by `relationName`. Idempotent; a one-to-one
 * relation replaces the previous target (the rule decides, not the client). A scheduled access
 * level gets `window` (open when undefined); connecting it again with another window updates it.
 */
export async function connect(ctx: Ctx, source: StoredObject, relationName: string, relatedKey: string, window?: Window): Promise<void> {
  const rule = ruleFor(source, relationName);
  const target = await loadTarget(ctx, rule, relatedKey, source);
  const w = rule.relation === SCHEDULED_ACCESS_LEVEL ? (window ?? OPEN_WINDOW) : undefined;
  const metaData = w ? metaDataOf(w) : undefined;
  await rewrite(ctx, source, (_s, current) => {
    const same = current.filter((c) => c.relation === rule.relation);
    const existing = same.find((c) => c.to === target.key);
    if (existing && (!w || sameWindow(windowOf(existing), w))) return undefined;
    return {
      add: [{ c: connection(source.key, rule.relation, target.key, w), link: linkItem(rule.relation, target, metaData) }],
      remove: rule.oneToOne ? same.filter((c) => c.to !== target.key) : [],
    };
  });
}

/** One access level of a `scheduledaccesslevelbatch`. */
export interface ScheduledLevel {
  readonly key: string;
  readonly window: Window;
}

const tooManyChanges = () =>
  invalidRelation(`At most ${MAX_LINK_CHANGES} connections may change in one write; use the connections calls.`);

/**
 * Replaces the person's ScheduledAccessLevel connections with exactly `wanted` (other relation
 * kinds untouched) in one transaction with the person's links: every target is checked first
 * (404, 403, 400: nothing is written), an identical set changes nothing, a new window updates the
 * connection and its link. The same level twice with different windows is a 400.
 */
export async function replaceScheduledAccessLevels(ctx: Ctx, person: StoredObject, wanted: readonly ScheduledLevel[]): Promise<void> {
  const rule = ruleFor(person, SCHEDULED_ACCESS_LEVEL);
  const windows = new Map<string, Window>();
  for (const { key, window } of wanted) {
    const prior = windows.get(key);
    if (prior && !sameWindow(prior, window)) throw invalidRelation(`Access level ${key} is sent twice with different windows.`);
    windows.set(key, window);
  }
  const targets = await loadTargets(ctx, rule, [...windows.keys()], person);
  const metaData = new Map([...windows].map(([k, w]) => [k, metaDataOf(w)] as const));
  await rewrite(ctx, person, (_s, current) => {
    const have = new Map(current.filter((c) => c.relation === rule.relation).map((c) => [c.to, c] as const));
    const remove = [...have.values()].filter((c) => !windows.has(c.to));
    const add = [...windows]
      .filter(([k, w]) => !have.has(k) || !sameWindow(windowOf(have.get(k)!), w))
      .map(([k, w]) => ({ c: connection(person.key, rule.relation, k, w), link: linkItem(rule.relation, targets.get(k)!, metaData.get(k)) }));
    if (add.length + remove.length > MAX_LINK_CHANGES) throw tooManyChanges();
    return { add, remove };
  });
}

/** Removes a connection; removing one that does not exist changes nothing. */
export async function disconnect(ctx: Ctx, source: StoredObject, relationName: string, relatedKey: string): Promise<void> {
  const rule = ruleFor(source, relationName);
  await rewrite(ctx, source, (_s, current) => ({
    add: [],
    remove: current.filter((c) => c.relation === rule.relation && c.to === relatedKey),
  }));
}

/** At most this many connections change with one POST or PUT (they share its transaction). */
export const MAX_LINK_CHANGES = 40;

/**
 * Plans the relation-kind ObjectLinks of an object being written (POST or PUT), before the write:
 * refuses bad ones (400/403/404: nothing is written), and answers the document to store, with
 * those links in canonical form, and the connection items to add and delete in the object's own
 * transaction. The connections of the relation kinds become exactly the ones sent; other
 * ObjectLinks are kept as sent. A PUT without `ObjectLinks` leaves the connections (and their
 * links) as they are.
 */
export async function planObjectLinks(
  ctx: Ctx,
  draft: StoredObject,
  previous: StoredObject | undefined,
): Promise<{ doc: Record<string, unknown>; extra: ExtraWrite[] } | undefined> {
  const sent = draft.doc.ObjectLinks;
  if (!Array.isArray(sent)) {
    const kept = previous ? linksOf(previous).filter((l) => isRelationKind(l.Relation)) : [];
    return kept.length > 0 ? { doc: { ...draft.doc, ObjectLinks: kept }, extra: [] } : undefined;
  }
  const relationLinks = (sent as Link[]).filter((l) => l && typeof l === 'object' && isRelationKind(l.Relation));
  if (!previous && relationLinks.length === 0) return undefined;
  const wanted = new Map<string, { rule: RelationRule; key: string; window: Window | undefined }>();
  for (const l of relationLinks) {
    const rule = ruleFor(draft, l.Relation as string);
    if (typeof l.LinkedObjectKey !== 'string') throw invalidRelation('An ObjectLink of a relation kind needs LinkedObjectKey.');
    // A scheduled access level's window comes from its link's MetaDataBson.
    const window = rule.relation === SCHEDULED_ACCESS_LEVEL ? windowFromMetaData(l.MetaDataBson) : undefined;
    const key = l.LinkedObjectKey.toLowerCase();
    const prior = wanted.get(`${rule.relation}#${key}`);
    if (prior?.window && window && !sameWindow(prior.window, window)) {
      throw invalidRelation(`Access level ${key} is linked twice with different windows.`);
    }
    wanted.set(`${rule.relation}#${key}`, { rule, key, window });
  }
  const perRule = new Map<string, number>();
  for (const w of wanted.values()) perRule.set(w.rule.relation, (perRule.get(w.rule.relation) ?? 0) + 1);
  for (const [relation, n] of perRule) {
    if (relationRule(relation)!.oneToOne && n > 1) throw invalidRelation(`${relation} is one-to-one: send one link of it.`);
  }
  const current = previous ? await connectionsFrom(ctx.db, draft.key) : [];
  const have = new Map(current.map((c) => [connectionId(c), c] as const));
  // New connections, and scheduled ones whose window changed (their item is written again).
  const added = [...wanted.entries()].filter(([id, w]) => !have.has(id) || (w.window && !sameWindow(windowOf(have.get(id)!), w.window)));
  const removed = current.filter((c) => !wanted.has(connectionId(c)));
  if (added.length + removed.length > MAX_LINK_CHANGES) throw tooManyChanges();
  // Every wanted target is checked, so the links stored show current names and Hrefs.
  const targets = new Map<string, StoredObject>();
  for (const [id, w] of wanted) targets.set(id, await loadTarget(ctx, w.rule, w.key, draft));
  const others = (sent as Link[]).filter((l) => !(l && typeof l === 'object' && isRelationKind(l.Relation)));
  const canonical = [...wanted.entries()].map(([id, w]) => linkItem(w.rule.relation, targets.get(id)!, w.window ? metaDataOf(w.window) : undefined));
  return {
    doc: { ...draft.doc, ObjectLinks: [...others, ...canonical] },
    extra: [
      ...removed.map((c) => deleteConnection(ctx.db, c)),
      ...added.map(([, w]) => putConnection(ctx.db, connection(draft.key, w.rule.relation, w.key, w.window))),
    ],
  };
}

/**
 * The objects `o` is connected to (by `relation`, or by any), that the caller may see, rendered.
 * One Query + BatchGet per 100.
 */
export async function connectedObjects(ctx: Ctx, o: StoredObject, relation?: string): Promise<Record<string, unknown>[]> {
  const conns = await connectionsFrom(ctx.db, o.key, relation);
  const objs = await getObjects(ctx.db, conns.map((c) => c.to));
  return objs.filter((x) => visible(ctx, x)).map((x) => renderObject(x, ctx.ns));
}

/** The objects connected to `o`, that the caller may see, rendered. One Query + BatchGet per 100. */
export async function referencingObjects(ctx: Ctx, o: StoredObject): Promise<Record<string, unknown>[]> {
  const conns = await connectionsTo(ctx.db, o.key);
  const objs = await getObjects(ctx.db, conns.map((c) => c.from));
  return objs.filter((x) => visible(ctx, x)).map((x) => renderObject(x, ctx.ns));
}

/** Server-side edit of a source's links (no version bump: not a client edit), retried on races. */
async function editLinks(ctx: Ctx, sourceKey: string, edit: (links: Link[]) => Link[] | undefined): Promise<void> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const s = await getObject(ctx.db, sourceKey, true);
    if (!s) return;
    const next = edit(linksOf(s));
    if (!next) return;
    try {
      await updateDoc(ctx.db, s, { ...s.doc, ObjectLinks: next });
      return;
    } catch (err) {
      if (!(err instanceof ConditionFailed)) throw err;
    }
  }
}

/**
 * After `o` was deleted: removes every connection from and to it, and the links that pointed at
 * it from its sources.
 */
export async function forgetObject(ctx: Ctx, o: StoredObject): Promise<void> {
  const [from, to] = await Promise.all([connectionsFrom(ctx.db, o.key), connectionsTo(ctx.db, o.key)]);
  const all = [...from, ...to];
  for (let i = 0; i < all.length; i += 90) await transact(ctx.db, all.slice(i, i + 90).map((c) => deleteConnection(ctx.db, c)));
  for (const source of new Set(to.map((c) => c.from))) {
    await editLinks(ctx, source, (links) => {
      const kept = links.filter((l) => !(isRelationKind(l.Relation) && l.LinkedObjectKey === o.key));
      return kept.length === links.length ? undefined : kept;
    });
  }
}

/** After `o` was renamed: its sources' links show the new CommonName. */
export async function refreshLinksTo(ctx: Ctx, o: StoredObject): Promise<void> {
  const name = typeof o.doc.CommonName === 'string' ? o.doc.CommonName : null;
  const to = await connectionsTo(ctx.db, o.key);
  for (const source of new Set(to.map((c) => c.from))) {
    await editLinks(ctx, source, (links) => {
      let changed = false;
      const next = links.map((l) => {
        if (!isRelationKind(l.Relation) || l.LinkedObjectKey !== o.key || l.CommonName === name) return l;
        changed = true;
        return { ...l, CommonName: name };
      });
      return changed ? next : undefined;
    });
  }
}
