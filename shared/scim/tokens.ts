/**
 * SCIM tokens: what an identity provider's provisioning sends as its bearer token on the SCIM
 * base of one instance. An Administrator of the instance (or of an instance above it) creates one
 * (`POST /api/f/<instance>/scimtokens`, the only answer that shows it), lists them (never the token)
 * and deletes one, which revokes it at once: each SCIM call reads its token strongly consistent.
 *
 * A token is `gh_scim_<token key>_<32 random bytes, base64url>`: the key says which item to read
 * (the instance comes from the SCIM path, so a token of another instance finds no item), the
 * random part is the secret. Only its sha256 is stored: it has 256 bits of entropy, so a slow
 * hash (the passwords' scrypt) would add nothing but the time of every call, as for refresh tokens.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError, badRequest, conflict } from '../errors.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { deleteScimToken, MAX_SCIM_TOKENS, putScimToken, scimTokensOf, type StoredScimToken } from '../db/scim-repo.ts';
import { created, noContent, ok, type ApiRequest, type Operation } from '../http/operation-contract.ts';
import { LIMITS } from '../model/limits.ts';
import { newKey } from '../model/placement.ts';
import type { StoredObject } from '../model/stored-object.ts';
import { authorName, loadFolder, requireRole } from '../objects/tenant-scope.ts';
import { contextOf, type Ctx } from '../objects/domain-context.ts';
import { objectNotFound } from '../objects/object-errors.ts';
import { isPlainObject } from '../objects/validate.ts';

const PREFIX = 'gh_scim_';
const TOKEN = /^gh_scim_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

/** The stored form of a token. */
const scimTokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The token key a token names, or undefined when it is not shaped as a SCIM token. */
export function scimTokenKeyOf(token: string): string | undefined {
  return TOKEN.exec(token)?.[1];
}

/** Whether `token` is the one whose hash is stored (compared in constant time). */
export function scimTokenMatches(token: string, stored: StoredScimToken): boolean {
  const a = Buffer.from(scimTokenHash(token), 'hex');
  const b = Buffer.from(stored.hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The SCIM base of an instance, relative to the deployment's URL. */
export const scimBasePath = (instanceKey: string): string => `/scim/v2/${instanceKey}`;

const manage = (ctx: Ctx) => requireRole(ctx, 'Administrator', 'manage SCIM tokens');

/** The instance a scimtokens path names, in the caller's scope (a folder that is not an instance: 404). */
async function instanceOf(ctx: Ctx, req: ApiRequest): Promise<StoredObject> {
  const f = await loadFolder(ctx, req.params.folderKey!);
  if (f.collection !== 'instances') throw new ApiError(404, 'NotFound', 'SCIM tokens belong to an instance, not a folder.');
  return f;
}

/** A token as listed: everything but the token, which exists only in the create's answer. */
const render = (t: StoredScimToken) => ({
  Key: t.key,
  CommonName: t.commonName,
  CreatedOn: t.createdOn,
  CreatedBy: t.createdBy,
  Href: `/api/f/${t.instanceKey}/scimtokens/${t.key}`,
  ScimBaseUrl: scimBasePath(t.instanceKey),
});

const listScimTokens: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  manage(ctx);
  const instance = await instanceOf(ctx, req);
  return ok((await scimTokensOf(ctx.db, instance.key)).map(render));
};

const createScimToken: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  manage(ctx);
  const body = req.body;
  const name = isPlainObject(body) ? body.CommonName : undefined;
  if (typeof name !== 'string' || name.trim() === '' || name.length > LIMITS.name) {
    throw badRequest('ValidationFailed', `CommonName: expected a name of 1 to ${LIMITS.name} characters.`);
  }
  const instance = await instanceOf(ctx, req);
  if ((await scimTokensOf(ctx.db, instance.key)).length >= MAX_SCIM_TOKENS) {
    throw conflict('TooManyScimTokens', `An instance holds at most ${MAX_SCIM_TOKENS} SCIM tokens; delete one first.`);
  }
  const key = newKey();
  const token = `${PREFIX}${key}_${randomBytes(32).toString('base64url')}`;
  const stored: StoredScimToken = {
    key,
    instanceKey: instance.key,
    commonName: name,
    hash: scimTokenHash(token),
    createdOn: ctx.now.toISOString(),
    createdBy: authorName(ctx, instance.key),
  };
  await putScimToken(ctx.db, stored);
  return created({ ...render(stored), Token: token });
};

const removeScimToken: Operation = async (req, deps) => {
  const ctx = contextOf(req, deps);
  manage(ctx);
  const instance = await instanceOf(ctx, req);
  const key = req.params.key!;
  if (!isObjectKey(key) || !(await deleteScimToken(ctx.db, instance.key, key))) throw objectNotFound();
  return noContent();
};

export const scimTokenOperations: Readonly<Record<string, Operation>> = { listScimTokens, createScimToken, removeScimToken };
