/**
 * Builds the OpenAPI 3.1 document from the one route table (`shared/routes.ts`) and the
 * operations' descriptions (`operation-docs.ts`, schemas from the model's zod schemas through
 * zod-openapi). Every row of the table but `$default` becomes an operation, so a route added to
 * the table appears here without further wiring.
 *
 * This runs at build time (`npm run openapi` writes docs/openapi.json, which the service family
 * serves); no function bundle imports it.
 */
import * as z from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject } from 'zod-openapi';
import { collectionByName } from '#shared/model/collections.ts';
import { commonSchemas, deviceSchemas, personSchemas } from '#shared/model/schemas/index.ts';
import { ROUTES, type Route } from '#shared/routes.ts';
import { KEYED_METHODS } from '#shared/http/idempotency.ts';
import { IDEMPOTENCY_WINDOW_SECONDS, MAX_IDEMPOTENCY_KEY_LENGTH } from '#shared/http/idempotent-call.ts';
import { describeOperation, errorExample, type OperationDoc } from './operation-docs.ts';
import { scimErrorSchema } from './scim.ts';
import { EXAMPLE_KEYS, errorBodySchema, oauthErrorBodySchema, throttledBodySchema, typeDiscriminator, typeTagJsonSchema } from './schemas.ts';

const { anchorSchema, linkSchema, metadataItemSchema, monikerItemSchema, objectLinkItemSchema } = commonSchemas();
const { addressSchema, cardAssignmentInfoSchema, emailAddressInfoSchema, mailingAddressInfoSchema, phoneInfoSchema } = personSchemas();
const { inputScannerReportingPrioritySchema } = deviceSchemas();

/** Where the checked-in document says the API is; the served copy names the deployment that answers. */
const LOCAL_SERVER = { url: 'http://localhost:3000', description: 'The local runtime (`npm start`).' };

/** Elements many types share: one component each. */
const SHARED_SCHEMAS = {
  MonikerItem: monikerItemSchema,
  ObjectLinkItem: objectLinkItemSchema,
  MetadataItem: metadataItemSchema,
  Link: linkSchema,
  Anchor: anchorSchema,
  CardAssignmentInfo: cardAssignmentInfoSchema,
  MailingAddressInfo: mailingAddressInfoSchema,
  EmailAddressInfo: emailAddressInfoSchema,
  PhoneInfo: phoneInfoSchema,
  InputScannerReportingPriority: inputScannerReportingPrioritySchema,
};

/** The address types (PersonInfo.Addresses), by their model schema. */
const ADDRESS_TYPES = new Map<unknown, string>([
  [mailingAddressInfoSchema, 'MailingAddressInfo'],
  [emailAddressInfoSchema, 'EmailAddressInfo'],
  [phoneInfoSchema, 'PhoneInfo'],
]);

/** Path parameters, by name. */
const PATH_PARAMS: Readonly<Record<string, { description: string; example: string }>> = {
  folderKey: { description: 'The key of a folder or an instance (`GET /api` answers your instance and its Key).', example: EXAMPLE_KEYS.instance },
  key: { description: 'The object\'s key.', example: EXAMPLE_KEYS.object },
  link: { description: 'A link of the object (`notes`, `meta`, `monikers`, `connections`, ...).', example: 'notes' },
  linkKey: { description: 'The key of the item under the link (a note, an event type).', example: EXAMPLE_KEYS.other },
  relation: { description: 'The relation kind (AccessLevel, BadgeType, Schedule, Reader, Door, Controller).', example: 'AccessLevel' },
  relatedKey: { description: 'The key of the connected object.', example: EXAMPLE_KEYS.other },
  instanceKey: { description: 'The key of the instance whose SCIM service provider this is (the SCIM token\'s instance).', example: EXAMPLE_KEYS.instance },
  id: { description: 'The SCIM resource\'s id (the person\'s or access level\'s Key; a resource type\'s or schema\'s name).', example: EXAMPLE_KEYS.object },
};

/** Tags of the rows that are not generic collection rows, by family. */
const FAMILY_TAGS: Readonly<Record<string, string>> = {
  service: 'Service',
  token: 'Authentication',
  folders: 'Instances and folders',
  devices: 'peripherals',
  apps: 'Event types',
  alarms: 'Alarm definitions',
  events: 'Events',
  search: 'Search',
};

const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  Service: 'Public calls: system information, this document and the reference page.',
  Authentication:
    'Tokens: the password, refresh_token and authorization_code grants, the keys that verify access tokens, and single sign-on through ' +
    'an instance\'s OpenID Connect provider (`/oauth/authorize`, `/oauth/callback`, RFC 8414 metadata).',
  'Instances and folders': 'Your instance (`GET /api`) and any folder or instance by its key.',
  peripherals: 'Readers, inputs and outputs by key, whatever their collection.',
  'Event types': 'The event types of an app, identified by their monikers.',
  'Alarm definitions': 'The event types an alarm definition references.',
  Events: 'Publishing events, the events list, the last event per object, acknowledgements.',
  Search: 'Queries over the objects of your scope.',
  SCIM: 'SCIM 2.0 provisioning (RFC 7643/7644) of an instance\'s people (Users) and access levels (Groups), with a SCIM token: see docs/scim.md.',
  'SCIM tokens': 'The SCIM tokens of an instance: what an identity provider\'s provisioning authenticates with.',
  'Access decisions': 'Who may open which door: a decision with its explanation, a recorded card read, and the troubleshooting calls.',
  Doors: 'Acting on doors: lockdown of a folder and everything below it, reader modes, momentary unlock, door status, and the credential download a controller decides from offline.',
};

function tagDescription(name: string): string {
  const c = collectionByName(name);
  return c ? `${c.typeName} objects, at \`/api/f/{folderKey}/${c.name}\`.` : (TAG_DESCRIPTIONS[name] ?? name);
}

interface ErrorResponse {
  readonly id: string;
  readonly description: string;
  readonly example: unknown;
  readonly oauth?: boolean;
  readonly retryAfter?: boolean;
  /** API Gateway may answer it with its own body. */
  readonly throttled?: boolean;
  /** The tenant rate limits answer it, with their headers. */
  readonly rateLimited?: boolean;
}

/** Every error status a handler can answer, with the spec's error body. */
const ERRORS: Readonly<Record<number, ErrorResponse>> = {
  400: { id: 'BadRequest', description: 'Bad request: malformed JSON, a field or parameter out of bounds, a wrong `$type`, an invalid `Idempotency-Key` (`InvalidIdempotencyKey`).', example: errorExample('ValidationFailed', 'CommonName: expected string, received number') },
  401: { id: 'Unauthorized', description: 'Missing, expired or invalid bearer token.', example: { error: 'unauthorized', error_description: 'A valid bearer token is required.' }, oauth: true },
  403: { id: 'Forbidden', description: 'Outside the caller\'s instance scope, or not allowed to the caller\'s role.', example: errorExample('Forbidden', 'You do not have access to this resource.') },
  404: { id: 'NotFound', description: 'No such object, folder or link.', example: errorExample('NotFound', 'The object does not exist.') },
  405: { id: 'MethodNotAllowed', description: 'The link does not answer this method (`Allow` names those it does).', example: errorExample('MethodNotAllowed', 'This resource only accepts GET.') },
  409: {
    id: 'Conflict',
    description:
      'A conflict: stale ConcurrencyVersion, duplicate name, moniker or card, a folder that is not empty; or a request with the same `Idempotency-Key` is still running (`IdempotencyKeyInProgress`: retry after `Retry-After` seconds).',
    example: errorExample('ConcurrencyConflict', 'The object was changed by someone else (its ConcurrencyVersion is now 3); read it again and retry.'),
    retryAfter: true,
  },
  410: { id: 'Gone', description: 'A credential download version whose changes are no longer kept (`VersionExpired`): download in full.', example: errorExample('VersionExpired', 'The changes since this version are no longer kept. Download in full (without since).') },
  413: { id: 'PayloadTooLarge', description: 'The request body is larger than the deployment accepts (1 MiB by default).', example: errorExample('PayloadTooLarge', 'The request body is larger than 1048576 bytes.') },
  422: {
    id: 'IdempotencyKeyReused',
    description: 'The `Idempotency-Key` was used by this caller on this method and path for a different request (query or body): use a new key.',
    example: errorExample('IdempotencyKeyReused', 'This Idempotency-Key was used for a different request (method, path, query or body); use a new key.'),
  },
  429: {
    id: 'TooManyRequests',
    description:
      'Over a rate limit: the caller\'s user or instance (the tenant rate limits, with the `RateLimit-Policy` and `RateLimit` headers), or the stage\'s request rate; nothing was done. ' +
      'Retry after `Retry-After` seconds.',
    example: errorExample('TooManyRequests', 'Too many requests for this user; retry after the number of seconds in Retry-After.'),
    retryAfter: true,
    throttled: true,
    rateLimited: true,
  },
  500: { id: 'InternalError', description: 'An unexpected error (logged with its cause).', example: errorExample('InternalError', 'An unexpected error occurred.') },
  501: { id: 'NotImplemented', description: 'Not implemented by this deployment yet.', example: errorExample('NotImplemented', 'This operation is not available yet.') },
  503: { id: 'ServiceUnavailable', description: 'The data store is busy, or the service is starting; retry after `Retry-After` seconds.', example: errorExample('ServiceUnavailable', 'The service is busy; retry shortly.'), retryAfter: true },
};

const TOKEN_ERROR_EXAMPLE = { error: 'invalid_grant', error_description: 'The user name or password is incorrect.' };

const retryAfterHeader = { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' as const } } };

/** The headers of the tenant rate limits (draft-ietf-httpapi-ratelimit-headers), in components.headers. */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    description:
      'The tenant rate limits of this deployment, one item per limit: `"user";q=40;w=2, "instance";q=200;w=2` is a bucket of `q` requests (the burst) refilled in `w` seconds, ' +
      'i.e. `q/w` requests a second. Absent when the deployment sets no limit (calls without a token are not counted).',
    schema: { type: 'string' as const, examples: ['"user";q=40;w=2, "instance";q=200;w=2'] },
  },
  RateLimit: {
    description: 'The state of each limit after this call: `r` requests left at once, `t` seconds until the bucket is full again.',
    schema: { type: 'string' as const, examples: ['"user";r=39;t=1, "instance";r=187;t=1'] },
  },
};
const rateLimitHeaderRefs = Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]));

function errorComponent(e: ErrorResponse): ZodOpenApiResponseObject {
  return {
    description: e.description,
    ...(e.retryAfter ? { headers: { ...retryAfterHeader, ...(e.rateLimited ? rateLimitHeaderRefs : {}) } } : {}),
    content: { 'application/json': { schema: e.oauth ? oauthErrorBodySchema : e.throttled ? throttledBodySchema : errorBodySchema, example: e.example } },
  };
}

/** A route that takes an `Idempotency-Key` (shared/http/idempotency.ts): a protected write. */
const takesIdempotencyKey = (route: Route): boolean => route.auth && KEYED_METHODS.has(route.method);

/** The header of the routes that take one: one component parameter. */
const idempotencyKeyHeader = z.object({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(MAX_IDEMPOTENCY_KEY_LENGTH)
    .optional()
    .meta({
      param: {
        id: 'IdempotencyKey',
        description:
          `Makes a retry safe: a key you choose (1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, bare or as a quoted structured-field string), ` +
          `kept ${IDEMPOTENCY_WINDOW_SECONDS / 3600} hours for your user, this method and this path. The same key with the same query and body answers ` +
          'the first success again (status, headers such as Location, body) without doing anything again; with another request, 422 ' +
          '`IdempotencyKeyReused`; while the first still runs, 409 `IdempotencyKeyInProgress` with `Retry-After`. An error answer is not kept: a retry runs again.',
        example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
      },
    }),
});

/** The SCIM answers of the error statuses a SCIM call gives in SCIM's error body (429 is the throttle's own). */
const SCIM_ERRORS: Readonly<Record<number, { readonly id: string; readonly description: string; readonly scimType?: string }>> = {
  400: { id: 'ScimBadRequest', description: 'A bad request (`scimType`: invalidFilter, invalidSyntax, invalidPath, noTarget, invalidValue).', scimType: 'invalidFilter' },
  401: { id: 'ScimUnauthorized', description: 'No SCIM token of this instance (another instance\'s token, a revoked or malformed one).' },
  404: { id: 'ScimNotFound', description: 'No such resource in this instance.' },
  409: { id: 'ScimConflict', description: 'A userName, externalId or displayName another resource of the instance holds (`scimType`: uniqueness).', scimType: 'uniqueness' },
  413: { id: 'ScimPayloadTooLarge', description: 'The request body is larger than the deployment accepts.' },
  500: { id: 'ScimInternalError', description: 'An unexpected error (logged with its cause).' },
  503: { id: 'ScimServiceUnavailable', description: 'The data store is busy; retry shortly.' },
};

function scimErrorComponent(status: number): ZodOpenApiResponseObject {
  const e = SCIM_ERRORS[status]!;
  const example = { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status), ...(e.scimType ? { scimType: e.scimType } : {}), detail: e.description };
  return { description: e.description, content: { 'application/scim+json': { schema: scimErrorSchema, example } } };
}

/** The statuses every route of its kind can give, besides its own. */
function errorStatuses(route: Route, doc: OperationDoc): number[] {
  if (doc.scim) return [...new Set([400, 401, 413, 429, 500, 503, ...(doc.errors ?? [])])].sort((a, b) => a - b);
  const statuses = new Set<number>([400, 413, 429, 500, 503, ...(doc.errors ?? [])]);
  if (route.auth) [401, 403].forEach((s) => statuses.add(s));
  if (takesIdempotencyKey(route)) [409, 422].forEach((s) => statuses.add(s));
  return [...statuses].sort((a, b) => a - b);
}

const pascal = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

function operationIdOf(route: Route, taken: Set<string>): string {
  let id = route.collection ? `${route.operation}${pascal(route.collection)}` : route.operation;
  if (taken.has(id)) id = `${id}${pascal(route.method.toLowerCase())}`;
  taken.add(id);
  return id;
}

const pathParamSchemas = new Map<string, z.ZodType>();
/** One schema instance per name, so each is one component parameter. */
function pathParam(n: string): z.ZodType {
  let s = pathParamSchemas.get(n);
  if (!s) {
    const p = PATH_PARAMS[n] ?? { description: n, example: n };
    s = z.string().meta({ param: { id: n, description: p.description, example: p.example } });
    pathParamSchemas.set(n, s);
  }
  return s;
}

function pathParams(path: string): z.ZodObject | undefined {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  if (names.length === 0) return undefined;
  const shape: Record<string, z.ZodType> = {};
  for (const n of names) shape[n] = pathParam(n);
  return z.object(shape);
}

/** Examples, each once in components.examples (many operations share one). */
class Examples {
  readonly components: Record<string, { value: unknown }> = {};
  private readonly byValue = new Map<string, string>();
  ref(name: string, value: unknown): { $ref: string } {
    const text = JSON.stringify(value);
    let id = this.byValue.get(text);
    if (!id) {
      id = name;
      for (let i = 2; Object.hasOwn(this.components, id); i++) id = `${name}${i}`;
      this.components[id] = { value };
      this.byValue.set(text, id);
    }
    return { $ref: `#/components/examples/${id}` };
  }
}

function operationOf(route: Route, doc: OperationDoc, operationId: string, examples: Examples): ZodOpenApiOperationObject {
  const media = (schema: z.ZodType, example: unknown, name: string) => ({
    schema,
    ...(example !== undefined ? { examples: { [name]: examples.ref(name, example) } } : {}),
  });
  const collection = route.collection ? collectionByName(route.collection) : undefined;
  const path = pathParams(route.path);
  const query = doc.query ? z.object(doc.query) : undefined;
  const responses: Record<string, unknown> = {};
  for (const [status, s] of Object.entries(doc.success)) {
    const cacheControl = doc.cacheable ? { 'Cache-Control': { description: 'Cacheable: `public, max-age=…`.', schema: { type: 'string' as const } } } : undefined;
    // A call with a token counts against the tenant rate limits: its answer tells where they stand.
    const headers = route.auth ? { ...cacheControl, ...rateLimitHeaderRefs } : cacheControl;
    const own = s.headers ? Object.fromEntries(Object.entries(s.headers).map(([name, description]) => [name, { description, schema: { type: 'string' as const } }])) : undefined;
    responses[status] = {
      description: s.description,
      ...(headers || own ? { headers: { ...headers, ...own } } : {}),
      ...(s.schema ? { content: { [s.mediaType ?? 'application/json']: media(s.schema, s.example, `${operationId}${status}`) } } : {}),
    };
  }
  for (const status of errorStatuses(route, doc)) {
    if (status === 400 && doc.htmlError) {
      // A browser's page (single sign-on): an error it cannot send back to the client; a request the
      // pipeline refuses before the step runs (a malformed body) has the resource error body.
      responses['400'] = {
        description: `${doc.htmlError} A request the pipeline refuses before the step reads it (a malformed body) answers the resource error body.`,
        content: {
          'text/html': { schema: z.string(), example: '<!doctype html>…' },
          'application/json': { schema: errorBodySchema, example: errorExample('InvalidJson', 'The body is not valid JSON.') },
        },
      };
      continue;
    }
    if (status === 400 && doc.tokenErrors) {
      // The pipeline parses a JSON body before the token endpoint reads it: malformed JSON is the
      // pipeline's InvalidJson, in the resource error body.
      responses['400'] = {
        description: 'A token error (the spec\'s token error table); a malformed JSON body answers the resource error body (`InvalidJson`).',
        content: { 'application/json': { schema: z.union([oauthErrorBodySchema, errorBodySchema]), example: TOKEN_ERROR_EXAMPLE } },
      };
      continue;
    }
    if (status === 429 && (doc.tokenErrors || doc.loginThrottle)) {
      // The login throttle (per client address and per name) answers in the token error body.
      responses['429'] = {
        description: 'Too many logins from this client address or for this name, or the stage\'s request rate is exceeded; retry after `Retry-After` seconds.',
        headers: retryAfterHeader,
        content: { 'application/json': { schema: z.union([oauthErrorBodySchema, throttledBodySchema]), example: { error: 'too_many_requests', error_description: 'Too many login attempts; retry after the number of seconds in Retry-After.' } } },
      };
      continue;
    }
    const scimError = doc.scim ? SCIM_ERRORS[status] : undefined;
    responses[String(status)] = { $ref: `#/components/responses/${scimError ? scimError.id : ERRORS[status]!.id}` };
  }
  const body = doc.body;
  const requestBody = body
    ? {
        required: body.required,
        ...(body.description ? { description: body.description } : {}),
        content: body.mediaTypes
          ? Object.fromEntries(body.mediaTypes.map((m) => [m, media(body.schema, body.example, `${operationId}Request`)]))
          : body.form
          ? {
              'application/x-www-form-urlencoded': media(body.schema, body.example, `${operationId}Request`),
              'application/json': media(body.schema, body.example, `${operationId}Request`),
            }
          : { 'application/json': media(body.schema, body.example, `${operationId}Request`) },
      }
    : undefined;
  return {
    operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag ?? collection?.name ?? FAMILY_TAGS[route.family] ?? route.family],
    ...(route.scimToken ? { security: [{ scimToken: [] }] } : route.auth ? {} : { security: [] }),
    ...(path || query || takesIdempotencyKey(route)
      ? { requestParams: { ...(path ? { path } : {}), ...(query ? { query } : {}), ...(takesIdempotencyKey(route) ? { header: idempotencyKeyHeader } : {}) } }
      : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: responses as ZodOpenApiOperationObject['responses'],
  };
}

/** The routes the document describes: every row but the `$default` catch-all. */
export const documentedRoutes = (): Route[] => ROUTES.filter((r) => r.path !== '$default');

export interface BuildOptions {
  /** The package version (info.version). */
  readonly version: string;
}

/** The OpenAPI 3.1 document, as a plain JSON value. */
export function buildOpenApiDocument(opts: BuildOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, ZodOpenApiOperationObject>> = {};
  const taken = new Set<string>();
  const examples = new Examples();
  for (const route of documentedRoutes()) {
    const collection = route.collection ? collectionByName(route.collection) : undefined;
    const doc = describeOperation({ route, collection });
    const method = route.method === 'ANY' ? 'get' : route.method.toLowerCase();
    (paths[route.path] ??= {})[method] = operationOf(route, doc, operationIdOf(route, taken), examples);
  }
  const responses = {
    ...Object.fromEntries(Object.values(ERRORS).map((e) => [e.id, errorComponent(e)])),
    ...Object.fromEntries(Object.keys(SCIM_ERRORS).map((s) => [SCIM_ERRORS[Number(s)]!.id, scimErrorComponent(Number(s))])),
  };
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Gatehouse',
        version: opts.version,
        description:
          'An open, serverless access control service. Log in with `POST /token` (password grant), then send `Authorization: Bearer <access_token>` on every other call ' +
          'but `GET /api/sysinfo`. Your instance is `GET /api`; its Key is the folder key of every `/api/f/{folderKey}` path. ' +
          'Bodies without `$type` are read as the endpoint\'s type. Lists page with `page` (from 0) and `pageSize` (1..1000).',
      },
      servers: [LOCAL_SERVER],
      security: [{ bearer: [] }],
      tags: [...new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((o) => o.tags ?? [])))].map((name) => ({ name, description: tagDescription(name) })),
      paths: paths as ZodOpenApiPathsObject,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The `access_token` of `POST /token`.' },
          scimToken: { type: 'http', scheme: 'bearer', description: 'A SCIM token of the instance (`POST /api/f/{folderKey}/scimtokens`), on the SCIM calls only.' },
        },
        responses,
        headers: RATE_LIMIT_HEADERS,
        examples: examples.components,
        schemas: SHARED_SCHEMAS,
      },
    },
    {
      // 64-bit card numbers arrive as integers beyond 2^53: still JSON integers on the wire.
      override: ({ jsonSchema, zodSchema }) => {
        if (zodSchema._zod.def.type === 'bigint') jsonSchema.type = 'integer';
        // zod's int() bounds itself to safe integers; only the bounds the code states are news.
        if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
        if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
        const address = ADDRESS_TYPES.get(zodSchema);
        if (address) {
          // Sent without `$type`, an address gets the one type its fields fit; any namespace matches.
          jsonSchema.properties = { ...jsonSchema.properties, $type: typeTagJsonSchema(address) };
          jsonSchema.required = jsonSchema.required?.filter((f) => f !== '$type');
          if (jsonSchema.required?.length === 0) delete jsonSchema.required;
        }
        if (zodSchema === addressSchema && jsonSchema.oneOf) {
          jsonSchema.anyOf = jsonSchema.oneOf;
          delete jsonSchema.oneOf;
          jsonSchema.discriminator = typeDiscriminator(Object.fromEntries([...ADDRESS_TYPES.values()].map((t) => [t, `#/components/schemas/${t}`]))) as never;
        }
      },
      allowEmptySchema: { bigint: true },
    },
  );
  const json = JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
  unboundTypeTags(json);
  return json;
}

/**
 * A nested element's `$type` is limited as sent (the model's 256 characters), but it is stored
 * bare and answered with the deployment's namespace, so an answer's can be longer; element
 * schemas serve requests and responses alike, so the document states no length for it.
 */
function unboundTypeTags(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(unboundTypeTags);
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, any>;
  const tag = o.properties?.$type;
  if (tag && typeof tag === 'object' && tag.type === 'string' && tag.maxLength !== undefined) {
    delete tag.maxLength;
    tag.description ??= 'The element\'s type name, bare or with a namespace (answers carry the deployment\'s namespace).';
  }
  Object.values(o).forEach(unboundTypeTags);
}

/** The document as written to docs/openapi.json. */
export function formatDocument(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
