/**
 * The one route table. The CDK stack creates the HTTP API routes and one function per family
 * from it, each function's router dispatches from it, and the local server dispatches from it.
 * No route is wired anywhere else. A function's bundle keeps its own family's rows (see
 * `__GATEHOUSE_FAMILY__` below).
 *
 * Paths use the API Gateway HTTP API syntax (`{param}`); `$default` catches everything no other
 * route matches, so an unknown path answers our JSON 404 in AWS as it does locally.
 */
import { COLLECTIONS, type CollectionDef, type Family } from './model/collections.ts';

/**
 * The family a function's bundle is built for, defined by infra/bundling.ts: each group of rows
 * below is kept when it is that family's, and the minifier drops the others, so a function carries
 * and compiles its own routes only (API Gateway has already chosen among all of them). Undefined
 * outside a bundle (the CDK app, the local runtime, tests): every row.
 */
declare const __GATEHOUSE_FAMILY__: string | undefined;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ANY';

export interface Route {
  readonly method: Method;
  readonly path: string;
  readonly family: Family;
  readonly operation: string;
  /** `false` for the public calls (sysinfo, token, JWKS, single sign-on, the OpenAPI document and its page); every other route needs a bearer token. */
  readonly auth: boolean;
  /**
   * The SCIM calls: the bearer token is a SCIM token of the path's instance, which the operation
   * checks (shared/scim/call.ts); `auth` is false, as the pipeline checks access tokens only.
   */
  readonly scimToken?: boolean;
  /**
   * The API Gateway route that serves this row when several rows share one (default: the row's
   * own method and path). Each API Gateway route is a CloudFormation resource, and a stack holds
   * at most 500: the SCIM rows share one greedy route, the SCIM token rows the folder link routes
   * of their family. The family's router still tells the rows apart (by method and path), and
   * the OpenAPI document still describes each.
   */
  readonly gateway?: string;
  /** The collection a generic collection operation works on. */
  readonly collection?: string;
  /**
   * The body is a form (`POST /token`): read as form fields whatever the content type says,
   * because field clients send it unlabelled or labelled as JSON (a `{...}` body is still JSON).
   */
  readonly form?: boolean;
  /**
   * The call only reads, though it is not a GET without a body (search, lastevent with its keys
   * in the body): the pipeline runs it while the caller's token and status are still being
   * checked, as it runs such a GET, and the answer waits for both. Not aggregation: it may read
   * up to `GATEHOUSE_AGGREGATE_MAX_EVENTS` events, which a forged token on a new environment
   * (whose verification is deferred) must not get to start.
   */
  readonly reads?: boolean;
  /**
   * The call writes, but only after reads it can start from the request alone (a publish: the
   * sink, the app, the moniker's claim and the related objects, by key). The pipeline runs it
   * beside the caller's token and status checks as it runs a read-only call, so that on a new
   * environment those reads join the checks' request; the operation waits for the caller's
   * verdict (`verdictIn`) before any later read and before it writes.
   */
  readonly readsFirst?: boolean;
}

const F = '/api/f/{folderKey}';
/** The SCIM 2.0 base of an instance (RFC 7644): its calls carry a SCIM token, which the operations check. */
const S = '/scim/v2/{instanceKey}';
/** The SCIM rows: a SCIM token, one greedy API Gateway route for all of them. */
/** The console's rows: public, served by `$default`. */
const CONSOLE = { auth: false, gateway: '$default' } as const;
const SCIM_TOKEN = { auth: false, scimToken: true, gateway: 'ANY /scim/v2/{proxy+}' } as const;

function route(
  method: Method,
  path: string,
  family: Family,
  operation: string,
  extra: Partial<Pick<Route, 'auth' | 'scimToken' | 'gateway' | 'collection' | 'form' | 'reads' | 'readsFirst'>> = {},
): Route {
  return Object.freeze({
    method,
    path,
    family,
    operation,
    auth: extra.auth ?? true,
    ...(extra.scimToken ? { scimToken: true } : {}),
    ...(extra.gateway ? { gateway: extra.gateway } : {}),
    ...(extra.collection ? { collection: extra.collection } : {}),
    ...(extra.form ? { form: true } : {}),
    ...(extra.reads ? { reads: true } : {}),
    ...(extra.readsFirst ? { readsFirst: true } : {}),
  });
}

/** The generic routes of one object collection (list, create, read, replace, delete, links). */
function collectionRoutes(c: CollectionDef): Route[] {
  const base = `${F}/${c.name}`;
  const one = `${base}/{key}`;
  const x = { collection: c.name };
  const rows = [
    route('GET', base, c.family, 'list', x),
    route('POST', base, c.family, 'create', x),
    route('GET', one, c.family, 'get', x),
    route('PUT', one, c.family, 'replace', x),
    route('DELETE', one, c.family, 'remove', x),
    // meta, monikers, commonname, images, notes, connections, references, takeownership (405)
    route('GET', `${one}/{link}`, c.family, 'getLink', x),
    // notes, takeownership
    route('POST', `${one}/{link}`, c.family, 'postLink', x),
    // notes/<note_key>
    route('DELETE', `${one}/{link}/{linkKey}`, c.family, 'deleteLinkItem', x),
  ];
  if (c.putLinks?.length) rows.push(route('PUT', `${one}/{link}`, c.family, 'putLink', x));
  // people: cards/<card key>
  if (c.putLinkItems?.length) rows.push(route('PUT', `${one}/{link}/{linkKey}`, c.family, 'putLinkItem', x));
  if (c.relations) {
    rows.push(
      route('POST', `${one}/connections/{relation}`, c.family, 'connect', x),
      // The same call with PUT, as field clients send it; the literal `connections` segment wins
      // over any `{link}/{linkKey}` row, here and in API Gateway.
      route('PUT', `${one}/connections/{relation}`, c.family, 'connect', x),
      route('GET', `${one}/connections/{relation}`, c.family, 'listConnections', x),
      route('DELETE', `${one}/connections/{relation}/{relatedKey}`, c.family, 'disconnect', x),
    );
  }
  return rows;
}

export const ROUTES: readonly Route[] = Object.freeze([
  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'service'
    ? [
        // Service and session
        route('GET', '/api/sysinfo', 'service', 'sysinfo', { auth: false }),
        // The OpenAPI document (docs/openapi.json, built from this table) and the reference page over it
        route('GET', '/api/openapi.json', 'service', 'openApi', { auth: false }),
        route('GET', '/docs', 'service', 'docs', { auth: false }),
        route('GET', '/docs/api-reference.js', 'service', 'docsAsset', { auth: false }),
        // The operator console: its page at every console URL, its hashed files. They take no API
        // Gateway route of their own: `$default` (this family) serves them.
        route('GET', '/', 'service', 'consoleHome', CONSOLE),
        // `/console/` too: the router ignores a trailing slash, the operation tells them apart.
        route('GET', '/console', 'service', 'consoleHome', CONSOLE),
        route('GET', '/console/{view}', 'service', 'consolePage', CONSOLE),
        route('GET', '/console/{view}/{key}', 'service', 'consolePage', CONSOLE),
        route('GET', '/console/assets/{file}', 'service', 'consoleFile', CONSOLE),
        route('ANY', '$default', 'service', 'notFound', { auth: false }),
      ]
    : []),
  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'token'
    ? [
        route('POST', '/token', 'token', 'token', { auth: false, form: true }),
        route('POST', '/token/revoke', 'token', 'revoke', { auth: false, form: true }),
        route('GET', '/.well-known/jwks.json', 'token', 'jwks', { auth: false }),
        // Single sign-on (authorization code with PKCE): Gatehouse's authorization endpoint, the
        // identity providers' callback, the providers a sign-in page offers and the authorization
        // server's metadata (RFC 8414).
        route('GET', '/oauth/authorize', 'token', 'oauthAuthorize', { auth: false }),
        route('GET', '/oauth/callback', 'token', 'oauthCallback', { auth: false }),
        // A sign-in page's "Sign in with ..." buttons: an instance's enabled providers, by name.
        route('GET', '/oauth/providers', 'token', 'oauthProviders', { auth: false }),
        route('GET', '/.well-known/oauth-authorization-server', 'token', 'oauthMetadata', { auth: false }),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'folders'
    ? [
        // Instances and folders: the caller's instance, a folder's own Href and its standard links
        route('GET', '/api', 'folders', 'currentInstance'),
        route('GET', F, 'folders', 'getFolder'),
        route('PUT', F, 'folders', 'replaceFolder'),
        route('DELETE', F, 'folders', 'removeFolder'),
        route('GET', `${F}/{link}`, 'folders', 'getFolderLink'),
        route('POST', `${F}/{link}`, 'folders', 'postFolderLink'),
        route('DELETE', `${F}/{link}/{linkKey}`, 'folders', 'deleteFolderLinkItem'),
      ]
    : []),

  ...COLLECTIONS.filter((c) => typeof __GATEHOUSE_FAMILY__ !== 'string' || c.family === __GATEHOUSE_FAMILY__).flatMap(collectionRoutes),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'folders'
    ? [
        // A user's "sign out everywhere" (a literal segment: it wins over `users/{key}/{link}`)
        route('POST', `${F}/users/{key}/revokesessions`, 'folders', 'revokeSessions', { collection: 'users' }),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'people'
    ? [
        // A person by an active card (a literal segment: it wins over `people/{key}`)
        route('GET', `${F}/people/bycard`, 'people', 'personByCard'),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'access'
    ? [
        // Access decisions and troubleshooting (literal segments: they win over `{key}/{link}`)
        route('POST', `${F}/accessdecisions`, 'access', 'accessDecision'),
        route('GET', `${F}/readers/{key}/whocanpass`, 'access', 'whoCanPass'),
        route('GET', `${F}/people/{key}/accessiblereaders`, 'access', 'accessibleReaders'),
        // Doors: lockdown of a folder and below, a reader's mode, a door's unlock and status
        route('POST', `${F}/lockdown`, 'access', 'startLockdown', { gateway: `ANY ${F}/lockdown` }),
        route('GET', `${F}/lockdown`, 'access', 'getLockdown', { gateway: `ANY ${F}/lockdown` }),
        route('DELETE', `${F}/lockdown`, 'access', 'endLockdown', { gateway: `ANY ${F}/lockdown` }),
        route('PUT', `${F}/readers/{key}/mode`, 'access', 'setReaderMode'),
        route('POST', `${F}/doors/{key}/unlock`, 'access', 'unlockDoor'),
        route('GET', `${F}/doors/{key}/status`, 'access', 'doorStatus'),
        // The credential download an edge controller decides from offline
        route('GET', `${F}/controllers/{key}/credentials`, 'access', 'credentials'),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'devices'
    ? [
        // Any reader, input or output by key
        route('GET', `${F}/peripherals/{key}`, 'devices', 'getPeripheral'),
        route('GET', `${F}/peripherals/{key}/{link}`, 'devices', 'getPeripheralLink'),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'apps'
    ? [
        // Event types of an app
        route('PUT', `${F}/apps/{key}/eventtypes`, 'apps', 'addEventType'),
        route('GET', `${F}/apps/{key}/eventtypes`, 'apps', 'listEventTypes'),
        // GET with a body is the spec's update form; without a body it reads the event type
        route('GET', `${F}/apps/{key}/eventtypes/{linkKey}`, 'apps', 'getEventType'),
        route('PUT', `${F}/apps/{key}/eventtypes/{linkKey}`, 'apps', 'updateEventType'),
        route('DELETE', `${F}/apps/{key}/eventtypes/{linkKey}`, 'apps', 'removeEventType'),
        // An event type's own standard links (meta, monikers, ...)
        route('GET', `${F}/apps/{key}/eventtypes/{linkKey}/{link}`, 'apps', 'getEventTypeLink'),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'alarms'
    ? [
        // Event types referenced by an alarm definition
        route('PUT', `${F}/alarmdefinitions/{key}/collections/eventtypes`, 'alarms', 'addAlarmEventType'),
        route('GET', `${F}/alarmdefinitions/{key}/collections/eventtypes`, 'alarms', 'listAlarmEventTypes'),
        route('DELETE', `${F}/alarmdefinitions/{key}/collections/eventtypes/{linkKey}`, 'alarms', 'removeAlarmEventType'),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'events'
    ? [
        // Events
        route('POST', `${F}/eventmessagesink`, 'events', 'publish', { readsFirst: true }),
        route('GET', `${F}/events`, 'events', 'listEvents'),
        route('GET', `${F}/events/{key}`, 'events', 'getEvent'),
        route('GET', `${F}/events/{key}/{link}`, 'events', 'getEventLink'),
        route('POST', `${F}/events/{key}/acknowledgements`, 'events', 'acknowledge'),
        // The spec sends the keys as a GET body; POST is the same call for clients that cannot
        route('GET', `${F}/lastevent`, 'events', 'lastEvent', { reads: true }),
        route('POST', `${F}/lastevent`, 'events', 'lastEvent', { reads: true }),
        // Clients send `Events` capitalised; API Gateway and the router match paths case-sensitively.
        route('POST', `${F}/aggregate/Events`, 'events', 'aggregateEvents'),
        route('POST', `${F}/aggregate/events`, 'events', 'aggregateEvents'),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'search'
    ? [
        // Search
        route('POST', `${F}/search`, 'search', 'search', { reads: true }),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'webhooks'
    ? [
        // Webhooks (a Gatehouse extension): subscriptions of an instance, their deliveries, replay
        route('GET', `${F}/webhooks`, 'webhooks', 'listWebhooks'),
        route('POST', `${F}/webhooks`, 'webhooks', 'createWebhook'),
        route('GET', `${F}/webhooks/{key}`, 'webhooks', 'getWebhook'),
        route('PUT', `${F}/webhooks/{key}`, 'webhooks', 'replaceWebhook'),
        route('DELETE', `${F}/webhooks/{key}`, 'webhooks', 'removeWebhook'),
        route('POST', `${F}/webhooks/{key}/rotatesecret`, 'webhooks', 'rotateSecret'),
        route('POST', `${F}/webhooks/{key}/test`, 'webhooks', 'testWebhook'),
        route('GET', `${F}/webhooks/{key}/deliveries`, 'webhooks', 'listDeliveries'),
        route('POST', `${F}/webhooks/{key}/deliveries/{linkKey}/redeliver`, 'webhooks', 'redeliver'),
        route('POST', `${F}/webhooks/{key}/replay`, 'webhooks', 'replay'),
        // GET on the action links (rotatesecret, test, replay): 405 with Allow: POST
        route('GET', `${F}/webhooks/{key}/{link}`, 'webhooks', 'getWebhookLink'),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'folders'
    ? [
        // SCIM tokens of an instance (Administrators), then the SCIM 2.0 service provider they open
        // (identity, like the instance's users: the folders family)
        route('GET', `${F}/scimtokens`, 'folders', 'listScimTokens', { gateway: `GET ${F}/{link}` }),
        route('POST', `${F}/scimtokens`, 'folders', 'createScimToken', { gateway: `POST ${F}/{link}` }),
        route('DELETE', `${F}/scimtokens/{key}`, 'folders', 'removeScimToken', { gateway: `DELETE ${F}/{link}/{linkKey}` }),
        route('GET', `${S}/ServiceProviderConfig`, 'folders', 'scimServiceProviderConfig', SCIM_TOKEN),
        route('GET', `${S}/ResourceTypes`, 'folders', 'scimResourceTypes', SCIM_TOKEN),
        route('GET', `${S}/ResourceTypes/{id}`, 'folders', 'scimResourceType', SCIM_TOKEN),
        route('GET', `${S}/Schemas`, 'folders', 'scimSchemas', SCIM_TOKEN),
        route('GET', `${S}/Schemas/{id}`, 'folders', 'scimSchema', SCIM_TOKEN),
        route('GET', `${S}/Users`, 'folders', 'scimListUsers', SCIM_TOKEN),
        route('POST', `${S}/Users`, 'folders', 'scimCreateUser', SCIM_TOKEN),
        route('GET', `${S}/Users/{id}`, 'folders', 'scimGetUser', SCIM_TOKEN),
        route('PUT', `${S}/Users/{id}`, 'folders', 'scimReplaceUser', SCIM_TOKEN),
        route('PATCH', `${S}/Users/{id}`, 'folders', 'scimPatchUser', SCIM_TOKEN),
        route('DELETE', `${S}/Users/{id}`, 'folders', 'scimRemoveUser', SCIM_TOKEN),
        route('GET', `${S}/Groups`, 'folders', 'scimListGroups', SCIM_TOKEN),
        route('POST', `${S}/Groups`, 'folders', 'scimCreateGroup', SCIM_TOKEN),
        route('GET', `${S}/Groups/{id}`, 'folders', 'scimGetGroup', SCIM_TOKEN),
        route('PUT', `${S}/Groups/{id}`, 'folders', 'scimReplaceGroup', SCIM_TOKEN),
        route('PATCH', `${S}/Groups/{id}`, 'folders', 'scimPatchGroup', SCIM_TOKEN),
        route('DELETE', `${S}/Groups/{id}`, 'folders', 'scimRemoveGroup', SCIM_TOKEN),
      ]
    : []),

  ...(typeof __GATEHOUSE_FAMILY__ !== 'string' || __GATEHOUSE_FAMILY__ === 'folders'
    ? [
        // Tenant usage (a Gatehouse extension): metered counts of an instance and its sub-instances
        route('GET', `${F}/usage`, 'folders', 'usage'),
      ]
    : []),
]);

/** The families that serve HTTP routes, in table order. */
export function httpFamilies(): Family[] {
  return [...new Set(ROUTES.map((r) => r.family))];
}

/** API Gateway route key of a row (`GET /api/sysinfo`, or `$default`; the shared one of a row with `gateway`). */
export function routeKey(r: Route): string {
  if (r.gateway) return r.gateway;
  return r.path === '$default' ? '$default' : `${r.method} ${r.path}`;
}

/** WebSocket API route keys, all served by the `websocket` family. */
export const WEBSOCKET_ROUTES: readonly string[] = ['$connect', '$disconnect', '$default'];
