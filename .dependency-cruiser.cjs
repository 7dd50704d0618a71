/* global module -- CommonJS: dependency-cruiser reads this file with require() */
/**
 * Which way imports point (issue #35), checked by `npm run depcruise` inside `npm test`.
 *
 * The layers, lowest first:
 *   shared/model   the stored objects, collections, claims and schemas: types and pure functions
 *   shared/auth    who calls (principal, role), tokens and keys
 *   shared/db      the single table: items, keys, reads and writes
 *   shared/query   the query language (parser, engine, regex, pacing), used by search and events
 *   shared/http    the pipeline and the operation contract
 *   domain folders (objects, relations, events, search, live, usage, notify, docs, access, scim); live/ holds the
 *   fan-out and topics and one folder per channel (websocket/, mqtt/, webhooks/)
 *   functions/*    one Lambda per family; local/ runs the same handlers; infra/ deploys them
 *   bench, test    use anything
 *
 * Every import counts, `import type` and `import()` included: a cycle of types only changes no
 * load order and no bundle, but it still ties two modules that can then only be read together.
 */
const DOMAIN = '(objects|relations|events|search|live|usage|notify|docs|access|scim)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A module must not import (statically or with import()) anything that imports it back: lazily loaded ' +
        'modules take what they share with their loader from a third module (see live/webhooks/webhook-scope.ts, ' +
        'query/shape.ts, live/topics.ts), or hold it themselves for the loader to import as a type ' +
        '(http/idempotent-call.ts, live/websocket/management-post.ts, events/audit-event.ts).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-not-to-outer',
      severity: 'error',
      comment:
        'shared/ is what the functions, the local runtime and the stack build on: it imports none of them, ' +
        'nor the benchmark, the OpenAPI writer or the tests.',
      from: { path: '^shared/' },
      to: { path: '^(local|functions|infra|bench|test|openapi|clients)/' },
    },
    {
      name: 'model-is-the-bottom',
      severity: 'error',
      comment:
        'shared/model (stored-object types, collections, claims, placement, schemas) imports nothing else of ' +
        'shared/: every layer above names its types without pulling in the repository or the pipeline.',
      from: { path: '^shared/model/' },
      to: { path: '^shared/', pathNot: '^shared/model/' },
    },
    {
      name: 'db-not-to-domain',
      severity: 'error',
      comment:
        'shared/db stores and reads items; it imports no domain folder, no pipeline and no query language. ' +
        'Of the layers below it, model/ freely and auth/ for types only.',
      from: { path: '^shared/db/' },
      to: { path: `^shared/(${DOMAIN.slice(1, -1)}|http|query)/` },
    },
    {
      name: 'db-takes-auth-types-only',
      severity: 'error',
      comment:
        'The db layer names the principal and role types of auth/ but runs none of its code, with one ' +
        'exception: webhook secrets are sealed (auth/secret-box.ts) where webhooks-repo.ts writes them.',
      from: { path: '^shared/db/', pathNot: '^shared/db/webhooks-repo[.]ts$' },
      to: { path: '^shared/auth/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'auth-not-to-http-or-domain',
      severity: 'error',
      comment:
        'shared/auth (principals, tokens, keys) reads the store through db/ and imports neither the pipeline ' +
        'nor any domain folder: the pipeline and the domain name its principal and role types, not the reverse.',
      from: { path: '^shared/auth/' },
      to: { path: `^shared/(${DOMAIN.slice(1, -1)}|http|query)/` },
    },
    {
      name: 'query-not-to-domain',
      severity: 'error',
      comment:
        'The query language is its own layer, used by search and events: it imports neither of them, nor ' +
        'any other domain folder, the pipeline or the db layer.',
      from: { path: '^shared/query/' },
      to: { path: `^shared/(${DOMAIN.slice(1, -1)}|http|db|auth)/` },
    },
    {
      name: 'events-not-to-search',
      severity: 'error',
      comment: 'search renders with events/ (its documents are event-shaped); events never import search.',
      from: { path: '^shared/events/' },
      to: { path: '^shared/search/' },
    },
    {
      name: 'live-channels-apart',
      severity: 'error',
      comment:
        'Each live channel is a folder of shared/live/ (websocket/, mqtt/, webhooks/): it builds on what the channels ' +
        'share beside them (topics.ts: topics, the scope rule, the event the fan-out hands over; endpoint-client.ts) ' +
        'and never imports another channel, so a new channel is a new sibling folder.',
      from: { path: '^shared/live/(websocket|mqtt|webhooks)/' },
      to: { path: '^shared/live/(websocket|mqtt|webhooks)/', pathNot: '^shared/live/$1/' },
    },
    {
      name: 'http-not-to-domain',
      severity: 'error',
      comment:
        'The pipeline runs operations it is given; it imports no domain folder. What a domain adds to every ' +
        'request (usage metering: usage/middleware.ts) is a middleware the families pass to makeHandler.',
      from: { path: '^shared/http/' },
      to: { path: `^shared/${DOMAIN}/` },
    },
    {
      name: 'functions-not-to-local',
      severity: 'error',
      comment: 'A function is deployed alone: it builds on shared/ and never on the local runtime.',
      from: { path: '^functions/' },
      to: { path: '^(local|infra|bench|test|openapi)/' },
    },
    {
      name: 'functions-not-to-each-other',
      severity: 'error',
      comment: 'One Lambda per family: a family importing another would bundle that family’s code into its own.',
      from: { path: '^functions/([^/]+)/' },
      to: { path: '^functions/', pathNot: '^functions/$1/' },
    },
    {
      name: 'console-page-stands-alone',
      severity: 'error',
      comment:
        'The console page runs in the browser and talks to Gatehouse over its public API only, like any client: ' +
        'it imports none of the service’s code (which is Node’s), only its own modules and browser packages.',
      from: { path: '^console/src/' },
      to: { path: '^(shared|functions|local|infra|bench|test|openapi|clients)/' },
    },
    {
      name: 'infra-not-to-bench',
      severity: 'error',
      comment:
        'The stack deploys the service; it does not import the benchmark, the local runtime or the tests ' +
        '(the list prices both the stack and the benchmark use are infra/prices.ts).',
      from: { path: '^infra/' },
      to: { path: '^(bench|local|test)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    // `import type` counts: the cycles and the layer rules hold for types too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
