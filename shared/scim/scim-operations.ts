/**
 * The SCIM family's operations: the SCIM tokens of an instance (`/api/f/<instance>/scimtokens`,
 * access tokens) and the SCIM 2.0 service provider of each instance (`/scim/v2/<instance key>/`,
 * SCIM tokens). Each SCIM operation checks its SCIM token first (`call.ts`), then parses, calls
 * the Users or Groups mapping, and answers.
 */
import type { ApiRequest, Operation } from '../http/operation-contract.ts';
import { scimCall, type ScimCall } from './call.ts';
import { listOf, resourceTypes, schemas, serviceProviderConfig } from './discovery.ts';
import { scimNotFound } from './scim-errors.ts';
import * as groups from './groups.ts';
import { answer } from './resources.ts';
import { scimTokenOperations } from './tokens.ts';
import * as users from './scim-users.ts';

/** An operation of the SCIM base: its caller checked before it runs. */
const scim =
  (op: (call: ScimCall, req: ApiRequest) => ReturnType<Operation>): Operation =>
  async (req, deps) =>
    op(await scimCall(req, deps), req);

const id = (req: ApiRequest): string => req.params.id ?? '';

const one = <T extends { id: string }>(list: readonly T[], wanted: string, what: string): T => {
  const found = list.find((x) => x.id === wanted || x.id.toLowerCase() === wanted.toLowerCase());
  if (!found) throw scimNotFound(`${what} ${wanted}`);
  return found;
};

export const scimOperations: Readonly<Record<string, Operation>> = {
  ...scimTokenOperations,
  scimServiceProviderConfig: scim(async (call) => answer(call, 200, serviceProviderConfig(call.base))),
  scimResourceTypes: scim(async (call) => answer(call, 200, listOf(resourceTypes(call.base)))),
  scimResourceType: scim(async (call, req) => answer(call, 200, one(resourceTypes(call.base), id(req), 'ResourceType'))),
  scimSchemas: scim(async (call) => answer(call, 200, listOf(schemas(call.base)))),
  scimSchema: scim(async (call, req) => answer(call, 200, one(schemas(call.base), id(req), 'Schema'))),
  scimListUsers: scim((call, req) => users.listUsers(call, req)),
  scimCreateUser: scim((call, req) => users.createUser(call, req.body)),
  scimGetUser: scim((call, req) => users.getUser(call, id(req))),
  scimReplaceUser: scim((call, req) => users.replaceUser(call, id(req), req.body)),
  scimPatchUser: scim((call, req) => users.patchUser(call, id(req), req.body)),
  scimRemoveUser: scim((call, req) => users.removeUser(call, id(req))),
  scimListGroups: scim((call, req) => groups.listGroups(call, req)),
  scimCreateGroup: scim((call, req) => groups.createGroup(call, req.body)),
  scimGetGroup: scim((call, req) => groups.getGroup(call, req, id(req))),
  scimReplaceGroup: scim((call, req) => groups.replaceGroup(call, req, id(req), req.body)),
  scimPatchGroup: scim((call, req) => groups.patchGroup(call, id(req), req.body)),
  scimRemoveGroup: scim((call, req) => groups.removeGroup(call, id(req))),
};

