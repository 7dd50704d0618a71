/**
 * A SCIM call's caller: the SCIM token of the instance its path names. One strongly consistent
 * BatchGetItem reads the token's item and the instance together (a revoked token is refused from
 * the next call on), then the instances above it when there are any (a disabled one refuses, as it
 * refuses its users' tokens). Any failure is the same 401, so a caller learns nothing about other
 * instances: another instance's key finds no token item under it.
 *
 * The token acts as an Operator of its instance (what writing people, access levels and their
 * connections needs, and no more: no users, no instances) through the ordinary object calls.
 */
import type { Db } from '../db/client.ts';
import { isObjectKey } from '../db/item-keys.ts';
import { fromItem, getItems, objectItemKey } from '../db/objects-repo.ts';
import { scimTokenItemKey, scimTokenOf } from '../db/scim-repo.ts';
import { ancestorsOf, isDisabled, isInstance, nameOf } from '../auth/directory.ts';
import type { Principal } from '../auth/principal.ts';
import type { ApiRequest, BaseDeps } from '../http/operation-contract.ts';
import type { StoredObject } from '../model/stored-object.ts';
import type { Ctx } from '../objects/domain-context.ts';
import { relationHooks } from '../objects/relation-hooks.ts';
import { scimUnauthorized } from './scim-errors.ts';
import { scimBasePath, scimTokenKeyOf, scimTokenMatches } from './tokens.ts';

export interface ScimCall {
  /** The object layer's context, with the token as its principal and the relationship hooks. */
  readonly ctx: Ctx;
  readonly instance: StoredObject;
  /** The absolute URL of the instance's SCIM base (meta.location of the resources). */
  readonly base: string;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/;

/** The URL the client called, from its Host header: https, except on a loopback host (the local runtime). */
function baseUrl(req: ApiRequest, instanceKey: string): string {
  const host = req.headers.host ?? 'localhost';
  const proto = req.headers['x-forwarded-proto'] ?? (LOOPBACK.test(host) ? 'http' : 'https');
  return `${proto}://${host}${scimBasePath(instanceKey)}`;
}

async function tokenAndInstance(db: Db, instanceKey: string, tokenKey: string) {
  const items = await getItems(db, [scimTokenItemKey(instanceKey, tokenKey), objectItemKey(instanceKey)], true);
  const token = scimTokenOf(items.find((i) => i.SK === tokenKey && typeof i.Hash === 'string'));
  const object = items.find((i) => i.SK === 'A');
  return { token, instance: object ? fromItem(object) : undefined };
}

/** The caller of a SCIM call, or a SCIM 401. */
export async function scimCall(req: ApiRequest, deps: BaseDeps): Promise<ScimCall> {
  const instanceKey = req.params.instanceKey ?? '';
  const presented = BEARER.exec(req.headers.authorization ?? '')?.[1];
  const tokenKey = presented === undefined ? undefined : scimTokenKeyOf(presented);
  if (!presented || !tokenKey || !isObjectKey(instanceKey)) throw scimUnauthorized();
  const { token, instance } = await tokenAndInstance(deps.db, instanceKey, tokenKey);
  if (!token || !scimTokenMatches(presented, token) || !isInstance(instance) || isDisabled(instance)) throw scimUnauthorized();
  if ((await ancestorsOf(deps.db, instance)).some(isDisabled)) throw scimUnauthorized();
  const principal: Principal = {
    userKey: token.key,
    userName: `SCIM: ${token.commonName}`,
    instanceKey,
    instanceName: nameOf(instance),
    role: 'Operator',
    tokenId: token.key,
  };
  return {
    ctx: { db: deps.db, ns: deps.config.modelNamespace, principal, now: deps.now(), hooks: relationHooks },
    instance,
    base: baseUrl(req, instanceKey),
  };
}
