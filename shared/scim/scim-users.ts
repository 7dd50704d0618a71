/**
 * SCIM Users are people (PersonInfo) of the token's instance:
 *
 * | SCIM                              | person                                                     |
 * | --------------------------------- | ---------------------------------------------------------- |
 * | `id`                              | Key                                                        |
 * | `userName` (unique, any case)     | `Scim.UserName`, claimed in the instance (409 uniqueness)  |
 * | `externalId` (unique)             | `Scim.ExternalId`, claimed in the instance                 |
 * | `name.givenName` / `familyName`   | GivenName / Surname                                        |
 * | `displayName`                     | CommonName (when absent: the name, else the userName)      |
 * | `emails` (`value`, `type`, `primary`) | the EmailAddressInfo addresses (`MailTo`, `Type`, `Primary`); other addresses are kept |
 * | `active`                          | `Scim.Active`; `false` disables every card, `true` re-enables those it disabled |
 *
 * Everything else of the person (cards, connections, notes, vendor fields) is kept by every SCIM
 * write. New people go in the instance's own folder; people of any folder of the instance are
 * found by id and by filter.
 */
import { claimOwner, ownInstance } from '../db/objects-repo.ts';
import { newBudget, readByName } from '../db/search-repo.ts';
import { cardsWithKeys, type Card } from '../model/card-assignments.ts';
import { scimExternalIdClaim, scimUserNameClaim } from '../model/claims.ts';
import { collectionByName } from '../model/collections.ts';
import { LIMITS } from '../model/limits.ts';
import { SCIM_FIELD, scimRecordOf, type ScimRecord } from '../model/scim-record.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { instancePage } from '../db/scim-repo.ts';
import { createIn, removeAt } from '../objects/collection.ts';
import { isPlainObject, type Doc } from '../objects/validate.ts';
import type { ApiRequest } from '../http/operation-contract.ts';
import type { ScimCall } from './call.ts';
import { listOf, USER_SCHEMA } from './discovery.ts';
import { invalidValue } from './scim-errors.ts';
import { parseScimFilter } from './filter.ts';
import { applyPatch, booleanish, patchOperations } from './patch.ts';
import { answer, metaOf, objectOf, requireObject, rewriteObject, scimPaging } from './resources.ts';

const PEOPLE = collectionByName('people')!;
const EMAIL = 'EmailAddressInfo';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A person as a SCIM User. */
function toScimUser(o: StoredObject, base: string): Record<string, unknown> {
  const r = scimRecordOf(o.doc);
  const given = str(o.doc.GivenName);
  const family = str(o.doc.Surname);
  const formatted = [given, family].filter(Boolean).join(' ');
  const addresses = Array.isArray(o.doc.Addresses) ? o.doc.Addresses : [];
  const emails = addresses
    .filter((a): a is Doc => isPlainObject(a) && a.$type === EMAIL && str(a.MailTo) !== undefined)
    .map((a) => ({ value: a.MailTo, ...(str(a.Type) ? { type: a.Type } : {}), primary: a.Primary === true }));
  return {
    schemas: [USER_SCHEMA],
    id: o.key,
    ...(r.ExternalId !== undefined ? { externalId: r.ExternalId } : {}),
    userName: r.UserName ?? o.key,
    name: { ...(given ? { givenName: given } : {}), ...(family ? { familyName: family } : {}), ...(formatted ? { formatted } : {}) },
    ...(str(o.doc.CommonName) ? { displayName: o.doc.CommonName } : {}),
    emails,
    active: r.Active ?? true,
    meta: metaOf(o, 'User', `${base}/Users/${o.key}`),
  };
}

const text = (v: unknown, what: string, max: number): string | undefined => {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || v.length > max) throw invalidValue(`${what} is a string of at most ${max} characters.`);
  return v;
};

/** The person fields and the SCIM record a SCIM User sets (RFC 7644 §3.5.1: a PUT's absent attributes are cleared, `active` is kept). */
interface UserInput {
  readonly userName: string;
  readonly externalId: string | undefined;
  readonly givenName: string | undefined;
  readonly familyName: string | undefined;
  readonly displayName: string;
  readonly emails: Doc[];
  readonly active: boolean | undefined;
}

function readUser(body: unknown): UserInput {
  if (!isPlainObject(body)) throw invalidValue('The body is a SCIM User.');
  const userName = text(body.userName, 'userName', LIMITS.code);
  if (!userName) throw invalidValue('userName is required.');
  const name = isPlainObject(body.name) ? body.name : {};
  const givenName = text(name.givenName, 'name.givenName', LIMITS.name);
  const familyName = text(name.familyName, 'name.familyName', LIMITS.name);
  const formatted = text(name.formatted, 'name.formatted', LIMITS.name);
  const displayName = text(body.displayName, 'displayName', LIMITS.name) ?? formatted ?? ([givenName, familyName].filter(Boolean).join(' ') || userName);
  if (body.emails !== undefined && body.emails !== null && !Array.isArray(body.emails)) throw invalidValue('emails is an array.');
  const emails = ((body.emails as unknown[] | undefined) ?? []).map((e, i) => {
    if (!isPlainObject(e)) throw invalidValue(`emails[${i}] is an object.`);
    const value = text(e.value, `emails[${i}].value`, LIMITS.code);
    if (!value) throw invalidValue(`emails[${i}].value is required.`);
    const type = text(e.type, `emails[${i}].type`, LIMITS.code);
    return { $type: EMAIL, MailTo: value, ...(type ? { Type: type } : {}), ...(booleanish(e.primary) === true ? { Primary: true } : {}) };
  });
  const active = booleanish(body.active);
  if (active !== undefined && active !== null && typeof active !== 'boolean') throw invalidValue('active is a boolean.');
  return {
    userName,
    externalId: text(body.externalId, 'externalId', LIMITS.code),
    givenName,
    familyName,
    displayName,
    emails,
    active: typeof active === 'boolean' ? active : undefined,
  };
}

/**
 * The cards and record after `active`: false disables every card not disabled yet and remembers
 * it; true re-enables exactly the cards deactivation disabled (an operator's own disabling stays).
 */
function withActive(personKey: string, doc: Doc, record: ScimRecord, active: boolean): { cards: Card[] | undefined; record: ScimRecord } {
  const cards = Array.isArray(doc.CardAssignments) ? cardsWithKeys(personKey, doc) : undefined;
  const remembered = new Set(record.DeactivatedCardKeys ?? []);
  if (!active) {
    const next = (cards ?? []).map((c) => {
      if (c.IsDisabled === true) return c;
      remembered.add(String(c.Key));
      return { ...c, IsDisabled: true };
    });
    return { cards: cards && next, record: { ...record, Active: false, DeactivatedCardKeys: [...remembered] } };
  }
  const next = (cards ?? []).map((c) => {
    if (!remembered.has(String(c.Key))) return c;
    const { IsDisabled: _off, ...enabled } = c;
    return enabled;
  });
  const { DeactivatedCardKeys: _done, ...rest } = record;
  return { cards: cards && next, record: { ...rest, Active: true } };
}

/** The person document a SCIM User makes of `current` (undefined: a new person). */
function personDoc(input: UserInput, key: string | undefined, current: Doc | undefined): Doc {
  const base: Doc = current ? { ...current } : { $type: PEOPLE.typeName };
  const addresses = Array.isArray(base.Addresses) ? base.Addresses.filter((a) => !(isPlainObject(a) && a.$type === EMAIL)) : [];
  const doc: Doc = { ...base, CommonName: input.displayName, Addresses: [...addresses, ...input.emails] };
  for (const [field, value] of [['GivenName', input.givenName], ['Surname', input.familyName]] as const) {
    if (value === undefined) delete doc[field];
    else doc[field] = value;
  }
  let record: ScimRecord = { ...scimRecordOf(base), UserName: input.userName };
  if (input.externalId === undefined) {
    const { ExternalId: _gone, ...rest } = record;
    record = rest;
  } else record = { ...record, ExternalId: input.externalId };
  const active = input.active ?? record.Active ?? true;
  if (key !== undefined && (active === false || record.Active === false)) {
    const after = withActive(key, doc, record, active);
    if (after.cards) doc.CardAssignments = after.cards;
    record = after.record;
  } else record = { ...record, Active: active };
  doc[SCIM_FIELD] = record;
  return doc;
}

/** The people of the instance a filter names: one claim read and one GetItem, or one name Query. */
async function filtered(call: ScimCall, filter: string): Promise<StoredObject[]> {
  const { attribute, value } = parseScimFilter(filter, 'User');
  const instanceKey = call.instance.key;
  const byClaim = async (claim: ReturnType<typeof scimUserNameClaim>) => {
    const owner = await claimOwner(call.ctx.db, claim, true);
    const o = owner ? await objectOf(call, 'people', owner) : undefined;
    return o ? [o] : [];
  };
  switch (attribute) {
    case 'id': {
      const o = await objectOf(call, 'people', value);
      return o ? [o] : [];
    }
    case 'userName':
      return (await byClaim(scimUserNameClaim(instanceKey, value))).filter((o) => scimRecordOf(o.doc).UserName?.toLowerCase() === value.toLowerCase());
    case 'externalId':
      return (await byClaim(scimExternalIdClaim(instanceKey, value))).filter((o) => scimRecordOf(o.doc).ExternalId === value);
    case 'displayName':
      return (await readByName(call.ctx.db, instanceKey, { equals: value }, newBudget())).filter(
        (o) => o.collection === 'people' && ownInstance(o) === instanceKey && o.doc.CommonName === value,
      );
  }
}

export async function listUsers(call: ScimCall, req: ApiRequest) {
  const { startIndex, count } = scimPaging(req);
  const filter = req.query.filter?.[0];
  if (filter !== undefined && filter.trim() !== '') {
    const all = await filtered(call, filter);
    const page = all.slice(startIndex - 1, startIndex - 1 + count);
    return answer(call, 200, listOf(page.map((o) => toScimUser(o, call.base)), all.length, startIndex));
  }
  const { items, more } = await instancePage(call.ctx.db, call.instance.key, 'people', startIndex - 1, count);
  // Counting every person would read the whole instance: past this page the total is a lower
  // bound (one more than what has been seen), exact once a page is the last.
  const total = startIndex - 1 + items.length + (more ? 1 : 0);
  return answer(call, 200, listOf(items.map((o) => toScimUser(o, call.base)), total, startIndex));
}

export async function getUser(call: ScimCall, id: string) {
  return answer(call, 200, toScimUser(await requireObject(call, 'people', id, 'User'), call.base));
}

export async function createUser(call: ScimCall, body: unknown) {
  const input = readUser(body);
  const o = await createIn(call.ctx, PEOPLE, call.instance.key, personDoc(input, undefined, undefined));
  const user = toScimUser(o, call.base);
  return answer(call, 201, user, { location: `${call.base}/Users/${o.key}` });
}

export async function replaceUser(call: ScimCall, id: string, body: unknown) {
  const input = readUser(body);
  const read = await requireObject(call, 'people', id, 'User');
  const o = await rewriteObject(call.ctx, read, (cur) => personDoc(input, cur.key, cur.doc));
  return answer(call, 200, toScimUser(o, call.base));
}

export async function patchUser(call: ScimCall, id: string, body: unknown) {
  const ops = patchOperations(body, USER_SCHEMA);
  const read = await requireObject(call, 'people', id, 'User');
  const o = await rewriteObject(call.ctx, read, (cur) => {
    const user = toScimUser(cur, call.base);
    // `formatted` is derived from the names: a patch of one of them must not keep the old one.
    delete (user.name as Doc).formatted;
    const patched = applyPatch(user, ops);
    return personDoc(readUser(patched), cur.key, cur.doc);
  });
  return answer(call, 200, toScimUser(o, call.base));
}

export async function removeUser(call: ScimCall, id: string) {
  const o = await requireObject(call, 'people', id, 'User');
  await removeAt(call.ctx, { kind: 'member', collection: 'people', folderKey: o.folder, key: o.key });
  return answer(call, 204);
}
