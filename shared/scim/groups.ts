/**
 * SCIM Groups are access levels of the token's instance: `id` is the level's Key, `displayName`
 * its CommonName (unique in its folder: 409 uniqueness), `externalId` kept in `Scim.ExternalId`,
 * and `members` the people with an `AccessLevel` connection to it. A member added or removed is
 * a connect or disconnect of that person through the relationship service, exactly as
 * `POST`/`DELETE <person>/connections/AccessLevel` do (the person's ObjectLinks and the connection
 * item in one transaction): audited, live and in webhooks, and the person's next access decision
 * follows.
 *
 * Members are read from the level's references (one Query of GSI1 `RB#<level>`); a PATCH that only
 * adds or removes members does not read them (connect and disconnect are idempotent), and it
 * answers 204 as Entra ID and Okta expect.
 */
import { ownInstance } from '../db/objects-repo.ts';
import { connectionsTo } from '../db/relations-repo.ts';
import { newBudget, readByName } from '../db/search-repo.ts';
import { collectionByName } from '../model/collections.ts';
import { LIMITS } from '../model/limits.ts';
import { SCIM_FIELD } from '../model/scim-record.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { instancePage } from '../db/scim-repo.ts';
import { createIn, removeAt } from '../objects/collection.ts';
import { isPlainObject, type Doc } from '../objects/validate.ts';
import { connect, disconnect } from '../relations/relation-links.ts';
import type { ApiRequest } from '../http/operation-contract.ts';
import type { ScimCall } from './call.ts';
import { GROUP_SCHEMA, listOf } from './discovery.ts';
import { invalidValue, ScimError } from './scim-errors.ts';
import { parseScimFilter } from './filter.ts';
import { applyPatch, headAttribute, MAX_PATCH_OPERATIONS, patchOperations, type PatchOp } from './patch.ts';
import { answer, metaOf, objectOf, requireObject, rewriteObject, scimPaging } from './resources.ts';

const LEVELS = collectionByName('accesslevels')!;
const RELATION = 'AccessLevel';

/** The keys of the people connected to a level by `AccessLevel`. */
async function memberKeys(call: ScimCall, levelKey: string): Promise<string[]> {
  return (await connectionsTo(call.ctx.db, levelKey)).filter((c) => c.relation === RELATION).map((c) => c.from);
}

/** An access level as a SCIM Group; `members` undefined leaves them out (`excludedAttributes=members`). */
function toScimGroup(o: StoredObject, members: readonly string[] | undefined, base: string): Record<string, unknown> {
  const record = isPlainObject(o.doc[SCIM_FIELD]) ? (o.doc[SCIM_FIELD] as Doc) : {};
  return {
    schemas: [GROUP_SCHEMA],
    id: o.key,
    ...(typeof record.ExternalId === 'string' ? { externalId: record.ExternalId } : {}),
    displayName: typeof o.doc.CommonName === 'string' ? o.doc.CommonName : '',
    ...(members ? { members: members.map((k) => ({ value: k, $ref: `${base}/Users/${k}`, type: 'User' })) } : {}),
    meta: metaOf(o, 'Group', `${base}/Groups/${o.key}`),
  };
}

const excludesMembers = (req: ApiRequest): boolean =>
  (req.query.excludedAttributes?.[0] ?? '')
    .split(',')
    .some((a) => a.trim().toLowerCase() === 'members');

async function rendered(call: ScimCall, req: ApiRequest, o: StoredObject): Promise<Record<string, unknown>> {
  return toScimGroup(o, excludesMembers(req) ? undefined : await memberKeys(call, o.key), call.base);
}

/** The member keys of a `members` value (`[{"value": "<person id>"}]`). */
function memberValues(value: unknown): string[] {
  const list = value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
  if (list.length > MAX_PATCH_OPERATIONS) throw invalidValue(`At most ${MAX_PATCH_OPERATIONS} members a request.`);
  return list.map((m, i) => {
    const v = isPlainObject(m) ? m.value : m;
    if (typeof v !== 'string' || v === '') throw invalidValue(`members[${i}].value is a person's id.`);
    return v;
  });
}

/** What the group's members become: a set (`replace`, remove all) or changes to the current set. */
class MemberChanges {
  private all: Set<string> | undefined;
  readonly add = new Set<string>();
  readonly remove = new Set<string>();
  setAll(keys: readonly string[]): void {
    this.all = new Set(keys);
    this.add.clear();
    this.remove.clear();
  }
  addOne(k: string): void {
    this.remove.delete(k);
    this.add.add(k);
  }
  removeOne(k: string): void {
    this.add.delete(k);
    this.remove.add(k);
  }
  get empty(): boolean {
    return this.all === undefined && this.add.size === 0 && this.remove.size === 0;
  }
  /** The people to connect and to disconnect; the current members are read only after a replace. */
  async plan(current: () => Promise<string[]>): Promise<{ connect: string[]; disconnect: string[] }> {
    if (this.all === undefined) return { connect: [...this.add], disconnect: [...this.remove] };
    const wanted = new Set([...this.all, ...this.add].filter((k) => !this.remove.has(k)));
    const have = new Set(await current());
    return { connect: [...wanted].filter((k) => !have.has(k)), disconnect: [...have].filter((k) => !wanted.has(k)) };
  }
}

const MEMBER_FILTER = /^members\[\s*value\s+eq\s+"([^"]*)"\s*\]$/i;

/** Splits a PATCH into its member changes and the operations on the level's own attributes. */
function splitPatch(ops: readonly PatchOp[]): { members: MemberChanges; own: PatchOp[] } {
  const members = new MemberChanges();
  const own: PatchOp[] = [];
  for (const op of ops) {
    const path = op.path ?? '';
    const one = MEMBER_FILTER.exec(path.trim());
    if (one) {
      if (op.op !== 'remove') throw new ScimError(400, 'invalidPath', 'A members filter path is for remove.');
      members.removeOne(one[1]!);
    } else if (headAttribute(path) === 'members') {
      if (path.trim().toLowerCase() !== 'members') throw new ScimError(400, 'invalidPath', `${path} is not a path this service changes.`);
      if (op.op === 'replace') members.setAll(memberValues(op.value));
      else if (op.op === 'add') memberValues(op.value).forEach((k) => members.addOne(k));
      else if (op.value === undefined) members.setAll([]);
      else memberValues(op.value).forEach((k) => members.removeOne(k));
    } else own.push(op);
  }
  return { members, own };
}

/** Connects and disconnects people of the instance (a 400 invalidValue for an id that is not one, before any change). */
async function applyMembers(call: ScimCall, level: StoredObject, changes: MemberChanges): Promise<void> {
  if (changes.empty) return;
  const { connect: add, disconnect: remove } = await changes.plan(() => memberKeys(call, level.key));
  const people = new Map<string, StoredObject>();
  for (const k of add) {
    const person = await objectOf(call, 'people', k);
    if (!person) throw invalidValue(`Member ${k} is not a User of this instance.`);
    people.set(k, person);
  }
  // Each change is a write of its own person: they do not contend, so a few go at once.
  await inTurns([...people.values()], (person) => connect(call.ctx, person, RELATION, level.key));
  await inTurns(remove, async (k) => {
    const person = await objectOf(call, 'people', k);
    // A member that is gone is no member any more.
    if (person) await disconnect(call.ctx, person, RELATION, level.key);
  });
}

/** Changes of members at once, at most this many: a directory's large group within the call's time, the store not flooded. */
const MEMBER_WRITES_AT_ONCE = 8;

async function inTurns<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(MEMBER_WRITES_AT_ONCE, items.length) }, worker));
}

interface GroupInput {
  readonly displayName: string;
  readonly externalId: string | undefined;
  readonly members: string[] | undefined;
}

function readGroup(body: unknown): GroupInput {
  if (!isPlainObject(body)) throw invalidValue('The body is a SCIM Group.');
  const name = body.displayName;
  if (typeof name !== 'string' || name.trim() === '' || name.length > LIMITS.name) throw invalidValue(`displayName is required, at most ${LIMITS.name} characters.`);
  const ext = body.externalId;
  if (ext !== undefined && ext !== null && (typeof ext !== 'string' || ext.length > LIMITS.code)) throw invalidValue('externalId is a string.');
  return { displayName: name, externalId: typeof ext === 'string' && ext !== '' ? ext : undefined, members: body.members === undefined ? undefined : memberValues(body.members) };
}

function levelDoc(input: Pick<GroupInput, 'displayName' | 'externalId'>, current: Doc | undefined): Doc {
  const doc: Doc = current ? { ...current } : { $type: LEVELS.typeName };
  doc.CommonName = input.displayName;
  if (input.externalId !== undefined) doc[SCIM_FIELD] = { ExternalId: input.externalId };
  else delete doc[SCIM_FIELD];
  return doc;
}

async function filtered(call: ScimCall, filter: string): Promise<StoredObject[]> {
  const { attribute, value } = parseScimFilter(filter, 'Group');
  if (attribute === 'id') {
    const o = await objectOf(call, 'accesslevels', value);
    return o ? [o] : [];
  }
  return (await readByName(call.ctx.db, call.instance.key, { equals: value }, newBudget())).filter(
    (o) => o.collection === 'accesslevels' && ownInstance(o) === call.instance.key && o.doc.CommonName === value,
  );
}

export async function listGroups(call: ScimCall, req: ApiRequest) {
  const { startIndex, count } = scimPaging(req);
  const filter = req.query.filter?.[0];
  let page: StoredObject[];
  let total: number;
  if (filter !== undefined && filter.trim() !== '') {
    const all = await filtered(call, filter);
    page = all.slice(startIndex - 1, startIndex - 1 + count);
    total = all.length;
  } else {
    const { items, more } = await instancePage(call.ctx.db, call.instance.key, 'accesslevels', startIndex - 1, count);
    page = items;
    total = startIndex - 1 + items.length + (more ? 1 : 0);
  }
  const groups = await Promise.all(page.map((o) => rendered(call, req, o)));
  return answer(call, 200, listOf(groups, total, startIndex));
}

export async function getGroup(call: ScimCall, req: ApiRequest, id: string) {
  return answer(call, 200, await rendered(call, req, await requireObject(call, 'accesslevels', id, 'Group')));
}

export async function createGroup(call: ScimCall, body: unknown) {
  const input = readGroup(body);
  const level = await createIn(call.ctx, LEVELS, call.instance.key, levelDoc(input, undefined));
  const members = new MemberChanges();
  (input.members ?? []).forEach((k) => members.addOne(k));
  await applyMembers(call, level, members);
  return answer(call, 201, toScimGroup(level, input.members ?? [], call.base), { location: `${call.base}/Groups/${level.key}` });
}

export async function replaceGroup(call: ScimCall, req: ApiRequest, id: string, body: unknown) {
  const input = readGroup(body);
  const read = await requireObject(call, 'accesslevels', id, 'Group');
  const level = await rewriteObject(call.ctx, read, (cur) => levelDoc(input, cur.doc));
  // Members absent from a PUT are left as they are (RFC 7644 §3.5.1 lets a service provider choose).
  if (input.members !== undefined) {
    const members = new MemberChanges();
    members.setAll(input.members);
    await applyMembers(call, level, members);
  }
  return answer(call, 200, await rendered(call, req, level));
}

export async function patchGroup(call: ScimCall, id: string, body: unknown) {
  const { members, own } = splitPatch(patchOperations(body, GROUP_SCHEMA));
  const read = await requireObject(call, 'accesslevels', id, 'Group');
  const level =
    own.length === 0
      ? read
      : await rewriteObject(call.ctx, read, (cur) => {
          const patched = applyPatch(toScimGroup(cur, undefined, call.base), own);
          return levelDoc(readGroup(patched), cur.doc);
        });
  await applyMembers(call, level, members);
  return answer(call, 204);
}

export async function removeGroup(call: ScimCall, id: string) {
  const o = await requireObject(call, 'accesslevels', id, 'Group');
  await removeAt(call.ctx, { kind: 'member', collection: 'accesslevels', folderKey: o.folder, key: o.key });
  return answer(call, 204);
}
