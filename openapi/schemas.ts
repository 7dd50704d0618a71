/**
 * The OpenAPI document's schemas, derived from the model's zod schemas: each type's request form
 * (`$type` optional, any namespace, since a body without `$type` is read as the endpoint's type)
 * and its response form (`$type` with the namespace, and the fields the server sets). Only the
 * bodies the model has no zod schema for (EventMessagePosting, the token form, the error bodies,
 * SysInfo, summaries) are stated here, from the pieces the model already has.
 */
import * as z from 'zod';
import { eventTypeInfoSchema } from '#shared/events/event-type-schema.ts';
import { MAX_RELATED_OBJECTS } from '#shared/events/posting.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '#shared/http/params.ts';
import { LIMITS, commonSchemas, schemaFor, type TypeSchema } from '#shared/model/schemas/index.ts';
import { typeTag } from '#shared/model/type-tags.ts';

const { linkSchema, monikerItemSchema, objectLinkItemSchema } = commonSchemas();

/** The namespace the examples show (`GATEHOUSE_MODEL_NAMESPACE`'s default). */
const EXAMPLE_NAMESPACE = 'Gatehouse.Model';

export const exampleTag = (typeName: string): string => typeTag(EXAMPLE_NAMESPACE, typeName);

/** Keys are 24-hex ObjectIds; these make the examples read alike. */
export const EXAMPLE_KEYS = Object.freeze({
  instance: '6650f1a2b3c4d5e6f7a8b9c0',
  object: '6650f1a2b3c4d5e6f7a8b9c1',
  other: '6650f1a2b3c4d5e6f7a8b9c2',
  event: '6650f1a2b3c4d5e6f7a8b9c3',
});

const typeTagPattern = (typeName: string): RegExp => new RegExp(`^(?:[A-Za-z_][A-Za-z0-9_]*\\.)*${typeName}(?:,.*)?$`);
const typeTagDescription = (typeName: string): string =>
  `\`${typeName}\`, bare or with a namespace: the type name is matched whatever the namespace; responses carry the deployment's namespace.`;

/** A `$type` value naming `typeName`, bare or with any namespace (`Vendor.Model.PersonInfo, Vendor.Model`). */
function typeTagSchema(typeName: string) {
  return z
    .string()
    .regex(typeTagPattern(typeName))
    .meta({ description: typeTagDescription(typeName), examples: [exampleTag(typeName), typeName] });
}

/** The same, as JSON Schema (to rewrite the `$type` literals of the model's polymorphic elements). */
export function typeTagJsonSchema(typeName: string): Record<string, unknown> {
  return { type: 'string', pattern: typeTagPattern(typeName).source, description: typeTagDescription(typeName), examples: [exampleTag(typeName), typeName] };
}

/**
 * The discriminator of a union of `$type`d schemas: each type by its bare name and by its tag in
 * the default namespace (`GATEHOUSE_MODEL_NAMESPACE`); other namespaces match by type name too.
 */
export function typeDiscriminator(refs: Readonly<Record<string, string>>): Record<string, unknown> {
  const mapping: Record<string, string> = {};
  for (const [typeName, ref] of Object.entries(refs)) {
    mapping[typeName] = ref;
    mapping[exampleTag(typeName)] = ref;
  }
  return { propertyName: '$type', mapping };
}

/** Any type name (collections holding vendor types kept as sent: readers, controllers). */
const anyTypeTagSchema = z
  .string()
  .max(LIMITS.code)
  .regex(/^(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*(?:,.*)?$/)
  .meta({ description: 'A type name, bare or with a namespace.', examples: [exampleTag('VendorReaderInfo')] });

/**
 * The classic API's view of a model object schema: the model builds its schemas with zod/mini
 * (what the functions load); the document needs `.extend`, `.shape` and `.meta`. The same
 * definition (shape and catchall), so the same JSON Schema, and the same field schemas, so the
 * element components (MonikerItem, ...) are still referenced where they occur.
 */
export function classicObject<S extends z.core.$ZodLooseShape>(s: z.core.$ZodObject<S, z.core.$loose>): z.ZodObject<S, z.core.$loose> {
  return new z.ZodObject(s._zod.def) as z.ZodObject<S, z.core.$loose>;
}

function objectSchemaOf(typeName: string): z.ZodObject {
  const s: TypeSchema = typeName === 'EventTypeInfo' ? (eventTypeInfoSchema() as unknown as TypeSchema) : schemaFor(typeName);
  if (!(s instanceof z.core.$ZodObject)) throw new Error(`${typeName}: expected an object schema`);
  return s instanceof z.ZodObject ? s : classicObject(s);
}

const key = () => z.string().meta({ description: 'A 24-hex object key.', examples: [EXAMPLE_KEYS.object] });

/** The fields the server sets on every object it returns. */
const renderedShape = {
  Key: key(),
  Href: z.string().meta({ description: 'The object\'s own path.', examples: [`/api/f/${EXAMPLE_KEYS.instance}/people/${EXAMPLE_KEYS.object}`] }),
  InFolderKey: z.string().nullish().meta({ description: 'The folder that holds the object (absent or null on the root instance and on the caller\'s own instance).' }),
  InFolderHref: z.string().nullish(),
  ConcurrencyVersion: z.number().int().min(0).optional().meta({ description: 'Send it back unchanged with a PUT: a stale one answers 409 ConcurrencyConflict.' }),
  Links: z.array(linkSchema).optional(),
};

const requestSchemas = new Map<string, z.ZodType>();
const responseSchemas = new Map<string, z.ZodType>();

/** The request body of a type: its zod schema with an optional, namespace-free `$type`. */
export function requestSchema(typeName: string, anyType = false): z.ZodType {
  const id = anyType ? `Any${typeName}Request` : `${typeName}Request`;
  let s = requestSchemas.get(id);
  if (!s) {
    s = objectSchemaOf(typeName)
      .extend({ $type: (anyType ? anyTypeTagSchema : typeTagSchema(typeName)).optional() })
      .meta({
        id,
        description: anyType
          ? `A ${typeName} or another type this collection holds, kept as sent. Without \`$type\` the body is a ${typeName}.`
          : `A ${typeName} as sent by a client. Without \`$type\` the body is read as a ${typeName}; read-only fields (Key, Href, Links, InFolderHref) are ignored.`,
      });
    requestSchemas.set(id, s);
  }
  return s;
}

/** The response form of a type: `$type` with the namespace, and the fields the server sets. */
export function responseSchema(typeName: string, anyType = false): z.ZodType {
  const id = anyType ? `Any${typeName}` : typeName;
  let s = responseSchemas.get(id);
  if (!s) {
    const { Password: _password, ...shape } = objectSchemaOf(typeName).shape;
    s = z
      .looseObject({ ...shape, $type: anyType ? anyTypeTagSchema : typeTagSchema(typeName), ...renderedShape })
      .meta({ id, description: `A ${typeName} as the API returns it.` });
    responseSchemas.set(id, s);
  }
  return s;
}

/** The spec's resource error body. */
export const errorBodySchema = z
  .object({
    Error: z.string().meta({ description: 'A stable error code.', examples: ['ValidationFailed'] }),
    Message: z.string().meta({ description: 'Readable text.', examples: ['CommonName: expected string, received number'] }),
  })
  .meta({ id: 'Error', description: 'A resource error.' });

/** API Gateway's own throttling answer in AWS (the local runtime answers the spec's error body). */
export const throttledBodySchema = z
  .union([errorBodySchema, z.object({ message: z.string().meta({ examples: ['Too Many Requests'] }) })])
  .meta({ id: 'Throttled', description: 'The spec\'s error body locally; in AWS, API Gateway\'s `{"message":"Too Many Requests"}` (without Retry-After).' });

/** The spec's token error body (and `unauthorized`, the 401 of a protected call). */
export const oauthErrorBodySchema = z
  .object({
    error: z.string().meta({ examples: ['invalid_grant'] }),
    error_description: z.string().meta({ examples: ['The user name or password is incorrect.'] }),
  })
  .meta({ id: 'TokenError', description: 'A token endpoint error, or `unauthorized` (401) on a protected call.' });

/** `POST /token` form fields (spec: Authentication). */
export const tokenFormSchema = z
  .object({
    grant_type: z.enum(['password', 'refresh_token', 'authorization_code']).optional().meta({
      description: 'Without it: `password` when username, password or instance is sent, else `refresh_token`. `authorization_code` redeems a single sign-on code.',
    }),
    client_id: z.string().optional().meta({ description: 'Default `consoleApp`.', examples: ['consoleApp'] }),
    client_secret: z.string().optional().meta({ description: 'Optional for `consoleApp`; required for other clients.' }),
    username: z.string().optional().meta({ description: '`Instance\\user`, or the user name with `instance`.', examples: ['Gatehouse\\admin'] }),
    password: z.string().optional().meta({ format: 'password' }),
    instance: z.string().optional().meta({ description: 'Instance name, case-sensitive.' }),
    sendonetimepassword: z.enum(['true', 'false']).optional().meta({ description: 'Ask for a one-time code (two-factor users).' }),
    onetimepassword: z.string().optional().meta({ description: 'The six-digit one-time code.' }),
    newpassword: z.string().optional().meta({ description: 'A new password, on first login or after expiry.', format: 'password' }),
    refresh_token: z.string().optional().meta({ description: 'With `grant_type=refresh_token`. Each refresh answers a new one.' }),
    code: z.string().optional().meta({ description: 'With `grant_type=authorization_code`: the one-time code `/oauth/callback` handed to the client (60 s, single use).' }),
    code_verifier: z.string().optional().meta({ description: 'With `grant_type=authorization_code`: the PKCE verifier whose S256 challenge the authorize request sent.' }),
    redirect_uri: z.string().optional().meta({ description: 'With `grant_type=authorization_code`: the redirect URI of the authorize request.' }),
  })
  .meta({ id: 'TokenRequest', description: 'Form fields; unknown fields are ignored, names match in any case.' });

export const tokenResponseSchema = z
  .looseObject({
    userName: z.string().meta({ examples: ['Gatehouse\\admin'] }),
    access_token: z.string(),
    'as:client_id': z.string().optional(),
    token_type: z.literal('bearer'),
    refresh_token: z.string().optional().meta({
      description:
        'The refresh token (one use: a refresh answers a new one). Absent for the console (`gatehouseConsole`), whose refresh token is ' +
        'the `gatehouse_console_refresh` cookie instead (see Set-Cookie).',
    }),
    expires_in: z.number().int().meta({ examples: [86399] }),
    '.issued': z.string(),
    '.expires': z.string(),
    instance: z.string().meta({ description: 'The key of the instance.' }),
  })
  .meta({ id: 'TokenResponse' });

export const jwksSchema = z
  .looseObject({ keys: z.array(z.looseObject({ kty: z.string(), kid: z.string().optional() })) })
  .meta({ id: 'JsonWebKeySet', description: 'The public keys that verify access tokens (ES256).' });

export const sysInfoSchema = z
  .looseObject({
    $type: typeTagSchema('SysInfo'),
    Version: z.string().meta({ examples: ['0.1.0.0'] }),
    ServerId: z.string(),
    ServerTime: z.string().meta({ format: 'date-time' }),
    EventPublisherUrl: z.string(),
    MqttPublisherUrl: z.string(),
    FitScriptEngineUrl: z.string(),
    LicenseServerUrl: z.string(),
    UapBrokerUrl: z.string(),
    PrinterConnectApiUrl: z.string(),
    AacClientUrl: z.string().nullish(),
    GalleryIsEnabled: z.boolean(),
    ReleaseNotes: z.array(z.looseObject({ $type: typeTagSchema('ReleaseNote'), Name: z.string(), Url: z.string() })),
  })
  .meta({ id: 'SysInfo' });

export const eventMessagePostingSchema = z
  .looseObject({
    $type: typeTagSchema('EventMessagePosting').optional(),
    OccurredOn: z.string().meta({ format: 'date-time', description: 'ISO 8601 with `Z` or an offset.' }),
    AppKey: z.string().min(1).max(200).meta({ description: 'The app: its Key or a moniker Nickname.' }),
    EventTypeMoniker: classicObject(monikerItemSchema).extend({ Nickname: z.string() }),
    RelatedObjects: z.array(objectLinkItemSchema).max(MAX_RELATED_OBJECTS).nullish(),
    EventDataBsonBase64: z.string().nullish().meta({ description: 'Base64 of one BSON document (at most 256 KiB).' }),
  })
  .meta({ id: 'EventMessagePosting', description: 'Publishes an event. Fields beyond these (ClientDeviceId, Tags, Metadata) are kept.' });

export const eventMessageDataSchema = z
  .looseObject({
    $type: typeTagSchema('EventMessageData'),
    Key: key(),
    Href: z.string(),
    InFolderKey: z.string(),
    AppKey: z.string().nullish(),
    EventTypeKey: z.string().nullish(),
    EventTypeMoniker: z.nullable(monikerItemSchema),
    OccurredOn: z.string().meta({ format: 'date-time' }),
    PublishedOn: z.string().meta({ format: 'date-time' }).optional(),
    Priority: z.number().int().nullish(),
    RequiresAcknowledgement: z.boolean().nullish(),
    MessageLong: z.string().nullish(),
    MessageShort: z.string().nullish(),
    EventDataBsonBase64: z.string().nullish(),
    AlarmAcknowledgements: z.array(z.looseObject({})).nullish(),
    ObjectLinks: z.array(objectLinkItemSchema).nullish(),
    RelatedObjects: z.array(objectLinkItemSchema),
    Links: z.array(linkSchema),
  })
  .meta({ id: 'EventMessageData', description: 'An event as the API returns it.' });

export const eventSummarySchema = z
  .looseObject({
    $type: typeTagSchema('EventMessageSummaryItem'),
    ObjectKey: z.string(),
    EventKey: z.string(),
    EventTypeKey: z.string().nullish(),
    AppKey: z.string().nullish(),
    OccurredOn: z.string().meta({ format: 'date-time' }),
    PublishedOn: z.string().meta({ format: 'date-time' }).nullish(),
    Priority: z.number().int().nullish(),
    MessageShort: z.string().nullable(),
  })
  .meta({ id: 'EventMessageSummaryItem', description: 'The most recent event of one object.' });

export const acknowledgementSchema = z
  .looseObject({ $type: typeTagSchema('AlarmAcknowledgementItem').optional(), Comment: z.string().max(4096).nullish() })
  .meta({ id: 'AlarmAcknowledgementItemRequest', description: 'The server sets AcknowledgedBy and AcknowledgedOn.' });

export const noteRequestSchema = z
  .looseObject({ $type: typeTagSchema('NoteInfo').optional(), NoteText: z.string().max(LIMITS.text) })
  .meta({ id: 'NoteInfoRequest' });

export const hrefStringSchema = z.string().meta({ id: 'HrefString', description: 'A JSON string holding an object\'s Href.' });

export const keyListSchema = z.array(z.string()).max(1000).meta({ id: 'KeyList', description: 'Object keys (at most 1000).' });

/** Anything JSON (links whose shape depends on the link: meta, monikers, notes, ...). */
export const anyJsonSchema = z.unknown().meta({ description: 'JSON; its shape depends on the link.' });

export const paging = {
  page: z.number().int().min(0).default(0).meta({ param: { id: 'page', description: 'Zero-based page number.' } }),
  pageSize: z
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .meta({ param: { id: 'pageSize', description: `Items per page (1..${MAX_PAGE_SIZE}); a short or empty page is the last.` } }),
};

/** RFC 8414: the authorization server's metadata (single sign-on). */
export const authorizationServerMetadataSchema = z
  .looseObject({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    jwks_uri: z.string(),
    response_types_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
  })
  .meta({ id: 'AuthorizationServerMetadata', description: 'RFC 8414 authorization server metadata.' });
