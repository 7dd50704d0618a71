/**
 * What the OpenAPI document says about the SCIM family: the SCIM tokens of an instance, and the
 * SCIM 2.0 service provider at `/scim/v2/{instanceKey}` (RFC 7643/7644). SCIM bodies are
 * `application/scim+json` (requests labelled `application/json` are read too), SCIM errors carry
 * SCIM's error body, and the SCIM calls authenticate with a SCIM token (`scimToken`).
 */
import * as z from 'zod';
import { resourceTypes, schemas, serviceProviderConfig } from '#shared/scim/discovery.ts';
import type { OperationDoc } from './operation-doc.ts';
import { EXAMPLE_KEYS } from './schemas.ts';

const SCIM_MEDIA_TYPE = 'application/scim+json';
const I = EXAMPLE_KEYS.instance;
const K = EXAMPLE_KEYS.object;
const K2 = EXAMPLE_KEYS.other;
const BASE = `https://gatehouse.example.org/scim/v2/${I}`;
const RFC = 'https://www.rfc-editor.org/rfc/rfc7644';

export const scimErrorSchema = z
  .object({
    schemas: z.array(z.literal('urn:ietf:params:scim:api:messages:2.0:Error')),
    status: z.string().meta({ description: 'The HTTP status, as a string.' }),
    scimType: z.string().optional().meta({ description: 'RFC 7644 Table 9: invalidFilter, uniqueness, invalidSyntax, invalidPath, noTarget, invalidValue, ...' }),
    detail: z.string(),
  })
  .meta({ id: 'ScimError', description: `SCIM's error body (RFC 7644 §3.12, ${RFC}#section-3.12).` });

const meta = z.looseObject({ resourceType: z.string(), created: z.string().optional(), location: z.string(), version: z.string().optional() }).meta({ id: 'ScimMeta' });

const scimUserSchema = z
  .looseObject({
    schemas: z.array(z.string()),
    id: z.string(),
    externalId: z.string().optional(),
    userName: z.string(),
    name: z.looseObject({ givenName: z.string().optional(), familyName: z.string().optional(), formatted: z.string().optional() }).optional(),
    displayName: z.string().optional(),
    emails: z.array(z.looseObject({ value: z.string(), type: z.string().optional(), primary: z.boolean().optional() })).optional(),
    active: z.boolean(),
    meta,
  })
  .meta({
    id: 'ScimUser',
    description:
      'A person as a SCIM User (urn:ietf:params:scim:schemas:core:2.0:User, RFC 7643 §4.1): id = the person\'s Key, name.givenName/familyName = GivenName/Surname, displayName = CommonName, emails = its EmailAddressInfo addresses; active false disables every card of the person.',
  });

const scimUserRequestSchema = z
  .looseObject({
    schemas: z.array(z.string()).optional(),
    userName: z.string().min(1),
    externalId: z.string().optional(),
    name: z.looseObject({ givenName: z.string().optional(), familyName: z.string().optional() }).optional(),
    displayName: z.string().optional(),
    emails: z.array(z.looseObject({ value: z.string(), type: z.string().optional(), primary: z.union([z.boolean(), z.string()]).optional() })).optional(),
    active: z.union([z.boolean(), z.string()]).optional().meta({ description: 'A boolean; "True"/"False" are read as booleans too (Entra ID).' }),
  })
  .meta({ id: 'ScimUserRequest', description: 'A SCIM User as sent (attributes other than these are ignored).' });

const member = z.looseObject({ value: z.string(), $ref: z.string().optional(), type: z.string().optional(), display: z.string().optional() });

const scimGroupSchema = z
  .looseObject({ schemas: z.array(z.string()), id: z.string(), externalId: z.string().optional(), displayName: z.string(), members: z.array(member).optional(), meta })
  .meta({ id: 'ScimGroup', description: 'An access level as a SCIM Group (RFC 7643 §4.2): id = its Key, displayName = CommonName, members = the people with an AccessLevel connection to it.' });

const scimGroupRequestSchema = z
  .looseObject({ schemas: z.array(z.string()).optional(), displayName: z.string().min(1), externalId: z.string().optional(), members: z.array(member).optional() })
  .meta({ id: 'ScimGroupRequest', description: 'A SCIM Group as sent; a PUT without members leaves them as they are.' });

const patchSchema = z
  .looseObject({
    schemas: z.array(z.string()).optional(),
    Operations: z.array(z.looseObject({ op: z.string().meta({ description: 'add, replace or remove (any case).' }), path: z.string().optional(), value: z.unknown().optional() })),
  })
  .meta({ id: 'ScimPatchOp', description: 'A PatchOp message (RFC 7644 §3.5.2): paths with filters (`emails[type eq "work"].value`, `members[value eq "<id>"]`) and value objects without a path.' });

const listSchema = (item: z.ZodType, id: string) =>
  z
    .looseObject({ schemas: z.array(z.string()), totalResults: z.number().int(), startIndex: z.number().int(), itemsPerPage: z.number().int(), Resources: z.array(item) })
    .meta({ id, description: 'A ListResponse (RFC 7644 §3.4.2).' });

const anyResource = z.looseObject({ schemas: z.array(z.string()) }).meta({ id: 'ScimResource' });
const resourceList = listSchema(anyResource, 'ScimResourceList');

const exampleUser = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  id: K,
  externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
  userName: 'ada.lovelace@example.org',
  name: { givenName: 'Ada', familyName: 'Lovelace', formatted: 'Ada Lovelace' },
  displayName: 'Ada Lovelace',
  emails: [{ value: 'ada.lovelace@example.org', type: 'work', primary: true }],
  active: true,
  meta: { resourceType: 'User', created: '2026-05-01T12:00:00.000Z', location: `${BASE}/Users/${K}`, version: 'W/"1"' },
};
const { id: _id, meta: _meta, ...exampleUserRequest } = exampleUser;
const exampleGroup = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
  id: K2,
  displayName: 'Staff',
  // No `$ref` in an example: OpenAPI tools resolve every `$ref` key, example values included (SCIM
  // answers carry one per member).
  members: [{ value: K, display: 'Ada Lovelace', type: 'User' }],
  meta: { resourceType: 'Group', created: '2026-05-01T12:00:00.000Z', location: `${BASE}/Groups/${K2}`, version: 'W/"1"' },
};
const list = (resources: unknown[]) => ({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources });

const scimTokenSchema = z
  .looseObject({ Key: z.string(), CommonName: z.string(), CreatedOn: z.string(), CreatedBy: z.string(), Href: z.string(), ScimBaseUrl: z.string(), Token: z.string().optional() })
  .meta({ id: 'ScimToken', description: 'A SCIM token of an instance. `Token` is in the create\'s answer only (it is stored as a hash).' });
const exampleToken = { Key: K, CommonName: 'Entra ID provisioning', CreatedOn: '2026-05-01T12:00:00.000Z', CreatedBy: 'admin', Href: `/api/f/${I}/scimtokens/${K}`, ScimBaseUrl: `/scim/v2/${I}` };

const paging = {
  filter: z.string().optional().meta({ description: 'One equality: `userName eq "…"`, `externalId eq "…"`, `displayName eq "…"` or `id eq "…"` for Users; `displayName eq "…"` or `id eq "…"` for Groups. Others: 400 invalidFilter.' }),
  startIndex: z.string().optional().meta({ description: '1-based index of the first result (default 1).' }),
  count: z.string().optional().meta({ description: 'Results a page (default and most 200).' }),
};
const excluded = { excludedAttributes: z.string().optional().meta({ description: '`members` leaves the members out.' }) };

const scimDoc = (d: Omit<OperationDoc, 'tag' | 'scim'>): OperationDoc => ({ ...d, tag: 'SCIM', scim: true });
const scimBody = (schema: z.ZodType, example: unknown) => ({ schema, example, required: true, mediaTypes: [SCIM_MEDIA_TYPE, 'application/json'] });
const ok = (description: string, schema: z.ZodType, example: unknown) => ({ description, schema, example, mediaType: SCIM_MEDIA_TYPE });

export const SCIM_OPERATIONS: Readonly<Record<string, () => OperationDoc>> = {
  listScimTokens: () => ({
    summary: 'List the SCIM tokens of an instance',
    tag: 'SCIM tokens',
    description: 'Administrators of the instance (or of an instance above it). The tokens themselves are never shown again.',
    success: { 200: { description: 'The tokens, oldest first.', schema: z.array(scimTokenSchema), example: [exampleToken] } },
    errors: [403, 404],
  }),
  createScimToken: () => ({
    summary: 'Create a SCIM token for an identity provider',
    tag: 'SCIM tokens',
    description:
      'Administrators. The answer is the only one that shows the `Token`: give it to the identity provider as its secret token, with the tenant URL `<base URL>` + `ScimBaseUrl`. At most 25 tokens an instance (409 TooManyScimTokens).',
    body: { schema: z.looseObject({ CommonName: z.string().min(1) }).meta({ id: 'ScimTokenRequest' }), example: { CommonName: 'Entra ID provisioning' }, required: true },
    success: { 201: { description: 'The token, shown once.', schema: scimTokenSchema, example: { ...exampleToken, Token: `gh_scim_${K}_1dV0cE4pXc1m8bNQ2rZ2o6tY3K9cJ5vQ7wE0aS4dF8g` } } },
    errors: [403, 404, 409],
  }),
  removeScimToken: () => ({ summary: 'Revoke a SCIM token', tag: 'SCIM tokens', success: { 204: { description: 'Revoked: the next call with it is refused.' } }, errors: [403, 404] }),

  scimServiceProviderConfig: () =>
    scimDoc({ summary: 'SCIM: the service provider\'s configuration', success: { 200: ok('RFC 7643 §5.', anyResource, serviceProviderConfig(BASE)) } }),
  scimResourceTypes: () => scimDoc({ summary: 'SCIM: the resource types (User, Group)', success: { 200: ok('RFC 7643 §6.', resourceList, list(resourceTypes(BASE))) } }),
  scimResourceType: () => scimDoc({ summary: 'SCIM: one resource type', success: { 200: ok('RFC 7643 §6.', anyResource, resourceTypes(BASE)[0]) }, errors: [404] }),
  scimSchemas: () => scimDoc({ summary: 'SCIM: the schemas of the resources', success: { 200: ok('RFC 7643 §7.', resourceList, list(schemas(BASE))) } }),
  scimSchema: () => scimDoc({ summary: 'SCIM: one schema', success: { 200: ok('RFC 7643 §7.', anyResource, schemas(BASE)[0]) }, errors: [404] }),
  scimListUsers: () =>
    scimDoc({
      summary: 'SCIM: list or find Users (people)',
      description: 'Past a page that is not the last, `totalResults` is a lower bound (one more than the results seen so far): counting every person would read the whole instance. A page shorter than `count` is the last.',
      query: paging,
      success: { 200: ok('A ListResponse of Users.', listSchema(scimUserSchema, 'ScimUserList'), list([exampleUser])) },
    }),
  scimCreateUser: () =>
    scimDoc({
      summary: 'SCIM: create a User (a person)',
      body: scimBody(scimUserRequestSchema, exampleUserRequest),
      success: { 201: { ...ok('The User, at its `Location`.', scimUserSchema, exampleUser), headers: { Location: 'The User\'s URL.' } } },
      errors: [409],
    }),
  scimGetUser: () => scimDoc({ summary: 'SCIM: read a User', success: { 200: ok('The User.', scimUserSchema, exampleUser) }, errors: [404] }),
  scimReplaceUser: () =>
    scimDoc({ summary: 'SCIM: replace a User', description: 'Absent attributes are cleared, except `active`, which is kept.', body: scimBody(scimUserRequestSchema, exampleUserRequest), success: { 200: ok('The User.', scimUserSchema, exampleUser) }, errors: [404, 409] }),
  scimPatchUser: () =>
    scimDoc({
      summary: 'SCIM: change a User',
      description: '`active` false disables every card of the person; true re-enables the cards that deactivation disabled.',
      body: scimBody(patchSchema, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] }),
      success: { 200: ok('The User.', scimUserSchema, { ...exampleUser, active: false }) },
      errors: [404, 409],
    }),
  scimRemoveUser: () => scimDoc({ summary: 'SCIM: delete a User (the person; its cards are freed)', success: { 204: { description: 'Deleted.' } }, errors: [404] }),
  scimListGroups: () =>
    scimDoc({ summary: 'SCIM: list or find Groups (access levels)', query: { ...paging, ...excluded }, success: { 200: ok('A ListResponse of Groups.', listSchema(scimGroupSchema, 'ScimGroupList'), list([exampleGroup])) } }),
  scimCreateGroup: () =>
    scimDoc({
      summary: 'SCIM: create a Group (an access level)',
      body: scimBody(scimGroupRequestSchema, { displayName: 'Staff', members: [{ value: K }] }),
      success: { 201: { ...ok('The Group, at its `Location`.', scimGroupSchema, exampleGroup), headers: { Location: 'The Group\'s URL.' } } },
      errors: [409],
    }),
  scimGetGroup: () => scimDoc({ summary: 'SCIM: read a Group', query: excluded, success: { 200: ok('The Group.', scimGroupSchema, exampleGroup) }, errors: [404] }),
  scimReplaceGroup: () =>
    scimDoc({ summary: 'SCIM: replace a Group', body: scimBody(scimGroupRequestSchema, { displayName: 'Staff', members: [{ value: K }] }), success: { 200: ok('The Group.', scimGroupSchema, exampleGroup) }, errors: [404, 409] }),
  scimPatchGroup: () =>
    scimDoc({
      summary: 'SCIM: change a Group, add or remove members',
      body: scimBody(patchSchema, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'add', path: 'members', value: [{ value: K }] }] }),
      success: { 204: { description: 'Changed.' } },
      errors: [404, 409],
    }),
  scimRemoveGroup: () => scimDoc({ summary: 'SCIM: delete a Group (the access level)', success: { 204: { description: 'Deleted.' } }, errors: [404] }),
};
