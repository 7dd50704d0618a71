/**
 * The SCIM service provider's description of itself (RFC 7643 §5–7, RFC 7644 §4): what it
 * supports, its two resource types, and the attributes of each that it maps. Static documents.
 */
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

/** The largest page a listing answers (`count` above it is lowered to it, as RFC 7644 §3.4.2.4 allows). */
export const MAX_SCIM_COUNT = 200;

export function serviceProviderConfig(base: string) {
  return {
    schemas: [SPC_SCHEMA],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_SCIM_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'SCIM token',
        description: 'A SCIM token of the instance (POST /api/f/<instance>/scimtokens), sent as `Authorization: Bearer <token>`.',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string) {
  return [
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A person (cardholder) of the instance.',
      schema: USER_SCHEMA,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'An access level of the instance; its members are the people connected to it.',
      schema: GROUP_SCHEMA,
      schemaExtensions: [],
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

const attribute = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

export function schemas(base: string) {
  return [
    {
      schemas: [SCHEMA_SCHEMA],
      id: USER_SCHEMA,
      name: 'User',
      description: 'A person (cardholder): userName, externalId, name, displayName, emails and active are mapped.',
      attributes: [
        attribute('userName', 'string', { required: true, uniqueness: 'server' }),
        attribute('externalId', 'string', { caseExact: true, uniqueness: 'server' }),
        attribute('name', 'complex', {
          subAttributes: [attribute('givenName', 'string'), attribute('familyName', 'string'), attribute('formatted', 'string', { mutability: 'readOnly' })],
        }),
        attribute('displayName', 'string'),
        attribute('emails', 'complex', {
          multiValued: true,
          subAttributes: [attribute('value', 'string'), attribute('type', 'string', { canonicalValues: ['work', 'home', 'other'] }), attribute('primary', 'boolean')],
        }),
        attribute('active', 'boolean'),
      ],
      meta: { resourceType: 'Schema', location: `${base}/Schemas/${USER_SCHEMA}` },
    },
    {
      schemas: [SCHEMA_SCHEMA],
      id: GROUP_SCHEMA,
      name: 'Group',
      description: 'An access level: displayName and members (people) are mapped.',
      attributes: [
        attribute('displayName', 'string', { required: true, uniqueness: 'server' }),
        attribute('externalId', 'string', { caseExact: true }),
        attribute('members', 'complex', {
          multiValued: true,
          subAttributes: [
            attribute('value', 'string', { mutability: 'immutable' }),
            attribute('$ref', 'reference', { mutability: 'immutable', referenceTypes: ['User'] }),
            attribute('type', 'string', { mutability: 'immutable', canonicalValues: ['User'] }),
          ],
        }),
      ],
      meta: { resourceType: 'Schema', location: `${base}/Schemas/${GROUP_SCHEMA}` },
    },
  ];
}

/** A ListResponse of `resources`, the whole result in one page. */
export const listOf = (resources: readonly unknown[], totalResults = resources.length, startIndex = 1) => ({
  schemas: [LIST_SCHEMA],
  totalResults,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources,
});
