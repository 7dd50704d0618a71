/**
 * People family: the person collection (cards are saved with the person; `<person>/cards` changes
 * one card), the lookup by card, its connections (access levels, scheduled access levels, badge
 * type) and the access level PUT and scheduled access level batch that field clients use.
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import type { Operation } from '#shared/http/operation-contract.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';
import {
  connectOperation,
  disconnectOperation,
  listConnectionsOperation,
  putPersonAccessLevel,
  putScheduledAccessLevelBatch,
} from '#shared/relations/relation-operations.ts';

const objects = objectOperations(relationHooks);

/**
 * `PUT people/<key>/accesslevels` connects an access level, `PUT people/<key>/scheduledaccesslevelbatch`
 * replaces the scheduled ones; other PUT links are the generic ones.
 */
const putLink: Operation = (req, deps) => {
  if (req.params.link === 'accesslevels') return putPersonAccessLevel(req, deps);
  if (req.params.link === 'scheduledaccesslevelbatch') return putScheduledAccessLevelBatch(req, deps);
  return objects.collection.putLink!(req, deps);
};

export const operations = {
  ...objects.collection,
  ...objects.people,
  putLink,
  connect: connectOperation,
  listConnections: listConnectionsOperation,
  disconnect: disconnectOperation,
};

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'people', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
