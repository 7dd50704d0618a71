/**
 * Connections between objects (the spec's relation kinds). A connection is an item of its own
 * (listing either side is one Query plus a BatchGet) and an ObjectLinkItem in the source's
 * `ObjectLinks`, written together in one transaction with the source's version checked, so a
 * connection and the links a client reads never disagree. Renames and deletes of a target are
 * carried to the sources' links.
 */
import { badRequest, ConditionFailed, notFound } from '../errors.ts';
import {
  getObject,
  getObjects,
  ownInstance,
  replaceObjectWith,
  updateDoc,
  transact,
  type ExtraWrite,
  type StoredObject,
} from '../db/objects-repo.ts';
import { connectionsFrom, connectionsTo, deleteConnection, putConnection, type Connection } from '../db/relations-repo.ts';
import { objectHref, renderObject } from '../model/render.ts';
import { isWithin } from '../model/placement.ts';
import type { Ctx } from '../objects/context.ts';
import { outOfScope } from '../objects/errors.ts';
import { isRelationKind, relationRule, type RelationRule } from './rules.ts';

const MAX_ATTEMPTS = 6;

export const invalidRelation = (message: string) => badRequest('InvalidRelation', message);

type Link = Record<string, unknown>;

/** The ObjectLinkItem a connection shows in its source (bare `$type`, as stored). */
export function linkItem(relation: string, target: StoredObject): Link {
  return {
    $type: 'ObjectLinkItem',
    Relation: relation,
    LinkedObjectKey: target.key,
    CommonName: typeof target.doc.CommonName === 'string' ? target.doc.CommonName : null,
    Href: objectHref(target),
  };
}

const linksOf = (o: StoredObject): Link[] => (Array.isArray(o.doc.ObjectLinks) ? (o.doc.ObjectLinks as Link[]) : []);

/** True when the caller may see `o` (its instance chain holds the caller's instance). */
export const visible = (ctx: Ctx, o: StoredObject): boolean =>
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
  const target = /^[0-9a-f]{24}$/.test(key) ? await getObject(ctx.db, key, true) : undefined;
  if (!target) throw notFound('The related object does not exist.');
  if (!visible(ctx, target) || !target.instances.includes(ownInstance(source))) throw outOfScope();
  if (target.collection !== rule.to) {
    throw invalidRelation(`A ${rule.relation} relation must point at an object of ${rule.to}, not ${target.collection}.`);
  }
  return target;
}

/**
 * Rewrites the source's relation links in one transaction with the connection items, retrying
 * when another writer changed the source in between.
 */
async function rewrite(
  ctx: Ctx,
  sourceKey: string,
  change: (source: StoredObject, current: Connection[]) => { add: Array<{ c: Connection; link: Link }>; remove: Connection[] } | undefined,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const source = await getObject(ctx.db, sourceKey, true);
    if (!source) throw notFound('The object does not exist.');
    const current = await connectionsFrom(ctx.db, source.key);
    const plan = change(source, current);
    if (!plan || (plan.add.length === 0 && plan.remove.length === 0)) return;
    const removed = new Set(plan.remove.map((c) => `${c.relation}#${c.to}`));
    const added = new Set(plan.add.map(({ c }) => `${c.relation}#${c.to}`));
    const kept = linksOf(source).filter((l) => {
      const id = `${String(l.Relation)}#${String(l.LinkedObjectKey)}`;
      return !(isRelationKind(l.Relation) && (removed.has(id) || added.has(id)));
    });
    const next: StoredObject = {
      ...source,
      version: source.version + 1,
      doc: { ...source.doc, ObjectLinks: [...kept, ...plan.add.map((a) => a.link)] },
    };
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
 * relation replaces the previous target (the rule decides, not the client).
 */
export async function connect(ctx: Ctx, source: StoredObject, relationName: string, relatedKey: string): Promise<void> {
  const rule = ruleFor(source, relationName);
  const target = await loadTarget(ctx, rule, relatedKey, source);
  await rewrite(ctx, source.key, (_s, current) => {
    const same = current.filter((c) => c.relation === rule.relation);
    if (same.some((c) => c.to === target.key)) return undefined;
    return {
      add: [{ c: { from: source.key, relation: rule.relation, to: target.key }, link: linkItem(rule.relation, target) }],
      remove: rule.oneToOne ? same : [],
    };
  });
}

/** Removes a connection; removing one that does not exist changes nothing. */
export async function disconnect(ctx: Ctx, source: StoredObject, relationName: string, relatedKey: string): Promise<void> {
  const rule = ruleFor(source, relationName);
  await rewrite(ctx, source.key, (_s, current) => ({
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
  const wanted = new Map<string, { rule: RelationRule; key: string }>();
  for (const l of relationLinks) {
    const rule = ruleFor(draft, l.Relation as string);
    if (typeof l.LinkedObjectKey !== 'string') throw invalidRelation('An ObjectLink of a relation kind needs LinkedObjectKey.');
    wanted.set(`${rule.relation}#${l.LinkedObjectKey.toLowerCase()}`, { rule, key: l.LinkedObjectKey.toLowerCase() });
  }
  const perRule = new Map<string, number>();
  for (const w of wanted.values()) perRule.set(w.rule.relation, (perRule.get(w.rule.relation) ?? 0) + 1);
  for (const [relation, n] of perRule) {
    if (relationRule(relation)!.oneToOne && n > 1) throw invalidRelation(`${relation} is one-to-one: send one link of it.`);
  }
  const current = previous ? await connectionsFrom(ctx.db, draft.key) : [];
  const have = new Set(current.map((c) => `${c.relation}#${c.to}`));
  const added = [...wanted.entries()].filter(([id]) => !have.has(id));
  const removed = current.filter((c) => !wanted.has(`${c.relation}#${c.to}`));
  if (added.length + removed.length > MAX_LINK_CHANGES) {
    throw invalidRelation(`At most ${MAX_LINK_CHANGES} connections may change in one write; use the connections calls.`);
  }
  // Every wanted target is checked, so the links stored show current names and Hrefs.
  const targets = new Map<string, StoredObject>();
  for (const [id, w] of wanted) targets.set(id, await loadTarget(ctx, w.rule, w.key, draft));
  const others = (sent as Link[]).filter((l) => !(l && typeof l === 'object' && isRelationKind(l.Relation)));
  const canonical = [...wanted.entries()].map(([id, w]) => linkItem(w.rule.relation, targets.get(id)!));
  return {
    doc: { ...draft.doc, ObjectLinks: [...others, ...canonical] },
    extra: [
      ...removed.map((c) => deleteConnection(ctx.db, c)),
      ...added.map(([, w]) => putConnection(ctx.db, { from: draft.key, relation: w.rule.relation, to: w.key })),
    ],
  };
}

/** The objects `o` is connected to, that the caller may see, rendered. One Query + BatchGet per 100. */
export async function connectedObjects(ctx: Ctx, o: StoredObject): Promise<Record<string, unknown>[]> {
  const conns = await connectionsFrom(ctx.db, o.key);
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
