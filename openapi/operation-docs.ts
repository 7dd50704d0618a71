/**
 * What the OpenAPI document says about each operation of the route table, keyed by the row's
 * `operation` name: summary, query parameters, request body (schema and example) and responses.
 * Collection operations are described once and specialised by the row's collection. A row whose
 * operation has no entry here still appears in the document, with {@link genericOperation}; the
 * unit test `openapi-document.test.ts` lists those rows so they can be given an entry.
 */
import { REASONS } from '#shared/access/decision.ts';
import * as z from 'zod';
import { collectionByName } from '#shared/model/collections.ts';
import type { Route } from '#shared/routes.ts';
import { personSchemas } from '#shared/model/schemas/person.ts';
import { SCIM_OPERATIONS } from './scim.ts';
import {
  classicObject,
  EXAMPLE_KEYS,
  acknowledgementSchema,
  anyJsonSchema,
  eventMessageDataSchema,
  eventMessagePostingSchema,
  eventSummarySchema,
  exampleTag,
  hrefStringSchema,
  jwksSchema,
  keyListSchema,
  noteRequestSchema,
  authorizationServerMetadataSchema,
  paging,
  requestSchema,
  responseSchema,
  sysInfoSchema,
  tokenFormSchema,
  tokenResponseSchema,
  typeDiscriminator,
} from './schemas.ts';

export type {  OperationContext, OperationDoc,  } from './operation-doc.ts';
import type { BodyDoc, OperationContext, OperationDoc, SuccessDoc } from './operation-doc.ts';

type Describe = (c: OperationContext) => OperationDoc;

const ns = exampleTag;
const { instance: I, object: K, other: K2, event: E } = EXAMPLE_KEYS;

/** Types whose schemas differ: an example that fits each. */
function exampleFields(typeName: string): Record<string, unknown> {
  switch (typeName) {
    case 'PersonInfo':
      return {
        CommonName: 'Ada Lovelace',
        GivenName: 'Ada',
        Surname: 'Lovelace',
        Addresses: [{ $type: ns('EmailAddressInfo'), MailTo: 'ada@example.com', Type: 'Work' }],
        CardAssignments: [{ $type: ns('CardAssignmentInfo'), EncodedCardNumber: 12345678, DisplayCardNumber: '12345678', ActiveOn: '2026-01-01T00:00:00Z' }],
      };
    case 'UserInfo':
      return { CommonName: 'operator1', Role: 'Operator', Email: 'operator1@example.com' };
    case 'InstanceInfo':
      return { CommonName: 'Acme', SecurityLevel: 'Medium' };
    case 'IdentityProviderInfo':
      return {
        CommonName: 'Contoso Entra ID',
        Issuer: 'https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0',
        ClientId: '11111111-1111-1111-1111-111111111111',
        Scopes: 'openid email profile',
        EmailDomains: ['contoso.com'],
        JitProvisioning: true,
        DefaultRole: 'ReadOnly',
        RoleClaim: 'groups',
        RoleMapping: { '22222222-2222-2222-2222-222222222222': 'Administrator' },
        TokenEndpointAuthMethod: 'client_secret_basic',
        Enabled: true,
        RequireEmailVerified: false,
      };
    case 'EventTypeInfo':
      return { CommonName: 'Door forced', Monikers: [{ $type: ns('MonikerItem'), Namespace: 'acme', Nickname: 'door-forced' }], Priority: 10, RequiresAcknowledgement: true };
    case 'ScheduleInfo':
      return { CommonName: 'Office hours', IsAlways: false };
    default:
      return { CommonName: `Example ${typeName.replace(/Info$/, '')}` };
  }
}

function exampleRequest(typeName: string): Record<string, unknown> {
  const body: Record<string, unknown> = { $type: ns(typeName), ...exampleFields(typeName) };
  if (typeName === 'UserInfo') body.Password = 'Correct-Horse-7';
  // Write-only: sealed at rest, never in an answer.
  if (typeName === 'IdentityProviderInfo') body.ClientSecret = 'the-secret-the-provider-gave';
  return body;
}

function exampleResponse(typeName: string, collection: string): Record<string, unknown> {
  const folderLike = collection === 'folders' || collection === 'instances';
  return {
    $type: ns(typeName),
    ...exampleFields(typeName),
    Key: K,
    Href: folderLike ? `/api/f/${K}` : `/api/f/${I}/${collection}/${K}`,
    InFolderKey: I,
    InFolderHref: `/api/f/${I}`,
    ConcurrencyVersion: 1,
    Links: [{ $type: ns('Link'), Relation: 'Notes', Anchor: { $type: ns('Anchor'), Href: 'notes', Text: 'Notes' } }],
  };
}

const exampleEvent = {
  $type: ns('EventMessageData'),
  Key: E,
  Href: `/api/f/${I}/events/${E}`,
  InFolderKey: I,
  AppKey: K2,
  EventTypeKey: K,
  EventTypeMoniker: { $type: ns('MonikerItem'), Namespace: 'acme', Nickname: 'door-forced' },
  OccurredOn: '2026-05-01T12:00:00Z',
  PublishedOn: '2026-05-01T12:00:01Z',
  Priority: 10,
  RequiresAcknowledgement: true,
  MessageLong: 'Door forced: Front door',
  MessageShort: 'Door forced',
  EventDataBsonBase64: null,
  AlarmAcknowledgements: [],
  ObjectLinks: [{ $type: ns('ObjectLinkItem'), Relation: 'Door', LinkedObjectKey: K, CommonName: 'Front door', Href: `/api/f/${I}/doors/${K}` }],
  RelatedObjects: [{ $type: ns('ObjectLinkItem'), Relation: 'Door', LinkedObjectKey: K, CommonName: 'Front door', Href: `/api/f/${I}/doors/${K}` }],
  Links: [{ $type: ns('Link'), Relation: 'Connections', Anchor: { $type: ns('Anchor'), Href: 'connections', Text: 'Connected Objects' } }],
};

const errorExample = (code: string, message: string) => ({ Error: code, Message: message });

/** The collection's object type, and whether it holds other types too. */
function typeOf(c: OperationContext): { typeName: string; anyType: boolean; label: string; name: string } {
  const def = c.collection;
  if (!def) return { typeName: 'BaseInfo', anyType: true, label: 'object', name: 'objects' };
  return { typeName: def.typeName, anyType: def.acceptsTypes === '*', label: def.typeName, name: def.name };
}

/**
 * "a person", "an input scanner": the collection's type in words (its collection name where it
 * holds vendor types: "a reader"), for summaries.
 */
function one(c: OperationContext): string {
  const def = c.collection;
  if (!def) return 'an object';
  const noun =
    def.name === 'people'
      ? 'person'
      : def.acceptsTypes === '*'
        ? def.name.replace(/s$/, '')
        : def.typeName.replace(/Info$/, '').replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase();
  return `${/^([aeio]|u(?!s))/.test(noun) ? 'an' : 'a'} ${noun}`;
}

/** The request body of a collection's create and replace: its type, or each type it accepts. */
function objectBody(c: OperationContext, what: string): BodyDoc {
  const { typeName, anyType } = typeOf(c);
  const extra = Array.isArray(c.collection?.acceptsTypes) ? c.collection.acceptsTypes : [];
  const types = [typeName, ...extra];
  const schema = extra.length
    ? z.union(types.map((t) => requestSchema(t))).meta({
        description: `One of ${types.join(', ')}, selected by \`$type\` (any namespace); without \`$type\` a ${typeName}.`,
        discriminator: typeDiscriminator(Object.fromEntries(types.map((t) => [t, `#/components/schemas/${t}Request`]))),
      })
    : requestSchema(typeName, anyType);
  return { schema, example: exampleRequest(typeName), required: true, description: what };
}

/** An object of the collection as answered: its type, or each type it accepts (an input may be an AscInputInfo). */
function collectionResponseSchema(c: OperationContext): z.ZodType {
  const { typeName, anyType } = typeOf(c);
  const extra = Array.isArray(c.collection?.acceptsTypes) ? c.collection.acceptsTypes : [];
  if (!extra.length) return responseSchema(typeName, anyType);
  const types = [typeName, ...extra];
  return z.union(types.map((t) => responseSchema(t))).meta({
    description: `One of ${types.join(', ')}, by \`$type\`.`,
    discriminator: typeDiscriminator(Object.fromEntries(types.map((t) => [t, `#/components/schemas/${t}`]))),
  });
}

function objectResponse(c: OperationContext, description: string): SuccessDoc {
  const { typeName, name } = typeOf(c);
  return { description, schema: collectionResponseSchema(c), example: exampleResponse(typeName, name) };
}

const linkDescription =
  'Links: `meta` (Metadata), `monikers`, `commonname` (a JSON string), `images`, `notes`, `connections` (related objects), ' +
  '`references`, `takeownership` (POST only)' ;

/** The folder-level rows act on a folder or an instance. */
const folderContext = (route: Route): OperationContext => ({ route, collection: collectionByName('folders') });
const folderResponse = (description: string): SuccessDoc => ({
  description,
  schema: z.union([responseSchema('FolderInfo'), responseSchema('InstanceInfo')]).meta({ description: 'A FolderInfo, or an InstanceInfo for an instance.' }),
  example: exampleResponse('FolderInfo', 'folders'),
});
const folderBody = (): BodyDoc => ({
  schema: z.union([requestSchema('FolderInfo'), requestSchema('InstanceInfo')]).meta({ description: 'A FolderInfo or, for an instance, an InstanceInfo.' }),
  example: exampleRequest('FolderInfo'),
  required: true,
});

const list: Describe = (c) => ({
  summary: `List ${typeOf(c).name}`,
  description: `The ${typeOf(c).name} of a folder, a page at a time. An empty or short page is the last.`,
  query: paging,
  success: { 200: { description: `A page of ${typeOf(c).label}.`, schema: z.array(collectionResponseSchema(c)), example: [exampleResponse(typeOf(c).typeName, typeOf(c).name)] } },
  errors: [404],
});

const create: Describe = (c) => ({
  summary: `Create ${one(c)}`,
  description: 'The server sets Key, Href, InFolderKey and ConcurrencyVersion. Unknown (vendor) fields are kept as sent.',
  body: objectBody(c, `The new ${typeOf(c).label}.`),
  success: { 201: objectResponse(c, 'The created object.') },
  errors: [404, 409],
});

const get: Describe = (c) => ({
  summary: `Read ${one(c)}`,
  success: { 200: objectResponse(c, 'The object.') },
  errors: [404],
});

const replace: Describe = (c) => ({
  summary: `Replace ${one(c)}`,
  description:
    'Send the full object with the ConcurrencyVersion you read; a stale version answers 409 ConcurrencyConflict. ' +
    (c.collection?.putAnswersNoContent ? 'Answers 204 (the spec\'s form for this collection).' : 'Answers the updated object, or 204 when the save changes nothing.'),
  body: objectBody(c, 'The full object.'),
  success: (c.collection?.putAnswersNoContent
    ? { 204: { description: 'Saved.' } }
    : { 200: objectResponse(c, 'The updated object.'), 204: { description: 'Nothing changed.' } }) as Record<number, SuccessDoc>,
  errors: [404, 409],
});

const remove: Describe = (c) => ({
  summary: `Delete ${one(c)}`,
  success: { 204: { description: 'Deleted.' } },
  errors: [404, 409],
});

const getLink: Describe = (c) => ({
  summary: `Read a link of ${one(c)}`,
  description: `${linkDescription}${c.collection?.name === 'inputs' ? ', `status` (the latest InputStatusItem)' : ''}. Another method on a link answers 405 with \`Allow\`.`,
  success: { 200: { description: 'The link\'s content.', schema: anyJsonSchema, example: [{ $type: ns('NoteInfo'), Key: K2, NoteText: 'Checked on site.', CreatedOn: '2026-05-01T12:00:00Z', CreatedBy: 'Gatehouse\\admin' }] } },
  errors: [404, 405],
});

const storedNoteSchema = z.looseObject({ $type: z.string(), Key: z.string(), NoteText: z.string() });
const exampleNote = { $type: ns('NoteInfo'), Key: K2, NoteText: 'Checked on site.', CreatedOn: '2026-05-01T12:00:00Z', CreatedBy: 'Gatehouse\\admin' };

const postLink: Describe = (c) =>
  c.collection?.name === 'people'
    ? {
        summary: 'Add a note or a card, or take ownership',
        description:
          '`notes`: adds a NoteInfo (201). `cards`: adds a CardAssignmentInfo to the person (201, with its stable Key; one write of the person with its card claims). ' +
          '`takeownership`: accepted, changes nothing (204): an object always belongs to the instance that holds it.',
        body: {
          schema: z.union([noteRequestSchema, requestSchema('CardAssignmentInfo')]),
          example: { $type: ns('NoteInfo'), NoteText: 'Checked on site.' },
          required: false,
          description: 'A NoteInfo for `notes`, a CardAssignmentInfo for `cards`; nothing for `takeownership`.',
        },
        success: {
          201: { description: 'The note or the card as stored.', schema: z.union([storedNoteSchema, cardResponseSchema]), example: exampleNote },
          204: { description: 'Ownership taken (nothing to transfer).' },
        },
        errors: [404, 405, 409],
      }
    : {
        summary: 'Add a note, or take ownership',
        description: '`notes`: adds a NoteInfo (201). `takeownership`: accepted, changes nothing (204): an object always belongs to the instance that holds it.',
        body: { schema: noteRequestSchema, example: { $type: ns('NoteInfo'), NoteText: 'Checked on site.' }, required: false, description: 'A NoteInfo for `notes`; nothing for `takeownership`.' },
        success: {
          201: { description: 'The note as stored.', schema: storedNoteSchema, example: exampleNote },
          204: { description: 'Ownership taken (nothing to transfer).' },
        },
        errors: [404, 405, 409],
      };

const deleteLinkItem: Describe = (c) => ({
  summary: c.collection?.name === 'people' ? 'Remove a note or a card' : 'Remove a note',
  success: { 204: { description: 'Removed.' } },
  errors: [404, 405],
});

const putLink: Describe = (c) =>
  c.collection?.name === 'people'
    ? {
        summary: 'Give a person an access level',
        description: 'PUT `accesslevels` with an access level\'s Href: connects it, keeping the others (the AccessLevel relation).',
        body: { schema: hrefStringSchema, example: `/api/f/${I}/accesslevels/${K2}`, required: true },
        success: { 204: { description: 'Connected.' } },
        errors: [404, 405, 409, 501],
      }
    : {
        summary: c.collection?.name === 'inputs' ? 'Store an input\'s status' : `Write a link of ${one(c)}`,
        description: 'PUT `status` with an InputStatusItem (its fields beyond `$type` are kept as sent).',
        body: { schema: requestSchema('InputStatusItem'), example: { $type: ns('InputStatusItem'), StatusCode: 1 }, required: true },
        success: { 204: { description: 'Stored.' } },
        errors: [404, 405, 501],
      };

const connect: Describe = (c) => ({
  summary: `Connect ${one(c)} to another object`,
  description:
    'POST or PUT. Relations: AccessLevel and ScheduledAccessLevel (person → access level), BadgeType (person, one-to-one), Schedule and Reader (access level →), Door (reader →, one-to-one), Controller (one-to-one). ' +
    'For ScheduledAccessLevel a JSON body `{ActiveOn, ExpiresOn}` sets the validity window (no body: an open window); other relations take no body. Answers the source object with its new links.',
  query: {
    relatedKey: z.string().meta({ description: 'The key of the object to connect.', examples: [K2] }),
    isOneToOne: z.boolean().optional().meta({ description: 'Accepted for compatibility (any case); the relation decides.' }),
    addAsTag: z.boolean().optional().meta({ description: 'Accepted for compatibility and ignored.' }),
  },
  body: { schema: scheduleWindowSchema, example: { ActiveOn: '2026-03-01T00:00:00Z', ExpiresOn: '2026-03-31T23:59:59Z' }, required: false, description: 'The window of a ScheduledAccessLevel.' },
  success: { 200: objectResponse(c, 'The source object.') },
  errors: [403, 404, 409],
});

const scheduleWindowSchema = z
  .object({
    $type: z.string().optional(),
    ActiveOn: z.string().nullish().meta({ format: 'date-time' }),
    ExpiresOn: z.string().nullish().meta({ format: 'date-time' }),
  })
  .meta({ id: 'ScheduleWindow', description: 'A validity window (UTC; either end may be null).' });

const cardResponseSchema = classicObject(personSchemas().cardAssignmentInfoSchema)
  .extend({ Key: z.string().meta({ description: 'The card\'s stable key.' }), $type: z.string() })
  .meta({ id: 'StoredCardAssignment', description: 'A card of a person, as stored, with its stable Key.' });
const exampleCard = { $type: ns('CardAssignmentInfo'), Key: K2, EncodedCardNumber: 1234, FacilityCode: 21, DisplayCardNumber: '1234', ActiveOn: null, ExpiresOn: '2030-01-01T00:00:00Z' };

const webhookFields = {
  CommonName: z.string().optional(),
  Url: z.string().meta({ description: 'https (http only to loopback on the local runtime).' }),
  Enabled: z.boolean().optional(),
  Topics: z.array(z.string()).optional().meta({ description: 'Live topics: `/<instance_key>/$` or `/<instance_key>/<object_key>`; default `/<instance_key>/$`.' }),
  AppKeys: z.array(z.string()).optional(),
  EventTypeKeys: z.array(z.string()).optional(),
  MinimumPriority: z.number().int().nullish(),
  IncludeAuditEvents: z.boolean().optional(),
};
const webhookRequestSchema = z
  .looseObject({ $type: z.string().optional(), ...webhookFields })
  .meta({ id: 'WebhookSubscriptionInfoRequest', description: 'A webhook subscription as sent (Secret, DisabledReason, LastDeliveryOn, LastFailureOn are read-only).' });
const webhookResponseSchema = z
  .looseObject({
    $type: z.string(),
    Key: z.string(),
    Href: z.string(),
    ...webhookFields,
    Secret: z.string().optional().meta({ description: '`whsec_` + base64 of 32 random bytes: only in the answers of create and rotatesecret.' }),
    DisabledReason: z.string().nullish(),
    LastDeliveryOn: z.string().nullish(),
    LastFailureOn: z.string().nullish(),
  })
  .meta({ id: 'WebhookSubscriptionInfo', description: 'A webhook subscription as the API returns it.' });
const exampleWebhook = {
  $type: ns('WebhookSubscriptionInfo'),
  Key: K,
  Href: `/api/f/${I}/webhooks/${K}`,
  InFolderKey: I,
  CommonName: 'Door events to the ERP',
  Url: 'https://hooks.example.org/gatehouse',
  Enabled: true,
  Topics: [`/${I}/$`],
  AppKeys: [],
  EventTypeKeys: [],
  MinimumPriority: null,
  IncludeAuditEvents: true,
  DisabledReason: null,
  LastDeliveryOn: null,
  LastFailureOn: null,
};
const exampleWebhookRequest = { CommonName: 'Door events to the ERP', Url: 'https://hooks.example.org/gatehouse', Topics: [`/${I}/$`], MinimumPriority: 5 };
const outcomeSchema = z
  .looseObject({ StatusCode: z.number().int().optional(), Error: z.string().optional(), DurationMs: z.number() })
  .meta({ id: 'WebhookOutcome', description: 'The outcome of one delivery attempt.' });
const deliverySchema = z
  .looseObject({
    Key: z.string(),
    EventKey: z.string().nullish(),
    Attempt: z.number().int(),
    StatusCode: z.number().int().optional(),
    Error: z.string().optional(),
    DurationMs: z.number().nullish(),
    AttemptedOn: z.string().nullish(),
    NextAttemptOn: z.string().nullish(),
  })
  .meta({ id: 'WebhookDelivery', description: 'One delivery attempt, newest first.' });
const aggregateStageSchema = z
  .union([z.record(z.string(), z.unknown()), z.string()])
  .meta({ description: 'A stage object, or a JSON string holding one (the C# client sends strings).' });
const aggregationPipelineSchema = z.array(aggregateStageSchema).meta({ id: 'AggregationPipeline', description: 'The pipeline stages.' });
const aggregateResultSchema = z.array(z.unknown()).meta({ id: 'AggregationResult', description: 'The result documents.' });
const replayWindowSchema = z
  .object({ Since: z.string().meta({ format: 'date-time' }), Until: z.string().meta({ format: 'date-time' }) })
  .meta({ id: 'ReplayWindow', description: 'The window of OccurredOn to re-send.' });

const usageDaySchema = z
  .looseObject({
    $type: z.string(),
    Day: z.string().meta({ format: 'date' }),
    Requests: z.record(z.string(), z.number().int()).meta({ description: 'Requests answered, per operation family (families without requests are left out).' }),
    TotalRequests: z.number().int(),
    EventsPublished: z.number().int().meta({ description: 'Events published through the API (live-only ones included).' }),
    AuditEvents: z.number().int().meta({ description: 'Audit events the service wrote for object changes.' }),
    ObjectsCreated: z.number().int(),
    ObjectsDeleted: z.number().int(),
  })
  .meta({ id: 'UsageDay', description: 'The metered usage of one UTC day, summed over the instance and its sub-instances.' });
const usageSchema = z
  .looseObject({
    $type: z.string(),
    InstanceKey: z.string(),
    From: z.string().meta({ format: 'date' }),
    To: z.string().meta({ format: 'date' }),
    InstanceKeys: z.array(z.string()).meta({ description: 'The instance and the sub-instances summed, breadth first.' }),
    StoredObjects: z.number().int().meta({ description: 'Objects stored now (created minus deleted since metering began), events apart.' }),
    Days: z.array(usageDaySchema),
  })
  .meta({ id: 'UsageInfo', description: 'Metered usage of an instance and its sub-instances, per UTC day.' });
const exampleUsage = {
  $type: ns('UsageInfo'),
  InstanceKey: I,
  From: '2026-05-01',
  To: '2026-05-01',
  InstanceKeys: [I, K2],
  StoredObjects: 1520,
  Days: [
    { $type: ns('UsageDay'), Day: '2026-05-01', Requests: { events: 310, people: 42, token: 12 }, TotalRequests: 364, EventsPublished: 300, AuditEvents: 9, ObjectsCreated: 7, ObjectsDeleted: 2 },
  ],
};

const disconnect: Describe = (c) => ({
  summary: `Disconnect ${one(c)} from an object`,
  success: { 204: { description: 'Disconnected (or was not connected).' } },
  errors: [404],
});

const eventTypeBody = (required: boolean): BodyDoc => ({ schema: requestSchema('EventTypeInfo'), example: exampleRequest('EventTypeInfo'), required });
const eventTypeResponse = (description: string): SuccessDoc => ({
  description,
  schema: responseSchema('EventTypeInfo'),
  example: { ...exampleResponse('EventTypeInfo', 'eventtypes'), Href: `/api/f/${I}/apps/${K2}/eventtypes/${K}`, InFolderKey: K2, InFolderHref: `/api/f/${I}/apps/${K2}` },
});

const GET_BODY_NOTE =
  'The spec sends this call as a GET with a body (OpenAPI 3.1 allows describing it). Fetch and some proxies cannot send a GET body; ' +
  'the same call is accepted with';

/** The operations, by route-table name. */
// Access decisions (issue 36)
const objectRefSchema = z
  .object({ Key: z.string(), CommonName: z.string().nullable(), Href: z.string() })
  .meta({ id: 'AccessObjectRef', description: 'An object a decision names.' });
const reasonSchema = z.enum(REASONS)
  .meta({ id: 'AccessReason', description: 'The first step that failed (`Granted` and `FreeAccess` grant).' });
const cardNumberSchema = z.union([z.number().int(), z.string()]).meta({ description: 'An integer, or its digits as a string (exact to 64 bits).' });
const accessDecisionRequestSchema = z
  .strictObject({
    ReaderKey: z.string().meta({ description: 'The reader\'s key (in the path\'s folder or below it).' }),
    EncodedCardNumber: cardNumberSchema,
    FacilityCode: z.union([z.number().int(), z.string()]).nullish(),
    PinCode: z.string().nullish().meta({ description: 'For a card-and-PIN reader; never answered, published or logged.' }),
    At: z.string().nullish().meta({ format: 'date-time', description: 'The instant, with Z or an offset (default: now).' }),
    Record: z.boolean().optional().meta({ description: 'true: a card read (Operator, Administrator): publishes Access Granted/Denied and counts a limited card\'s use.' }),
  })
  .meta({ id: 'AccessDecisionRequest', description: 'A card read to decide. Unknown fields are 400.' });
const accessDecisionSchema = z
  .looseObject({
    $type: z.string(),
    Granted: z.boolean(),
    Reason: reasonSchema,
    Message: z.string(),
    At: z.string().meta({ format: 'date-time' }),
    LocalTime: z.string().meta({ description: 'The reader\'s local time with its offset.' }),
    TimeZone: z.string(),
    StrikeSeconds: z.number().int().nullable(),
    Reader: objectRefSchema,
    Door: objectRefSchema.nullable(),
    Controller: objectRefSchema.nullable(),
    Person: objectRefSchema.nullable(),
    Card: z.object({ Key: z.string(), DisplayCardNumber: z.string().nullable() }).nullable(),
    AccessLevel: objectRefSchema.nullable(),
    Schedule: objectRefSchema.nullable(),
    Checks: z.array(z.looseObject({ Step: z.enum(['ReaderMode', 'Card', 'CardState', 'Pin', 'AccessLevel', 'Schedule']), Passed: z.boolean(), Evaluated: z.boolean().optional().meta({ description: 'false: the step could not be evaluated (no card: no levels).' }), Found: z.string() })),
  })
  .meta({ id: 'AccessDecisionInfo', description: 'A decision and its explanation: every step with what it found.' });
const exampleDecision = {
  $type: ns('AccessDecisionInfo'),
  Granted: false,
  Reason: 'CardExpired',
  Message: 'Card 4242 of Jane Doe expired on 2026-10-01',
  At: '2026-11-25T15:00:00.000Z',
  LocalTime: '2026-11-25T10:00:00-05:00',
  TimeZone: 'America/Toronto',
  StrikeSeconds: null,
  Reader: { Key: K, CommonName: 'Front reader', Href: `/api/f/${I}/readers/${K}` },
  Door: { Key: K2, CommonName: 'Front door', Href: `/api/f/${I}/doors/${K2}` },
  Controller: null,
  Person: { Key: K2, CommonName: 'Jane Doe', Href: `/api/f/${I}/people/${K2}` },
  Card: { Key: K, DisplayCardNumber: '4242' },
  AccessLevel: null,
  Schedule: null,
  Checks: [
    { Step: 'ReaderMode', Passed: true, Found: 'Card only' },
    { Step: 'Card', Passed: true, Found: 'Card 4242 of Jane Doe' },
    { Step: 'CardState', Passed: false, Found: 'Expired on 2026-10-01' },
  ],
};
const whoCanPassSchema = z
  .array(z.object({ Person: objectRefSchema, Card: z.object({ Key: z.string(), DisplayCardNumber: z.string().nullable() }), AccessLevel: objectRefSchema.nullable(), Schedule: objectRefSchema.nullable() }))
  .meta({ id: 'WhoCanPassList' });
const accessibleReadersSchema = z
  .array(z.object({ Reader: objectRefSchema, Door: objectRefSchema.nullable(), AccessLevel: objectRefSchema.nullable(), Schedule: objectRefSchema.nullable() }))
  .meta({ id: 'AccessibleReaderList' });
const atQuery = { at: z.string().optional().meta({ format: 'date-time', description: 'The instant (default: now).' }) };

// Doors (issue 37)
const lockdownSchema = z
  .object({
    Folder: objectRefSchema.nullable().meta({ description: 'The folder or instance that started it (null when it was started above the caller\'s instance).' }),
    StartedOn: z.string().meta({ format: 'date-time' }),
    StartedBy: z.string(),
    Reason: z.string(),
  })
  .meta({ id: 'LockdownInfo', description: 'A lockdown in effect: which folder started it, when, by whom, why.' });
const lockdownStatusSchema = z
  .looseObject({ $type: z.string(), Folder: objectRefSchema, InEffect: z.boolean(), Lockdown: lockdownSchema.nullable().meta({ description: 'The outermost lockdown over the folder, or null.' }) })
  .meta({ id: 'LockdownStatusInfo', description: 'Whether a lockdown is in effect at a folder (its own, or one above it).' });
const lockdownRequestSchema = z.strictObject({ Reason: z.string().min(1).max(1000) }).meta({ id: 'LockdownRequest', description: 'Why every reader below is locked down.' });
const accessMethodSchema = z.union([z.literal(0), z.literal(2), z.literal(5), z.literal(6)]).meta({ description: '0 card only, 2 card and PIN, 5 unlocked (free passage), 6 locked down.' });
const doorStatusSchema = z
  .looseObject({
    $type: z.string(),
    Door: objectRefSchema.nullable(),
    Readers: z.array(
      z.object({
        Reader: objectRefSchema,
        AccessMethod: z.number().int().meta({ description: 'The reader\'s normal mode (its AccessMethod).' }),
        EffectiveAccessMethod: z.number().int().meta({ description: 'What a decision sees now: the set mode while it lasts, 6 under a lockdown.' }),
        Until: z.string().nullable().meta({ format: 'date-time', description: 'The end of the set mode, or null.' }),
      }),
    ),
    LockedDown: lockdownSchema.nullable(),
    UnlockedUntil: z.string().nullable().meta({ format: 'date-time', description: 'The end of the momentary unlock while it lasts, else null.' }),
    LastEvent: objectRefSchema.nullable().meta({ description: 'The newest event related to the door (CommonName: its MessageShort).' }),
  })
  .meta({ id: 'DoorStatusInfo', description: 'What a door is doing: its readers\' modes, the lockdown in effect, a momentary unlock, its last event.' });
const credentialCardSchema = z
  .looseObject({
    EncodedCardNumber: z.string().meta({ description: 'Decimal digits (exact to 64 bits).' }),
    FacilityCode: z.union([z.number(), z.string()]).nullable(),
    Removed: z.boolean().optional().meta({ description: 'In an incremental answer: the card no longer passes here (only the number and facility code are given).' }),
    PersonKey: z.string().optional(),
    PersonName: z.string().nullable().optional(),
    ActiveOn: z.string().nullable().optional(),
    ExpiresOn: z.string().nullable().optional(),
    IsDisabled: z.boolean().optional(),
    LockdownExempt: z.boolean().optional(),
    ExtendedAccess: z.boolean().optional(),
    OriginalUseCount: z.number().int().optional(),
    CurrentUseCount: z.number().int().optional(),
    PinHash: z.string().nullable().optional().meta({ description: 'hex SHA-256 of `<PinSalt>:<PIN>`; never the PIN.' }),
    Grants: z.array(z.looseObject({ ReaderKey: z.string(), ScheduleKey: z.string(), AccessLevelKey: z.string(), ActiveOn: z.string().nullable().optional(), ExpiresOn: z.string().nullable().optional() })).optional(),
  })
  .meta({ id: 'CredentialCardItem' });
const credentialDownloadSchema = z
  .looseObject({
    $type: z.string(),
    Version: z.string().meta({ description: 'The same on every page of one download; give it as `If-None-Match` or `since`.' }),
    Incremental: z.boolean().meta({ description: 'true: only the cards changed since `since` (upsert them; remove the `Removed` ones); false: the whole download (fetch every page).' }),
    TimeZone: z.string(),
    Readers: z.array(z.looseObject({ Key: z.string(), CommonName: z.string().nullable(), AccessMethod: z.number().int(), Door: objectRefSchema.nullable() })),
    Schedules: z.array(z.looseObject({ Key: z.string(), CommonName: z.string().nullable(), IsAlways: z.boolean(), ScheduleDurations: z.array(z.unknown()) })),
    Holidays: z.array(z.looseObject({ Key: z.string(), HolidayDays: z.array(z.unknown()) })),
    Lockdown: z.looseObject({}).nullable(),
    PinSalt: z.string(),
    Cards: z.array(credentialCardSchema),
  })
  .meta({ id: 'CredentialDownloadInfo', description: 'What a controller needs to decide alone for the readers connected to it.' });
const exampleLockdownStatus = {
  $type: ns('LockdownStatusInfo'),
  Folder: { Key: K, CommonName: 'Building A', Href: `/api/f/${K}` },
  InEffect: true,
  Lockdown: { Folder: { Key: K, CommonName: 'Building A', Href: `/api/f/${K}` }, StartedOn: '2026-11-25T15:00:00.000Z', StartedBy: 'operator1', Reason: 'Intruder reported' },
};
const exampleDoorStatus = {
  $type: ns('DoorStatusInfo'),
  Door: { Key: K2, CommonName: 'Front door', Href: `/api/f/${I}/doors/${K2}` },
  Readers: [{ Reader: { Key: K, CommonName: 'Front reader', Href: `/api/f/${I}/readers/${K}` }, AccessMethod: 0, EffectiveAccessMethod: 5, Until: '2026-11-25T22:00:00.000Z' }],
  LockedDown: null,
  UnlockedUntil: null,
  LastEvent: { Key: E, CommonName: 'Reader Mode Changed', Href: `/api/f/${I}/events/${E}` },
};

/** The console's refresh cookie, as the token answer sets it. */
const CONSOLE_COOKIE_SET =
  'For the console (`gatehouseConsole`) only: `gatehouse_console_refresh=<refresh token>; Path=/token; Max-Age=<seconds the login lasts>; HttpOnly; ' +
  'SameSite=Strict` (`Secure` over HTTPS). The body then has no `refresh_token`; the console\'s refresh sends the cookie (and the `X-Gatehouse-CSRF` header).';

const OPERATIONS: Readonly<Record<string, Describe>> = {
  // Access decisions and troubleshooting (issue 36)
  accessDecision: () => ({
    summary: 'Decide a card read at a reader',
    tag: 'Access decisions',
    description:
      'Evaluates reader mode, card (held in the reader\'s instance or one above it, nearest first), card state, PIN, the person\'s levels and their schedules in the reader\'s zone; the first failing step gives `Reason`, and `Checks` explains each step. ' +
      'Any role with read access to the reader may evaluate. With `Record: true` (Operator, Administrator) it is a card read: the result event ("Access Granted"/"Access Denied" of the built-in MercuryService app) is published in the reader\'s folder, and a granted card with a use limit counts one use, atomically. Bad input is 400 and records nothing.',
    body: { schema: accessDecisionRequestSchema, example: { ReaderKey: K, EncodedCardNumber: 4242, At: '2026-11-25T15:00:00Z' }, required: true },
    success: { 200: { description: 'The decision.', schema: accessDecisionSchema, example: exampleDecision } },
    errors: [403, 404],
  }),
  whoCanPass: () => ({
    summary: 'Who can pass a reader',
    tag: 'Access decisions',
    description:
      'The people whose card would be granted at the reader at `at`, as `{ Person, Card, AccessLevel, Schedule }`. Pages walk the holders of the reader\'s levels (the reverse side of their connections), so a page reads O(pageSize) items; a page may hold fewer rows than pageSize (the holders it read who would be denied are left out).',
    query: { ...atQuery, ...paging },
    success: { 200: { description: 'One page of people who can pass.', schema: whoCanPassSchema, example: [{ Person: { Key: K2, CommonName: 'Jane Doe', Href: `/api/f/${I}/people/${K2}` }, Card: { Key: K, DisplayCardNumber: '4242' }, AccessLevel: { Key: K, CommonName: 'Staff', Href: `/api/f/${I}/accesslevels/${K}` }, Schedule: { Key: K2, CommonName: 'Weekdays 9-17', Href: `/api/f/${I}/schedules/${K2}` } }] } },
    errors: [403, 404],
  }),
  accessibleReaders: () => ({
    summary: 'The readers a person can pass',
    tag: 'Access decisions',
    description: 'Each reader of the person\'s levels where one of the person\'s cards would be granted at `at`, as `{ Reader, Door, AccessLevel, Schedule }`.',
    query: atQuery,
    success: { 200: { description: 'The readers.', schema: accessibleReadersSchema, example: [{ Reader: { Key: K, CommonName: 'Front reader', Href: `/api/f/${I}/readers/${K}` }, Door: null, AccessLevel: { Key: K, CommonName: 'Staff', Href: `/api/f/${I}/accesslevels/${K}` }, Schedule: null }] } },
    errors: [403, 404],
  }),
  // Doors (issue 37)
  startLockdown: () => ({
    summary: 'Lock down a folder or instance and everything below it',
    tag: 'Doors',
    description:
      'Operator or Administrator. One write, whatever the number of readers below: every decision at a reader below denies `ReaderLockedDown` (a `LockdownExempt` card that would otherwise be granted passes) and momentary unlocks are refused (409 `LockedDown`). ' +
      'Publishes "Lockdown Started" (`MercuryService`/`lockdown-started`, the highest priority of the door events, requiring acknowledgement). A folder locked down already answers 200 with its lockdown and publishes nothing.',
    body: { schema: lockdownRequestSchema, example: { Reason: 'Intruder reported' }, required: true },
    success: { 201: { description: 'The lockdown started.', schema: lockdownStatusSchema, example: exampleLockdownStatus }, 200: { description: 'The folder was locked down already.', schema: lockdownStatusSchema, example: exampleLockdownStatus } },
    errors: [403, 404],
  }),
  getLockdown: () => ({
    summary: 'Whether a lockdown is in effect at a folder',
    tag: 'Doors',
    description: 'Any role. The lockdown of the folder or of one above it (the outermost): which folder started it, when, by whom and why.',
    success: { 200: { description: 'The lockdown status.', schema: lockdownStatusSchema, example: exampleLockdownStatus } },
    errors: [403, 404],
  }),
  endLockdown: () => ({
    summary: 'End the lockdown a folder started',
    tag: 'Doors',
    description: 'Administrator. Publishes "Lockdown Ended" (`lockdown-ended`). 404 `NotLockedDown` when this folder started none (a lockdown above it ends where it started).',
    success: { 200: { description: 'The lockdown status after it ended.', schema: lockdownStatusSchema, example: { ...exampleLockdownStatus, InEffect: false, Lockdown: null } } },
    errors: [403, 404],
  }),
  setReaderMode: () => ({
    summary: 'Set or reset a reader\'s mode',
    tag: 'Doors',
    description:
      'Operator or Administrator. `AccessMethod` 0, 2, 5 or 6, until `Until` (an instant with a zone, later than now) when given: decisions after it see the normal mode again, with no job. `{ "AccessMethod": null }` resets the reader to its normal mode. ' +
      'Publishes "Reader Mode Changed" (`reader-mode-changed`, BSON `{ Reader, From, To, Until, By }`) and answers the status of the reader\'s door (of the reader alone without a door).',
    body: { schema: z.strictObject({ AccessMethod: accessMethodSchema.nullable(), Until: z.string().nullish().meta({ format: 'date-time' }) }).meta({ id: 'ReaderModeRequest' }), example: { AccessMethod: 5, Until: '2026-11-25T22:00:00Z' }, required: true },
    success: { 200: { description: 'The door\'s status.', schema: doorStatusSchema, example: exampleDoorStatus } },
    errors: [403, 404],
  }),
  unlockDoor: () => ({
    summary: 'Unlock a door momentarily',
    tag: 'Doors',
    description:
      'Operator or Administrator. `Seconds` 1 to 3600 (default: the door\'s readers\' `NormalGrantAccessTime`). Publishes "Door Unlocked" (`door-unlocked`, BSON `{ Door, Readers, Seconds, By }`). A door under a lockdown: 409 `LockedDown`, nothing published. ' +
      'The original service\'s `mercury:command-unlockDoor` (app `MercuryCommands`) posted to the event sink with a `Door` (or a `Reader` of a door) and BSON `{ Duration }` does the same.',
    body: { schema: z.strictObject({ Seconds: z.number().int().min(1).max(3600).optional() }).meta({ id: 'UnlockRequest' }), example: { Seconds: 10 }, required: false },
    success: { 200: { description: 'The door\'s status.', schema: doorStatusSchema, example: { ...exampleDoorStatus, UnlockedUntil: '2026-11-25T15:00:10.000Z' } } },
    errors: [403, 404, 409],
  }),
  doorStatus: () => ({
    summary: 'What a door is doing',
    tag: 'Doors',
    description: 'Any role. Each reader\'s normal and effective mode (and the end of a set mode), the lockdown in effect, the end of a momentary unlock, the door\'s last event.',
    success: { 200: { description: 'The door\'s status.', schema: doorStatusSchema, example: exampleDoorStatus } },
    errors: [403, 404],
  }),
  credentials: () => ({
    summary: 'The credential download of a controller',
    tag: 'Doors',
    description:
      'Administrator or Controller (a role made for edge controllers: credential downloads and access decisions only). What the controller needs to decide alone with the same engine: its readers (normal mode, `SetMode` and its `Until`, `Lockdown`, zone, strike times), schedules, holidays, and one entry per card that can pass one of them with its grants; `Cards` is paged by card holder. ' +
      'Every page of one download carries the same `Version` (also the `ETag`). `If-None-Match: <Version>` answers 304 when nothing it depends on changed (one read of the version counters). `?since=<Version>` answers only the cards changed since (`Incremental: true`, removed ones as `{ EncodedCardNumber, FacilityCode, Removed: true }`), or the whole download (`Incremental: false`) after a change of a level, reader, controller or door; a version whose changes are no longer kept (7 days) or with more than 1000 changes since is 410 `VersionExpired`. ' +
      'Changes are counted from the table\'s stream: a write shows in the version after the stream delivered it (locally at once; in AWS within about a second).',
    query: { ...paging, since: z.string().optional().meta({ description: 'A Version this controller holds: answer the changes since it.' }) },
    success: {
      200: { description: 'One page of the download, or the changes since `since`.', schema: credentialDownloadSchema, example: { $type: ns('CredentialDownloadInfo'), Version: '3.17', Incremental: false, TimeZone: 'America/Toronto', Readers: [{ Key: K, CommonName: 'Front reader', AccessMethod: 0, Door: null }], Schedules: [{ Key: K2, CommonName: 'Weekdays 9-17', IsAlways: false, ScheduleDurations: [{ DayMask: 62, StartingAt: '09:00:00', Duration: '08:00:00' }] }], Holidays: [], Lockdown: null, PinSalt: '5f2c…', Cards: [{ EncodedCardNumber: '4242', FacilityCode: null, PersonKey: K2, PersonName: 'Jane Doe', ActiveOn: null, ExpiresOn: null, IsDisabled: false, LockdownExempt: false, ExtendedAccess: false, OriginalUseCount: 0, CurrentUseCount: 0, PinHash: null, Grants: [{ ReaderKey: K, ScheduleKey: K2, AccessLevelKey: K }] }] } },
      304: { description: 'Nothing this download depends on changed since the `If-None-Match` version.' },
    },
    errors: [403, 404, 410],
  }),
  // Service
  sysinfo: () => ({
    summary: 'System information',
    description: 'Public. Version, server time and the addresses of the live event channels.',
    success: { 200: { description: 'The system information.', schema: sysInfoSchema, example: { $type: ns('SysInfo'), Version: '0.1.0.0', ServerId: 'host-1234-abcd', ServerTime: '2026-05-01T12:00:00.000Z', EventPublisherUrl: 'wss://api.example.com/events', MqttPublisherUrl: 'wss://iot.example.com/mqtt', FitScriptEngineUrl: '', LicenseServerUrl: '', UapBrokerUrl: '', PrinterConnectApiUrl: '', GalleryIsEnabled: false, ReleaseNotes: [{ $type: ns('ReleaseNote'), Name: 'Gatehouse 0.1.0', Url: 'https://example.com/CHANGELOG.md' }] } } },
  }),
  openApi: () => ({
    summary: 'This OpenAPI document',
    description: 'Public and cacheable. `servers` names the deployment that answered.',
    success: { 200: { description: 'The OpenAPI 3.1 document.', schema: z.looseObject({ openapi: z.string() }), example: { openapi: '3.1.0' } } },
    cacheable: true,
  }),
  docs: () => ({
    summary: 'API reference page',
    description: 'Public. An HTML reference rendered in the browser from this document; every asset is served by Gatehouse.',
    success: { 200: { description: 'The HTML page.', mediaType: 'text/html', schema: z.string(), example: '<!doctype html>…' } },
    cacheable: true,
  }),
  docsAsset: () => ({
    summary: 'API reference page script',
    description: 'Public. The page\'s script (Scalar API Reference, from the package files).',
    success: { 200: { description: 'JavaScript.', mediaType: 'text/javascript', schema: z.string(), example: '/* script */' } },
    errors: [404],
    cacheable: true,
  }),

  // The operator console
  consoleHome: () => ({
    summary: 'The operator console (redirect)',
    description: 'Public. `/` and `/console` send the browser (302) to `/console/`, the console\'s page.',
    success: { 302: { description: 'To `/console/`.' } },
  }),
  consolePage: () => ({
    summary: 'The operator console page',
    description:
      'Public. Every console URL (`/console/<page>[/<key>]`) answers the same page, which routes itself; never cached. Served with a ' +
      'Content-Security-Policy that allows nothing inline and nothing from another origin but the live events\' WebSocket.',
    success: { 200: { description: 'HTML.', mediaType: 'text/html', schema: z.string(), example: '<!doctype html>' } },
    errors: [404],
  }),
  consoleFile: () => ({
    summary: 'An operator console file',
    description: 'Public. The console\'s script and stylesheet under content-hashed names: cached for good (`immutable`), gzipped when the browser takes it.',
    success: { 200: { description: 'JavaScript or CSS.', mediaType: 'text/javascript', schema: z.string(), example: '/* script */' } },
    errors: [404],
    cacheable: true,
  }),

  // Token
  token: () => ({
    summary: 'Log in or refresh (password, refresh_token and authorization_code grants)',
    description:
      'Form-encoded fields (a JSON object is accepted too). A password login answers an access token (bearer, about 24 h) and a refresh ' +
      'token; a refresh answers new ones (the old refresh token stops working); `authorization_code` redeems the one-time code of a single ' +
      'sign-on (with `code_verifier`, `client_id`, `redirect_uri`) for the same answer. A user linked to an identity provider gets ' +
      '`invalid_grant` from the password grant. Errors are `{"error","error_description"}` with status 400.',
    body: {
      schema: tokenFormSchema,
      example: { grant_type: 'password', client_id: 'consoleApp', username: 'Gatehouse\\admin', password: 'your-password' },
      required: true,
      form: true,
    },
    success: { 200: { description: 'The tokens (never cached).', schema: tokenResponseSchema, headers: { 'Set-Cookie': CONSOLE_COOKIE_SET }, example: { userName: 'Gatehouse\\admin', access_token: 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln', 'as:client_id': 'consoleApp', token_type: 'bearer', refresh_token: 'r1.abc', expires_in: 86399, '.issued': 'Fri, 01 May 2026 12:00:00 GMT', '.expires': 'Sat, 02 May 2026 11:59:59 GMT', instance: I } } },
    tokenErrors: true,
  }),
  revoke: () => ({
    summary: 'Revoke a refresh token (sign out)',
    description:
      'RFC 7009: form fields `token` (a refresh token), `client_id` and the client\'s `client_secret` as at `/token`. The login the token ' +
      'belongs to ends: none of its refresh tokens works again (access tokens already issued run out on their own). The console ' +
      '(`gatehouseConsole`) sends its refresh cookie and the `X-Gatehouse-CSRF` header instead, and the answer clears the cookie. The ' +
      'answer is 200 whether or not the token was live.',
    body: {
      schema: z.object({ token: z.string().optional(), client_id: z.string().optional(), client_secret: z.string().optional(), token_type_hint: z.string().optional() }),
      example: { token: 'r1.abc', client_id: 'consoleApp' },
      required: false,
      form: true,
    },
    success: { 200: { description: 'Revoked, or nothing to revoke.', headers: { 'Set-Cookie': 'For the console (`gatehouseConsole`) only: `gatehouse_console_refresh=; Path=/token; Max-Age=0; HttpOnly; SameSite=Strict` (`Secure` over HTTPS), which removes the cookie.' } } },
    tokenErrors: true,
  }),
  oauthAuthorize: () => ({
    summary: 'Single sign-on: start (authorization endpoint)',
    description:
      'Public, for a browser. Authorization code with PKCE (RFC 6749, RFC 7636): checks the client and its registered redirect URI ' +
      '(`gatehouseConsole` with `<base>/console/callback`, or a client of `GATEHOUSE_OAUTH_CLIENTS`), then sends the browser (302) to the ' +
      'identity provider of the instance (the one `provider` names, else the one whose `EmailDomains` hold the `login_hint`\'s domain, else ' +
      'the only enabled one) with ' +
      'Gatehouse\'s own state, nonce and PKCE. A refusal after the client is known comes back to its redirect URI as ' +
      '`error=access_denied` (or `invalid_request`, `unsupported_response_type`) with the client\'s `state`.',
    query: {
      response_type: z.literal('code'),
      client_id: z.string().meta({ examples: ['gatehouseConsole'] }),
      redirect_uri: z.string().meta({ description: 'Exactly one of the client\'s registered redirect URIs.' }),
      code_challenge: z.string().meta({ description: 'BASE64URL(SHA-256(code_verifier)), 43 to 128 characters.' }),
      code_challenge_method: z.literal('S256'),
      state: z.string().optional().meta({ description: 'Handed back to the client unchanged.' }),
      instance: z.string().meta({ description: 'The instance name to sign in to.', examples: ['Gatehouse'] }),
      login_hint: z.string().optional().meta({ description: 'The user\'s email: its domain chooses the provider, and the provider receives it.' }),
      provider: z.string().optional().meta({ description: 'The Key of the enabled provider to use (from `GET /oauth/providers`): it wins over the hint\'s domain.' }),
    },
    success: { 302: { description: 'To the identity provider; or back to the client\'s redirect URI with `error`, `error_description` and `state`.' } },
    htmlError: 'An unknown client or a redirect URI it did not register: a page, never a redirect.',
    // Each start writes a pending login: the client address's login bucket bounds them.
    loginThrottle: true,
  }),
  oauthCallback: () => ({
    summary: 'Single sign-on: the identity provider\'s answer (callback)',
    description:
      'Public, for a browser coming back from the provider (register `<base>/oauth/callback` there). Gatehouse redeems the provider\'s code, ' +
      'validates the ID token (issuer, audience, expiry, nonce, signature against the provider\'s JWKS), requires `email_verified` unless the ' +
      'provider\'s `RequireEmailVerified` is false, finds the user (by the provider\'s `sub`, else by `Email` among the provider\'s users) or ' +
      'creates one (`JitProvisioning`, a domain of `EmailDomains`), applies `RoleMapping`, and sends the browser back to the client with a ' +
      'one-time `code` (60 s, single use) and its `state`, or with `error=access_denied`.',
    query: {
      state: z.string().meta({ description: 'Gatehouse\'s own state (not the client\'s).' }),
      code: z.string().optional(),
      error: z.string().optional(),
      iss: z.string().optional(),
    },
    success: { 302: { description: 'To the client\'s redirect URI with `code` and `state`, or with `error=access_denied`.' } },
    htmlError: 'The sign-in is unknown, expired (10 minutes) or already completed: there is no client to send the browser back to.',
  }),
  oauthProviders: () => ({
    summary: 'Single sign-on: the providers a sign-in page offers',
    description:
      'Public, for a sign-in page before anyone is signed in ("Sign in with <CommonName>"): the enabled identity providers of the instance ' +
      'named `instance`, their `CommonName` and `Key` only (pass the Key as `provider` to `/oauth/authorize`). An unknown or disabled ' +
      'instance answers an empty list, as one without providers does: the call does not tell which instance names exist. Never cached.',
    query: { instance: z.string().meta({ description: 'The instance name.', examples: ['Gatehouse'] }) },
    success: {
      200: {
        description: 'The enabled providers, by name (an empty list when there are none or the instance is unknown).',
        schema: z
          .array(z.strictObject({ CommonName: z.string(), Key: z.string() }))
          .meta({ id: 'PublicIdentityProviders', description: 'What anyone may learn of an instance\'s single sign-on.' }),
        example: [{ CommonName: 'Contoso Entra ID', Key: K }],
      },
    },
  }),
  oauthMetadata: () => ({
    summary: 'Single sign-on: authorization server metadata (RFC 8414)',
    description: 'Public. The endpoints, grants and PKCE method of Gatehouse as the authorization server of its clients.',
    success: {
      200: {
        description: 'The metadata.',
        schema: authorizationServerMetadataSchema,
        example: {
          issuer: 'https://api.example.com',
          authorization_endpoint: 'https://api.example.com/oauth/authorize',
          token_endpoint: 'https://api.example.com/token',
          jwks_uri: 'https://api.example.com/.well-known/jwks.json',
          response_types_supported: ['code'],
          grant_types_supported: ['authorization_code', 'refresh_token', 'password'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
        },
      },
    },
  }),
  jwks: () => ({
    summary: 'Token verification keys (JWKS)',
    success: { 200: { description: 'The public keys.', schema: jwksSchema, example: { keys: [{ kty: 'EC', crv: 'P-256', kid: 'k1', x: 'eA', y: 'eQ', alg: 'ES256', use: 'sig' }] } } },
  }),

  // Instances and folders
  currentInstance: () => ({
    summary: 'The caller\'s instance',
    success: { 200: { description: 'The instance.', schema: responseSchema('InstanceInfo'), example: exampleResponse('InstanceInfo', 'instances') } },
    errors: [404],
  }),
  getFolder: (c) => ({ ...get(folderContext(c.route)), summary: 'Read a folder or an instance', success: { 200: folderResponse('The folder or instance.') } }),
  replaceFolder: (c) => ({
    ...replace(folderContext(c.route)),
    summary: 'Replace a folder or an instance',
    body: folderBody(),
    success: { 200: folderResponse('The updated folder or instance.'), 204: { description: 'Nothing changed.' } },
  }),
  removeFolder: (c) => ({ ...remove(folderContext(c.route)), summary: 'Delete an empty folder or instance' }),
  getFolderLink: (c) => ({
    ...getLink(folderContext(c.route)),
    summary: 'Read a link of a folder or an instance',
    description: `${linkDescription}. A folder's collections have their own paths (\`/api/f/{folderKey}/people\`, ...).`,
  }),
  postFolderLink: (c) => ({ ...postLink(folderContext(c.route)), summary: 'Add a note to a folder, or take ownership' }),
  deleteFolderLinkItem: (c) => ({ ...deleteLinkItem(folderContext(c.route)), summary: 'Remove a note of a folder' }),

  // Collections
  list,
  create,
  get,
  replace,
  remove,
  getLink,
  postLink,
  deleteLinkItem,
  putLink,
  connect,
  disconnect,

  // Peripherals
  getPeripheral: () => ({
    summary: 'Read a reader, input or output by key',
    success: { 200: { description: 'The peripheral.', schema: responseSchema('BaseInfo', true), example: exampleResponse('VendorReaderInfo', 'readers') } },
    errors: [404],
  }),
  getPeripheralLink: (c) => ({ ...getLink({ route: c.route, collection: undefined }), summary: 'Read a link of a peripheral' }),

  // Event types of an app
  addEventType: () => ({
    summary: 'Add an event type to an app',
    description: 'Monikers (Namespace, Nickname) identify the event type within its app. The event types of the built-in apps (`MercuryCommands`, `MercuryService`) are fixed: changing one is 405.',
    body: eventTypeBody(true),
    success: { 201: eventTypeResponse('The event type.') },
    errors: [404, 405, 409],
  }),
  listEventTypes: () => ({
    summary: 'List an app\'s event types, or find one by moniker',
    description: 'With `namespace` and `nickname`: the one event type with that moniker (404 if none). Otherwise a page of them.',
    query: { ...paging, namespace: z.string().optional(), nickname: z.string().optional() },
    success: {
      200: {
        description: 'A page of event types, or the one matching the moniker.',
        schema: z.union([z.array(responseSchema('EventTypeInfo')), responseSchema('EventTypeInfo')]),
        example: [eventTypeResponse('').example],
      },
    },
    errors: [404],
  }),
  getEventType: () => ({
    summary: 'Read an event type, or update it (GET with a body)',
    description: `Without a body: the event type. With a full EventTypeInfo body: updates it (204). ${GET_BODY_NOTE} PUT.`,
    body: { ...eventTypeBody(false), description: 'Optional: a full EventTypeInfo updates the event type.' },
    success: { 200: eventTypeResponse('The event type.'), 204: { description: 'Updated (a GET with a body).' } },
    errors: [404, 405, 409],
  }),
  updateEventType: () => ({
    summary: 'Update an event type',
    description: 'The PUT twin of the spec\'s GET-with-body update. The event types of the built-in apps (`MercuryCommands`, `MercuryService`) are fixed: changing one is 405.',
    body: eventTypeBody(true),
    success: { 204: { description: 'Updated.' } },
    errors: [404, 405, 409],
  }),
  removeEventType: () => ({ summary: 'Delete an event type', description: 'The event types of the built-in apps (`MercuryCommands`, `MercuryService`) are fixed: changing one is 405.', success: { 204: { description: 'Deleted.' } }, errors: [404, 405] }),
  getEventTypeLink: (c) => ({ ...getLink(c), summary: 'Read a link of an event type' }),

  // Alarm definitions
  addAlarmEventType: () => ({
    summary: 'Reference an event type from an alarm definition',
    description:
      'The event types of the built-in apps (fixed keys, in every root instance) may be referenced from an alarm definition of any instance: ' +
      'their events then require acknowledgement in that instance and the instances below it only.',
    body: { schema: hrefStringSchema, example: `/api/f/${I}/apps/${K2}/eventtypes/${K}`, required: true },
    success: { 204: { description: 'Referenced.' } },
    errors: [404, 409],
  }),
  listAlarmEventTypes: () => ({
    summary: 'List the event types an alarm definition references',
    query: paging,
    success: { 200: { description: 'The event types.', schema: z.array(responseSchema('EventTypeInfo')), example: [eventTypeResponse('').example] } },
    errors: [404],
  }),
  removeAlarmEventType: () => ({ summary: 'Stop referencing an event type', success: { 204: { description: 'Removed.' } }, errors: [404] }),

  // Events
  publish: () => ({
    summary: 'Publish an event',
    description:
      'Stores the event (201) and delivers it live; a NonLogging event type is delivered live only (202). ' +
      'Related objects must be within the caller\'s scope (else 403, nothing written); a key that names no object is kept as sent. ' +
      '`OccurredOn` may be at most one day ahead of the server\'s time, and an event too large for one stored item is refused (400 ValidationFailed). ' +
      'Every installation has the built-in apps `MercuryCommands` and `MercuryService` in its root instance (an instance\'s own app of the same Nickname takes precedence): ' +
      'the command `MercuryServiceCommands` / `mercury:command-simulateCardRead` (RelatedObjects with one `Reader`; EventDataBsonBase64 = BSON `{ EncodedCardNumber, FacilityCode?, PinCode?, Reason? }`) ' +
      'is stored without its PinCode and recorded as a card read at its OccurredOn, publishing "Access Granted" or "Access Denied"; no Reader is 400 InvalidCommand, no card number 400 InvalidEventData.',
    body: {
      schema: eventMessagePostingSchema,
      example: { $type: ns('EventMessagePosting'), OccurredOn: '2026-05-01T12:00:00Z', AppKey: 'acme', EventTypeMoniker: { Namespace: 'acme', Nickname: 'door-forced' }, RelatedObjects: [{ Relation: 'Door', LinkedObjectKey: K, CommonName: 'Front door' }], EventDataBsonBase64: null },
      required: true,
    },
    success: { 201: { description: 'The stored event.', schema: eventMessageDataSchema, example: exampleEvent }, 202: { description: 'Delivered live, not stored (NonLogging).', schema: eventMessageDataSchema, example: exampleEvent } },
    errors: [404],
  }),
  listEvents: () => ({
    summary: 'List events',
    description: 'Newest OccurredOn first. Ranges include their start and exclude their end; the time-of-day window is UTC and wraps over midnight when start > end.',
    query: {
      ...paging,
      includeSubFolders: z.boolean().optional().meta({ description: 'Events of the folders below too.' }),
      includeSharedInstances: z.boolean().optional().meta({ description: 'Accepted for compatibility (instances are not shared).' }),
      spanScope: z.boolean().optional().meta({ description: 'Every folder of the caller\'s scope.' }),
      requiresAck: z.boolean().optional().meta({ description: 'Only events still waiting for an acknowledgement.' }),
      startingOn: z.string().optional().meta({ format: 'date-time', description: 'ISO 8601; UTC without a zone.' }),
      endingOn: z.string().optional().meta({ format: 'date-time' }),
      timeWindowStarting: z.string().regex(/^(?:\d+\.)?\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/).optional().meta({ description: 'Time of day, `hh:mm[:ss]`, UTC.', examples: ['08:00:00'] }),
      timeWindowEnding: z.string().regex(/^(?:\d+\.)?\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/).optional().meta({ examples: ['18:00:00'] }),
      priorityThreshold: z.number().int().min(0).max(2 ** 31 - 1).optional().meta({ description: 'Only events of at least this priority.' }),
      forKeys: z.array(z.string()).optional().meta({ description: 'Events related to any of these objects (repeated or comma-separated).' }),
      forAllKeys: z.array(z.string()).optional().meta({ description: 'Events related to all of these objects.' }),
      sinceKey: z.string().optional().meta({ description: 'Only events after this event key.' }),
      query: z.string().optional().meta({ description: 'A document-database style query on the event (`{"Priority":{"$gte":5}}`).' }),
      forPeopleInAccessLevels: z.array(z.string()).optional().meta({ description: 'Events of the people connected to these access levels.' }),
    },
    success: { 200: { description: 'A page of events.', schema: z.array(eventMessageDataSchema), example: [exampleEvent] } },
    errors: [404],
  }),
  getEvent: () => ({ summary: 'Read an event', success: { 200: { description: 'The event.', schema: eventMessageDataSchema, example: exampleEvent } }, errors: [404] }),
  getEventLink: () => ({
    summary: 'Read a link of an event',
    description: '`connections`: the related objects; other standard links as for objects.',
    success: { 200: { description: 'The link\'s content.', schema: anyJsonSchema, example: [] } },
    errors: [404, 405],
  }),
  acknowledge: () => ({
    summary: 'Acknowledge an event',
    body: { schema: acknowledgementSchema, example: { Comment: 'Guard sent.' }, required: false },
    success: { 201: { description: 'The event with its acknowledgements.', schema: eventMessageDataSchema, example: exampleEvent } },
    errors: [404, 409],
  }),
  lastEvent: (c) => ({
    summary: c.route.method === 'GET' ? 'Last event per object (GET with a body)' : 'Last event per object',
    description: c.route.method === 'GET' ? `${GET_BODY_NOTE} POST.` : 'The POST twin of the spec\'s GET-with-body call.',
    query: { since: z.string().optional().meta({ format: 'date-time', description: 'Only events since this instant.' }) },
    body: { schema: keyListSchema, example: [K, K2], required: true, description: 'The object keys.' },
    success: { 200: { description: 'The most recent event within the caller\'s scope of each object that has one.', schema: z.array(eventSummarySchema), example: [{ $type: ns('EventMessageSummaryItem'), ObjectKey: K, EventKey: E, EventTypeKey: K2, AppKey: K2, OccurredOn: '2026-05-01T12:00:00Z', PublishedOn: '2026-05-01T12:00:01Z', Priority: 10, MessageShort: 'Door forced' }] } },
    errors: [404],
  }),

  // People: cards, lookup by card; connections of one relation; scheduled access levels
  putLinkItem: () => ({
    summary: 'Replace a card of a person',
    description: '`cards/<card key>`: replaces that card, keeping its Key; one write of the person with its card claims.',
    body: { schema: requestSchema('CardAssignmentInfo'), example: { EncodedCardNumber: 1234, FacilityCode: 21 }, required: true, description: 'The card.' },
    success: { 200: { description: 'The stored card.', schema: cardResponseSchema, example: exampleCard }, 204: { description: 'Unchanged.' } },
    errors: [403, 404, 405, 409],
  }),
  revokeSessions: () => ({
    summary: 'Sign a user out everywhere',
    description:
      'Revokes every session of the user: its refresh tokens are refused at once (RefreshTokenTicketNotValid), its access tokens ' +
      'within the status check\'s 30 seconds. A new password and disabling the user do the same. The user\'s ConcurrencyVersion ' +
      'goes up. Administrators of the user\'s instance or an ancestor.',
    success: { 204: { description: 'Revoked.' } },
    errors: [403, 404],
  }),
  personByCard: () => ({
    summary: 'Find the person holding an active card',
    description: 'Through the card index of the folder\'s instance. Without facilityCode, any facility code matches; several active holders answer 409 AmbiguousCard.',
    query: {
      cardNumber: z.string().meta({ description: 'The encoded card number, digit for digit (64-bit numbers exact).', examples: ['9223372036854775807'] }),
      facilityCode: z.string().optional().meta({ description: 'The facility code.' }),
    },
    success: { 200: { description: 'The person.', schema: responseSchema('PersonInfo'), example: exampleResponse('PersonInfo', 'people') } },
    errors: [403, 404, 409],
  }),
  listConnections: (c) => ({
    summary: `List the objects connected to ${one(c)} by one relation`,
    description: 'The connected objects the caller may see. ScheduledAccessLevel links carry their window in the source\'s ObjectLinks (MetaDataBson).',
    success: { 200: { description: 'The connected objects.', schema: z.array(responseSchema('BaseInfo', true)), example: [exampleResponse('AccessLevelInfo', 'accesslevels')] } },
    errors: [403, 404],
  }),

  // Aggregation over events
  aggregateEvents: (c) => ({
    summary: c.route.path.endsWith('/Events') ? 'Aggregate the events of a folder' : 'Aggregate the events of a folder (lower-case path)',
    description:
      'An allow-listed aggregation pipeline over the folder\'s event timelines. Each document is the EventMessageData plus `EventData` (the decoded BSON). ' +
      'The leading `$match`\'s `OccurredOn` range bounds the read (default: the last 30 days). Code-running operators and stages that write or join answer 400 InvalidQuery. ' +
      'A pipeline that crosses a limit on its work (the size of an array, text or document it builds, the documents a stage emits, its memory, or queryTimeout while it runs) answers 400 QueryTooExpensive naming the limit.',
    query: {
      includeSubFolders: z.boolean().optional().meta({ description: 'Include the sub-folders\' events.' }),
      spanScope: z.boolean().optional().meta({ description: 'Include the events of the instances below.' }),
      queryTimeout: z.number().int().optional().meta({ description: 'Seconds (default and maximum 25); reading past it: 503 QueryTimeout; running the pipeline past it: 400 QueryTooExpensive.' }),
    },
    body: {
      schema: aggregationPipelineSchema,
      example: ['{"$match":{"OccurredOn":{"$gte":{"$date":"2026-11-01T00:00:00Z"}},"EventData.Reader.CommonName":{"$regex":"^Front"}}}', '{"$group":{"_id":"$EventData.Reader.CommonName","count":{"$sum":1}}}'],
      required: true,
    },
    success: { 200: { description: 'The result documents.', schema: aggregateResultSchema, example: [{ _id: 'Front door', count: 2 }] } },
    errors: [403, 404],
  }),

  // Webhooks (a Gatehouse extension)
  listWebhooks: () => ({
    summary: 'List the webhook subscriptions of an instance',
    query: paging,
    success: { 200: { description: 'A page of subscriptions (never their secrets).', schema: z.array(webhookResponseSchema), example: [exampleWebhook] } },
    errors: [403, 404],
  }),
  createWebhook: () => ({
    summary: 'Create a webhook subscription',
    description: 'The answer is the only one that shows the `Secret`. Administrators and Operators of the instance.',
    body: { schema: webhookRequestSchema, example: exampleWebhookRequest, required: true },
    success: { 201: { description: 'The subscription with its Secret.', schema: webhookResponseSchema, example: { ...exampleWebhook, Secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } } },
    errors: [403, 404, 409],
  }),
  getWebhook: () => ({
    summary: 'Read a webhook subscription',
    success: { 200: { description: 'The subscription (without its secret).', schema: webhookResponseSchema, example: exampleWebhook } },
    errors: [403, 404],
  }),
  replaceWebhook: () => ({
    summary: 'Replace a webhook subscription',
    body: { schema: webhookRequestSchema, example: exampleWebhookRequest, required: true },
    success: { 200: { description: 'The subscription.', schema: webhookResponseSchema, example: exampleWebhook } },
    errors: [403, 404, 409],
  }),
  removeWebhook: () => ({ summary: 'Delete a webhook subscription', success: { 204: { description: 'Deleted.' } }, errors: [403, 404] }),
  rotateSecret: () => ({
    summary: 'Rotate the secret of a webhook subscription',
    description: 'For 24 hours deliveries carry signatures of both secrets.',
    success: { 200: { description: 'The subscription with its new Secret.', schema: webhookResponseSchema, example: { ...exampleWebhook, Secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } } },
    errors: [403, 404],
  }),
  testWebhook: () => ({
    summary: 'Send a test delivery now',
    description: 'A delivery of type `webhook.test` (filters do not apply); answers its outcome: the receiver\'s status code, or a generic `Error` (such as `Could not connect to the receiver.`) when it did not answer.',
    success: { 200: { description: 'The outcome.', schema: outcomeSchema, example: { StatusCode: 204, DurationMs: 42 } } },
    errors: [403, 404],
  }),
  listDeliveries: () => ({
    summary: 'List the delivery attempts of a webhook subscription',
    query: paging,
    success: { 200: { description: 'Attempts, newest first.', schema: z.array(deliverySchema), example: [{ Key: K2, EventKey: E, Attempt: 1, StatusCode: 200, DurationMs: 40, AttemptedOn: '2026-05-01T12:00:02Z', NextAttemptOn: null }] } },
    errors: [403, 404],
  }),
  redeliver: () => ({
    summary: 'Send one delivery again',
    success: { 202: { description: 'Queued.', schema: z.looseObject({ EventKey: z.string(), WebhookId: z.string() }), example: { EventKey: E, WebhookId: `msg_${E}_${K}` } } },
    errors: [403, 404],
  }),
  replay: () => ({
    summary: 'Re-send the events of a time window',
    description: 'The subscription\'s matching events whose OccurredOn lies in the window, at most 10 000 a call (400 beyond); one replay per subscription a minute (429 `TooManyRequests` with `Retry-After` beyond).',
    body: { schema: replayWindowSchema, example: { Since: '2026-05-01T00:00:00Z', Until: '2026-05-02T00:00:00Z' }, required: true },
    success: { 202: { description: 'Queued.', schema: z.looseObject({ Count: z.number().int(), Since: z.string(), Until: z.string() }), example: { Count: 12, Since: '2026-05-01T00:00:00Z', Until: '2026-05-02T00:00:00Z' } } },
    errors: [403, 404],
  }),
  getWebhookLink: () => ({
    summary: 'Read a link of a webhook subscription',
    description: 'The call links (rotatesecret, test, replay) answer GET with 405 and `Allow: POST`.',
    success: { 200: { description: 'The link\'s content.', schema: anyJsonSchema, example: [] } },
    errors: [403, 404, 405],
  }),

  // Tenant usage (a Gatehouse extension)
  usage: () => ({
    summary: 'Read the metered usage of an instance and its sub-instances',
    description:
      'Administrators of the instance or of an instance above it. Counts are written by each execution environment at most once a minute: ' +
      'the last minute may be missing, an environment that stops unflushed loses at most its last minute, and a retried write may count twice. ' +
      'At most 366 days a call, within the last 400 days; at most 100 instances (400 QueryTooBroad beyond).',
    query: {
      from: z.string().optional().meta({ format: 'date', description: 'First UTC day (`yyyy-mm-dd`, or a date-time read as its UTC day); default: 29 days before `to`.' }),
      to: z.string().optional().meta({ format: 'date', description: 'Last UTC day, included; default: today.' }),
    },
    success: { 200: { description: 'The usage per day.', schema: usageSchema, example: exampleUsage } },
    errors: [403, 404],
  }),

  // Search
  search: () => ({
    summary: 'Search objects',
    description: 'The body is one JSON string holding a document-database style query with a type discriminator `_t`.',
    query: { ...paging, includeChildInstances: z.boolean().optional().meta({ description: 'Search the child instances too.' }) },
    body: { schema: z.string().meta({ description: 'A query, as a JSON string.' }), example: '{"_t":"Person","Surname":"Lovelace"}', required: true },
    success: { 200: { description: 'A page of matching objects.', schema: z.array(responseSchema('BaseInfo', true)), example: [exampleResponse('PersonInfo', 'people')] } },
    errors: [404],
  }),
};

/** Every operation's entry: the table above and the SCIM family's (openapi/scim.ts). */
const DESCRIBED: Readonly<Record<string, Describe>> = { ...OPERATIONS, ...SCIM_OPERATIONS };

/** An operation the table has no entry for: described from its route alone. */
function genericOperation(c: OperationContext): OperationDoc {
  const takesBody = c.route.method === 'POST' || c.route.method === 'PUT';
  return {
    summary: `${c.route.operation}${c.collection ? ` (${c.collection.name})` : ''}`,
    description: 'Not described in detail yet.',
    ...(takesBody ? { body: { schema: anyJsonSchema, example: {}, required: false } } : {}),
    success: { 200: { description: 'Success.', schema: anyJsonSchema, example: {} } },
    errors: [404, 409],
  };
}

/** Whether a row's operation has its own entry. */
export const isDescribed = (route: Route): boolean => Object.hasOwn(DESCRIBED, route.operation);

export function describeOperation(c: OperationContext): OperationDoc {
  return isDescribed(c.route) ? DESCRIBED[c.route.operation]!(c) : genericOperation(c);
}

export { errorExample };
